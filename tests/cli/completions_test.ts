/**
 * The zsh and fish completion scripts, run in the real shells (`.ci/run` installs them):
 * fish answers `complete -C LINE`; zsh completes a typed line in an interactive shell on a
 * pseudo-terminal (zsh/zpty), as a person pressing Tab would.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { join } from "node:path";
import { renderCompletion } from "../../lib/cli/completions.ts";
import { COMMANDS } from "../../lib/cli/mod.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

async function run(program: string, args: string[]): Promise<string> {
  const { code, stdout, stderr } = await new Deno.Command(program, {
    args,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(stdout);
  ok(code === 0, `${program} exited ${code}: ${new TextDecoder().decode(stderr)}${text}`);
  return text;
}

/** What fish offers for `line` (candidates only, without their descriptions). */
function fishComplete(script: string, line: string): Promise<string[]> {
  return run("fish", ["--no-config", "-c", `source ${script}; complete -C${JSON.stringify(line)}`])
    .then((out) => out.split("\n").filter((l) => l !== "").map((l) => l.split("\t")[0]!).sort());
}

/**
 * The line zsh shows after `line` is typed and Tab pressed once, in an interactive zsh with
 * the completion loaded (menus off, so a unique match is inserted in place).
 */
function zshComplete(dir: string, script: string, line: string): Promise<string> {
  const driver = join(dir, "drive.zsh");
  Deno.writeTextFileSync(
    driver,
    `zmodload zsh/zpty
zpty z 'zsh -f -i'
zpty -w z 'PROMPT="> "; autoload -U compinit; compinit -u -D -d ${dir}/zcompdump; source ${script}; zstyle ":completion:*" menu no'
zpty -w z 'print READY'
out=""
until [[ $out == *$'\\n'READY* ]]; do zpty -r -t z chunk && out+=$chunk; done
# Each key goes in only once the shell has drawn what the keys before it did: with keys
# still waiting to be read (typeahead), zsh may skip a completion. A loaded machine can take
# seconds to answer: each wait lasts up to a minute.
line=${JSON.stringify(line)}
zpty -w -n z "$line"
out=""
for i in {1..1200}; do
  zpty -r -t z chunk && out+=$chunk
  [[ $out == *"\${line: -3}"* ]] && break
  sleep 0.05
done
zpty -w -n z $'\\t'
# The Tab's answer: the completed word, or a bell when nothing matches.
before=\${#out}
for i in {1..1200}; do
  zpty -r -t z chunk && out+=$chunk
  (( \${#out} > before )) && break
  sleep 0.05
done
# End the line with a marker, so the shell's redraw is read back whole.
zpty -w -n z '#END'
for i in {1..1200}; do
  zpty -r -t z chunk && out+=$chunk
  [[ $out == *'#END'* ]] && break
  sleep 0.05
done
zpty -d z
print -r -- "$out"
`,
  );
  return run("zsh", ["-f", driver]).then((out) => {
    const last = screenLines(out).filter((l) => l.includes("#END")).at(-1) ?? "";
    return last.slice(last.indexOf("chronicle"), last.indexOf("#END")).trimEnd();
  });
}

/**
 * The lines a terminal shows for `output`: carriage returns, backspaces and the cursor moves
 * and erasures zsh's line editor uses when it redraws a line (it may draw the whole prompt and
 * line again after a completion) are played as a terminal plays them; other control
 * sequences and bells are dropped.
 */
function screenLines(output: string): string[] {
  const ESC = "\u001b", BELL = "\u0007", BACKSPACE = "\u0008";
  const lines: string[] = [];
  let line: string[] = [];
  let column = 0;
  const controls = new RegExp(`${ESC}\\[([0-9;?]*)([a-zA-Z])|[\\s\\S]`, "g");
  for (const [piece, count, command] of output.matchAll(controls)) {
    const steps = Math.max(1, Number.parseInt(count ?? "", 10) || 1);
    if (command === "C") column += steps;
    else if (command === "D") column = Math.max(0, column - steps);
    else if (command === "K") line = line.slice(0, column);
    else if (command !== undefined || piece === BELL) continue;
    else if (piece === "\n") [lines[lines.length], line, column] = [line.join(""), [], 0];
    else if (piece === "\r") column = 0;
    else if (piece === BACKSPACE) column = Math.max(0, column - 1);
    else {
      while (line.length < column) line.push(" ");
      line[column++] = piece;
    }
  }
  return [...lines, line.join("")];
}

Deno.test("fish completion, run in fish, completes commands, subcommands and flags", () =>
  withTempDir(async (dir) => {
    const script = join(dir, "chronicle.fish");
    await Deno.writeTextFile(script, renderCompletion("fish", COMMANDS));
    const table = [
      { description: "a command", input: "chronicle sta", expected: ["status"] },
      {
        description: "commands sharing a prefix",
        input: "chronicle sn",
        expected: ["snapshot", "snapshots"],
      },
      { description: "a daemon option", input: "chronicle --heartb", expected: ["--heartbeat-ms"] },
      { description: "a command's flag", input: "chronicle ls --a", expected: ["--at"] },
      { description: "a subcommand", input: "chronicle snapshot write", expected: ["write_file"] },
    ];
    for (const { description, input, expected } of table) {
      assertEquals(await fishComplete(script, input), expected, description);
    }
  }));

Deno.test("zsh completion, run in an interactive zsh, completes commands and flags on Tab", () =>
  withTempDir(async (dir) => {
    const script = join(dir, "_chronicle");
    await Deno.writeTextFile(script, renderCompletion("zsh", COMMANDS));
    const table = [
      { description: "a command", input: "chronicle sta", expected: "chronicle status" },
      {
        description: "a daemon option",
        input: "chronicle --heartb",
        expected: "chronicle --heartbeat-ms",
      },
      {
        description: "a command's flag",
        input: "chronicle restore --y",
        expected: "chronicle restore --yes",
      },
    ];
    for (const { description, input, expected } of table) {
      assertEquals(await zshComplete(dir, script, input), expected, description);
    }
  }));
