import { deepStrictEqual as assertEquals, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { Cas } from "../../lib/cas/mod.ts";
import { S_IFLNK, S_IFREG, Store } from "../../lib/store/mod.ts";
import { runChronicle, type RunResult } from "../_helpers/processes.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

const T2020 = Date.UTC(2020, 0, 1, 0, 0, 0);
const T2021 = Date.UTC(2021, 0, 1, 0, 0, 0);
const T2022 = Date.UTC(2022, 0, 1, 0, 0, 0);
/** Changes of c.txt after the first three, so `log` has more than its default 50. */
const MANY = 60;

/**
 * A workspace whose store holds a.txt (2020, changed 2022), b.txt (2021) and many c.txt;
 * with `more`, then a link and a file of 1.5 KiB.
 */
async function withHistory(fn: (root: string) => Promise<void>, more = false): Promise<void> {
  await withTempDir(async (root) => {
    await Deno.mkdir(join(root, ".chronicle"));
    const store = Store.open(join(root, ".chronicle", "chronicle.db"));
    const cas = await Cas.open(join(root, ".chronicle", "cas"), { db: store.db });
    try {
      const put = async (path: string, text: string, timestamp: number, mode = S_IFREG | 0o644) => {
        const stored = await cas.putBytes(new TextEncoder().encode(text));
        store.record([{
          path,
          hash: stored.hash,
          size: stored.size,
          mode,
          deleted: false,
          origin: "local",
          timestamp,
        }]);
      };
      await put("a.txt", "one", T2020);
      await put("b.txt", "two", T2021);
      await put("a.txt", "three", T2022);
      for (let i = 0; i < MANY; i++) await put("c.txt", `c${i}`, T2022 + 1000 * (i + 1));
      if (more) {
        // A link (its content is its target) and a file of 1.5 KiB.
        await put("d-link", "a.txt", T2022 + 1000 * (MANY + 1), S_IFLNK | 0o777);
        await put("e.bin", "x".repeat(1536), T2022 + 1000 * (MANY + 2));
      }
    } finally {
      store.close();
    }
    await fn(root);
  }, "chronicle-history-out-");
}

/** Runs a command in `root`, in Tokyo time (UTC+9, no daylight saving) to see local times. */
function cli(root: string, ...args: string[]): Promise<RunResult> {
  return runChronicle(args, { cwd: root, env: { TZ: "Asia/Tokyo" } });
}

function check(run: RunResult, code: number): string[] {
  strictEqual(run.code, code, `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
  return run.stdout.split("\n").filter((line) => line !== "");
}

Deno.test("ls and history print a header and local times; ls --at takes a sequence or a time", async (t) => {
  await withHistory(async (root) => {
    await t.step("ls: header, then one row per file with its local time", async () => {
      const lines = check(await cli(root, "ls"), 0);
      assertEquals(lines[0]!.split(/\s+/), ["MODE", "SIZE", "ITER", "MODIFIED", "PATH"]);
      ok(/^644\s+5 bytes\s+#2\s+2022-01-01 09:00:00\s+a\.txt$/.test(lines[1]!), lines.join("\n"));
      strictEqual(lines.length, 4);
    });
    const table = [
      { description: "a sequence", input: "2", expected: ["a.txt #1", "b.txt #1"] },
      { description: "a date", input: "2020-06-01", expected: ["a.txt #1"] },
      { description: "a time", input: "2021-01-01T00:00:00Z", expected: ["a.txt #1", "b.txt #1"] },
      { description: "before anything", input: "2019-01-01", expected: [] },
      { description: "the newest sequence", input: String(3 + MANY), expected: null },
    ];
    for (const { description, input, expected } of table) {
      await t.step(`ls --at ${description}`, async () => {
        const run = await cli(root, "ls", "--at", input, "--json");
        const listed = JSON.parse(check(run, 0).join("\n")) as {
          path: string;
          iteration: number;
        }[];
        const seen = listed.map((entry) => `${entry.path} #${entry.iteration}`);
        assertEquals(seen, expected ?? ["a.txt #2", "b.txt #1", `c.txt #${MANY}`]);
      });
    }
    await t.step("ls --at beyond the newest sequence is refused, not shown as now", async () => {
      const run = await cli(root, "ls", "--at", "999");
      check(run, 1);
      strictEqual(run.stderr.trim(), `error: Sequence 999 is beyond the newest, ${3 + MANY}`);
    });
    await t.step("ls --at that is no sequence or time is bad usage", async () => {
      const run = await cli(root, "ls", "--at", "yesterday-ish");
      check(run, 2);
      ok(run.stderr.startsWith('Invalid --at "yesterday-ish"'), run.stderr);
    });
    await t.step("ls of an empty time says so", async () => {
      assertEquals(check(await cli(root, "ls", "--at", "2019-01-01"), 0), ["no files"]);
    });
    await t.step("history: header and rows in local time", async () => {
      const lines = check(await cli(root, "history", "a.txt"), 0);
      assertEquals(lines[0]!.split(/\s+/), ["ITER", "TIME", "SIZE", "HASH", "ORIGIN", "SEQ"]);
      strictEqual(lines.length, 3);
      ok(lines.some((line) => line.includes("2020-01-01 09:00:00")), lines.join("\n"));
    });
    await t.step("JSON keeps UTC epoch times", async () => {
      const run = await cli(root, "history", "a.txt", "--json");
      const entries = JSON.parse(check(run, 0).join("\n")) as { timestamp: number }[];
      assertEquals(entries.map((entry) => entry.timestamp).sort(), [T2020, T2022]);
    });
  });
});

Deno.test("log shows the last 50 by default, --limit N or --all for more", async (t) => {
  await withHistory(async (root) => {
    const total = 3 + MANY;
    await t.step("default: a note, a header, the newest 50, newest last", async () => {
      const lines = check(await cli(root, "log"), 0);
      strictEqual(lines[0], "the last 50 changes (--all or --limit N for more)");
      assertEquals(lines[1]!.split(/\s+/), ["SEQ", "TIME", "ITER", "ORIGIN", "PATH"]);
      strictEqual(lines.length, 52);
      ok(lines[2]!.startsWith(`${total - 49} `), lines[2]);
      ok(lines.at(-1)!.startsWith(`${total} `), lines.at(-1));
    });
    const table = [
      { description: "--limit 3", input: ["--limit", "3"], expected: [total - 2, total] },
      { description: "--all", input: ["--all"], expected: [1, total] },
      {
        description: "--since and --limit",
        input: ["--since", "1", "--limit", "2"],
        expected: [total - 1, total],
      },
      {
        description: "--since near the end",
        input: ["--since", String(total - 2)],
        expected: [total - 1, total],
      },
    ];
    for (const { description, input, expected } of table) {
      await t.step(description, async () => {
        const run = await cli(root, "log", ...input, "--json");
        const changes = JSON.parse(check(run, 0).join("\n")) as { sequence: number }[];
        assertEquals([changes[0]!.sequence, changes.at(-1)!.sequence], expected);
        strictEqual(changes.length, expected[1]! - expected[0]! + 1);
      });
    }
    await t.step("--all with --limit is bad usage", async () => {
      check(await cli(root, "log", "--all", "--limit", "3"), 2);
    });
  });
});

Deno.test("ls shows sizes for people and marks links as ls -F does; --json keeps bytes and modes", async () => {
  await withHistory(async (root) => {
    const lines = check(await cli(root, "ls"), 0);
    ok(/^777\s+5 bytes\s+#1\s+.*\s+d-link@$/.test(lines[4]!), lines.join("\n"));
    ok(/^644\s+1\.5 KiB\s+#1\s+.*\s+e\.bin$/.test(lines[5]!), lines.join("\n"));
    const json = JSON.parse(check(await cli(root, "ls", "--json"), 0).join("\n"));
    const eBin = json.find((entry: { path: string }) => entry.path === "e.bin");
    strictEqual(eBin.size, 1536);
    const history = check(await cli(root, "history", "e.bin"), 0);
    ok(/\s1\.5 KiB\s/.test(history[1]!), history.join("\n"));
  }, true);
});
