import { deepStrictEqual as assertEquals, ok, strictEqual, throws } from "node:assert/strict";
import { COMMANDS } from "../../lib/cli/commands.ts";
import { renderCompletion, SHELLS } from "../../lib/cli/completions.ts";
import { UsageError } from "../../lib/cli/errors.ts";
import { helpCommand, unknownCommand } from "../../lib/cli/help_command.ts";
import { renderCommandHelp, renderTopHelp } from "../../lib/cli/help.ts";
import { nearestWord } from "../../lib/cli/suggest.ts";
import { USAGE } from "../../lib/cli/usage.ts";
import { OPTION_HELP, OPTIONS } from "../../lib/config/mod.ts";
import { captured } from "./_captured.ts";

Deno.test("every command answers --help (and -h) with its own help from the command table", async (t) => {
  for (const [name, spec] of Object.entries(COMMANDS)) {
    await t.step(name, async () => {
      const { code, out, err } = await captured([name, "--help"]);
      strictEqual(code, 0, err);
      strictEqual(out, renderCommandHelp(name, spec));
      ok(out.startsWith(`chronicle ${name}: ${spec.summary}\n`), out);
      for (const usage of spec.usage) ok(out.includes(`  chronicle ${usage}`), usage);
      for (const [spelling] of spec.options ?? []) ok(out.includes(spelling), spelling);
      if (spec.locate) ok(out.includes("-C WORKSPACE"), "locate options");
      if (spec.json) ok(out.includes("--json"), "--json");
      strictEqual((await captured([name, "extra", "-h"])).out, out, "-h after other arguments");
    });
  }
});

Deno.test("the top-level help names every option, every command, and the options people missed", () => {
  strictEqual(USAGE, renderTopHelp(COMMANDS));
  for (const option of OPTIONS) ok(USAGE.includes(`--${option.flag}`), option.flag);
  for (const name of Object.keys(COMMANDS)) ok(new RegExp(`^  ${name} `, "m").test(USAGE), name);
  for (
    const word of [
      "health",
      "--heartbeat-ms",
      "--debounce-ms",
      "--max-snapshots",
      "--max-age-days",
      "--max-writeback-bytes",
      "--no-snapshots",
      "--config FILE",
      "stop",
      "--yes",
    ]
  ) ok(USAGE.includes(word), word);
  ok(renderCommandHelp("restore", COMMANDS.restore!).includes("-y, --yes"), "restore --yes");
});

Deno.test("the top-level help describes every option the daemon accepts, with a placeholder for each value", async (t) => {
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  for (const option of OPTIONS) {
    await t.step(`--${option.flag}`, () => {
      const help = OPTION_HELP[option.flag];
      ok(help, `--${option.flag} has no entry in OPTION_HELP`);
      ok(help.help.trim().length > 0, `--${option.flag} has an empty description`);
      strictEqual(
        help.value === undefined,
        option.kind === "boolean",
        `--${option.flag}: a value needs a placeholder, a switch has none`,
      );
      const spelling = `--${option.flag}${help.value ? ` ${help.value}` : ""}`;
      ok(
        new RegExp(`^  (-\\w, )?${escape(spelling)}\\s+${escape(help.help)}$`, "m").test(USAGE),
        `--help lacks "${spelling}  ${help.help}"`,
      );
    });
  }
  await t.step("no help for an option that does not exist", () => {
    const flags = new Set(OPTIONS.map((option) => option.flag));
    assertEquals(Object.keys(OPTION_HELP).filter((flag) => !flags.has(flag)), []);
  });
});

Deno.test("a mistyped command gets the nearest command, or is refused with exit 2", async (t) => {
  const table = [
    { description: "swapped letters", input: "stauts", expected: "status" },
    { description: "one letter off", input: "histroy", expected: "history" },
    { description: "short word, one edit", input: "lss", expected: "ls" },
    { description: "a prefix", input: "check", expected: "checkpoint" },
    { description: "capitals", input: "STATUS", expected: "status" },
    { description: "nothing near", input: "frobnicate", expected: undefined },
    { description: "too short to guess", input: "q", expected: undefined },
  ];
  const names = Object.keys(COMMANDS);
  for (const { description, input, expected } of table) {
    await t.step(description, () => strictEqual(nearestWord(input, names), expected));
  }
  await t.step("main: the suggestion, exit 2, nothing started", async () => {
    const { code, err } = await captured(["stauts"]);
    strictEqual(code, 2);
    strictEqual(err.split("\n")[0], 'Unknown command "stauts": did you mean "status"?');
  });
  await t.step("help COMMAND for an unknown command", () => {
    throws(() => helpCommand(["stauts"], COMMANDS), UsageError);
    strictEqual(unknownCommand("zzz", COMMANDS).message.startsWith('Unknown command "zzz"'), true);
  });
});

/** Asks the bash completion what `chronicle WORDS…` completes to (the last word is typed). */
async function bashComplete(words: string[]): Promise<string[]> {
  const script = renderCompletion("bash", COMMANDS);
  const line = ["chronicle", ...words].map((w) => `'${w}'`).join(" ");
  const program = `${script}
COMP_WORDS=(${line}); COMP_CWORD=${words.length}; _chronicle; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const { code, stdout, stderr } = await new Deno.Command("bash", {
    args: ["-c", program],
    cwd: Deno.makeTempDirSync(),
    stdout: "piped",
    stderr: "piped",
  }).output();
  strictEqual(code, 0, new TextDecoder().decode(stderr));
  return new TextDecoder().decode(stdout).split("\n").filter((w) => w !== "").sort();
}

Deno.test("bash completion, run in bash, completes commands, subcommands and flags", async (t) => {
  const table = [
    { description: "a command", input: ["sta"], expected: ["status"] },
    {
      description: "commands sharing a prefix",
      input: ["sn"],
      expected: ["snapshot", "snapshots"],
    },
    { description: "a daemon option", input: ["--heartb"], expected: ["--heartbeat-ms"] },
    { description: "a command's flag", input: ["ls", "--a"], expected: ["--at"] },
    { description: "a subcommand", input: ["snapshot", "write"], expected: ["write_file"] },
    { description: "a shell", input: ["completions", "f"], expected: ["fish"] },
    { description: "restore's --yes", input: ["restore", "--y"], expected: ["--yes"] },
  ];
  for (const { description, input, expected } of table) {
    await t.step(description, async () => assertEquals(await bashComplete(input), expected));
  }
});

Deno.test("every shell's completion script names every command", () => {
  for (const shell of SHELLS) {
    const script = renderCompletion(shell, COMMANDS);
    for (const name of Object.keys(COMMANDS)) ok(script.includes(name), `${shell}: ${name}`);
    ok(script.includes("heartbeat-ms"), `${shell}: daemon options`);
  }
});
