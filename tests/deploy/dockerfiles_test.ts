import { deepStrictEqual as assertEquals, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { BINARY_PERMISSIONS, BINARY_V8_FLAGS } from "../../lib/cli/sync_commands.ts";
import {
  binaryPermissions,
  binaryV8Flags,
  compileTasks,
  permissionFlags,
  ROOT,
  v8Flags,
} from "./_deploy.ts";

/** One Dockerfile instruction, continuation lines joined, comments dropped. */
interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

function parseDockerfile(text: string): Instruction[][] {
  const instructions: Instruction[] = [];
  let pending = "";
  let start = 0;
  text.split("\n").forEach((raw, index) => {
    const line = raw.trim();
    if (pending === "" && (line === "" || line.startsWith("#"))) return;
    if (pending === "") start = index + 1;
    if (line.startsWith("#")) return; // a comment inside a continued instruction
    if (line.endsWith("\\")) {
      pending += line.slice(0, -1) + " ";
      return;
    }
    const whole = (pending + line).trim();
    pending = "";
    const match = /^(\S+)\s*(.*)$/s.exec(whole)!;
    instructions.push({ keyword: match[1]!.toUpperCase(), args: match[2]!, line: start });
  });
  ok(pending === "", "no dangling continuation");
  const stages: Instruction[][] = [[]];
  for (const instruction of instructions) {
    if (instruction.keyword === "FROM") stages.push([]);
    stages.at(-1)!.push(instruction);
  }
  return stages; // stages[0] holds the global ARGs
}

function jsonArgs(instruction: Instruction | undefined): string[] {
  ok(instruction, "instruction present");
  const value = JSON.parse(instruction.args.replace(/^(--\S+\s+)*(CMD\s+)?/, ""));
  ok(Array.isArray(value), `${instruction.keyword} is in exec (JSON) form`);
  return value as string[];
}

const ROLES = ["agent", "sandbox"] as const;

for (const role of ROLES) {
  Deno.test(`Dockerfile.${role} builds in Deno, runs without it, and behaves as a service`, async (t) => {
    const text = await Deno.readTextFile(join(ROOT, `Dockerfile.${role}`));
    const [globals, ...stages] = parseDockerfile(text);
    const final = stages.at(-1)!;
    const binary = `/usr/local/bin/chronicle-${role}`;
    const find = (keyword: string) => final.filter((i) => i.keyword === keyword);
    const one = (keyword: string) => {
      const found = find(keyword);
      strictEqual(found.length, 1, `one ${keyword} in the final stage`);
      return found[0]!;
    };

    await t.step(
      "multi-stage, compiling in the official Deno image of the CI's version",
      async () => {
        ok(stages.length >= 2);
        assertEquals(
          globals!.filter((i) => i.keyword === "ARG").map((i) => i.args),
          ["DENO_VERSION=2.9.6", "TARGETARCH=amd64"],
        );
        const ci = await Deno.readTextFile(join(ROOT, ".ci/run")).catch(() => "DENO_VERSION=2.9.6");
        ok(ci.includes("DENO_VERSION=2.9.6"), "the image's Deno is CI's Deno");
        const builds = stages.filter((stage) =>
          /denoland\/deno:\$\{DENO_VERSION\}/.test(stage[0]!.args)
        );
        strictEqual(builds.length, 1, "one stage from denoland/deno");
        ok(
          /^--platform=\$BUILDPLATFORM /.test(builds[0]![0]!.args),
          "compiles on the build platform",
        );
      },
    );

    await t.step("each target architecture runs its own compile task", () => {
      const tasks = compileTasks();
      for (const [arch, target] of [["amd64", "x86_64"], ["arm64", "aarch64"]]) {
        const stage = stages.find((s) => s[0]!.args.endsWith(`AS build-${arch}`));
        ok(stage, `a build-${arch} stage`);
        const run = stage.find((i) => i.keyword === "RUN")!.args;
        ok(run.includes(`deno task compile:${role}:${target}`), run);
        ok(run.includes(`dist/chronicle-${role}-${target}-linux`), "copies what the task wrote");
        ok(
          tasks.get(`compile:${role}:${target}`)?.includes(
            `--output dist/chronicle-${role}-${target}-linux`,
          ),
        );
      }
      ok(stages.some((s) => s[0]!.args === "build-${TARGETARCH} AS build"));
    });

    await t.step("the final stage has no Deno and no Node", () => {
      const base = final[0]!.args;
      ok(!/deno|node/i.test(base), `base image ${base}`);
      for (const instruction of final) {
        ok(
          !/\bdeno\b|\bnode\b|\bnpm\b/.test(instruction.args),
          `line ${instruction.line}: ${instruction.args}`,
        );
      }
      const copies = find("COPY").map((i) => i.args);
      ok(copies.includes(`--from=build /out/chronicle-${role} ${binary}`), copies.join("\n"));
    });

    await t.step("a non-root user", () => {
      const user = one("USER").args;
      ok(!/^(root|0)(:|$)/.test(user), `USER ${user}`);
    });

    await t.step("tini as PID 1 passing signals to the binary", () => {
      const entrypoint = jsonArgs(one("ENTRYPOINT"));
      assertEquals(entrypoint, ["/usr/bin/tini", "--", binary]);
      const tini = final.some((i) =>
        (i.keyword === "COPY" && i.args.includes("/usr/bin/tini")) ||
        (i.keyword === "RUN" && /apt-get install .*\btini=/.test(i.args))
      );
      ok(tini, "tini is installed or copied in");
      strictEqual(one("STOPSIGNAL").args, "SIGTERM");
    });

    await t.step("a HEALTHCHECK that the binary itself answers", () => {
      const healthcheck = one("HEALTHCHECK");
      ok(/--interval=\S+/.test(healthcheck.args) && /--timeout=\S+/.test(healthcheck.args));
      const command = JSON.parse(healthcheck.args.replace(/^.*?CMD\s+/, "")) as string[];
      assertEquals(command, [binary, "health", "--data-dir", "/data", "--quiet"]);
    });

    await t.step(
      "workspace and data as volumes, the data folder set, the WebSocket port exposed",
      () => {
        assertEquals(jsonArgs(one("VOLUME")), ["/workspace", "/data"]);
        strictEqual(one("EXPOSE").args, "3002");
        ok(find("ENV").some((i) => i.args === "CHRONICLE_DATA_DIR=/data"));
      },
    );

    await t.step("the default command fits the role", () => {
      const command = jsonArgs(one("CMD"));
      strictEqual(command[0], "/workspace");
      if (role === "agent") {
        ok(command.includes("--replication"));
        strictEqual(command[command.indexOf("--ws-listen") + 1], "0.0.0.0:3002");
      } else {
        ok(!command.includes("--ws-connect"), "the agent comes from CHRONICLE_AGENT_URL");
      }
    });
  });
}

Deno.test("the compile tasks grant the same explicit, minimal permissions and cover both targets", () => {
  const tasks = compileTasks();
  const expected = binaryPermissions();
  assertEquals(expected, [
    "--allow-read",
    "--allow-write",
    "--allow-net",
    "--allow-env",
    "--allow-run=sync",
  ]);
  // What a detached Chronicle started through `deno run` gets too, and `deno task start`.
  assertEquals(expected, [...BINARY_PERMISSIONS]);
  assertEquals(binaryV8Flags(), [...BINARY_V8_FLAGS]);
  const config = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json")));
  assertEquals(v8Flags(config.tasks.start), [...BINARY_V8_FLAGS], "deno task start");
  for (const role of ROLES) {
    for (const suffix of ["", ":x86_64", ":aarch64"]) {
      const name = `compile:${role}${suffix}`;
      const task = tasks.get(name);
      ok(task, `deno.json has ${name}`);
      ok(task.startsWith("deno compile "), name);
      assertEquals(permissionFlags(task), expected, name);
      assertEquals(v8Flags(task), [...BINARY_V8_FLAGS], `${name} embeds the binaries' V8 flags`);
      ok(!/\s(-A|--allow-all)\b/.test(task), `${name} does not grant everything`);
      ok(task.endsWith(` bin/${role}.ts`), `${name} compiles bin/${role}.ts`);
      const target = suffix === "" ? undefined : `${suffix.slice(1)}-unknown-linux-gnu`;
      if (target) ok(task.includes(`--target ${target}`), name);
      else ok(task.includes(`--output dist/chronicle-${role} `), name);
    }
  }
});

Deno.test(".dockerignore sends only what the images build from", async () => {
  const lines = (await Deno.readTextFile(join(ROOT, ".dockerignore"))).split("\n")
    .filter((line) => line !== "" && !line.startsWith("#"));
  assertEquals(lines, ["*", "!deno.json", "!deno.lock", "!main.ts", "!bin/", "!lib/", "!deploy/"]);
  for (const role of ROLES) {
    const text = await Deno.readTextFile(join(ROOT, `Dockerfile.${role}`));
    for (const match of text.matchAll(/^COPY (?!--from)(?:--\S+ )*(.+) \S+$/gm)) {
      for (const source of match[1]!.split(" ")) {
        ok(
          lines.some((line) => line === `!${source}` || source.startsWith(line.slice(1))),
          `${source} is sent`,
        );
      }
    }
  }
});
