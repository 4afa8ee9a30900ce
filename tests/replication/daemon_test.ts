/**
 * The real daemon (`main.ts`) as master and replica, driven the way a sandbox is: files on
 * disk, `chronicle sync --wait` before reading, `chronicle conflicts` afterwards.
 */
import { put } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { assert, assertEquals } from "./_assert.ts";
import { waitForSameTrees, withDirs } from "./_harness.ts";
import { runChronicle } from "../_helpers/processes.ts";
import { MASS_REMOVALS, REMOVAL_HOLD_MAX_MS } from "../../lib/replication/removal_hold.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

function daemon(args: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-check", `${ROOT}main.ts`, ...args, "--quiet"],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
}

async function stop(child: Deno.ChildProcess): Promise<string> {
  try {
    child.kill("SIGTERM");
  } catch { /* already gone */ }
  const output = await child.output();
  return new TextDecoder().decode(output.stderr);
}

/** Runs one of this task's CLI commands in a child process, as `chronicle` would. */
async function cli(command: "syncWaitCommand" | "conflictsCommand", args: string[]) {
  const module = `${ROOT}lib/cli/replication_commands.ts`;
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `import { ${command} } from "${module}"; Deno.exit(await ${command}(${
        JSON.stringify(args)
      }));`,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: output.code,
    stdout: new TextDecoder().decode(output.stdout),
    stderr: new TextDecoder().decode(output.stderr),
  };
}

Deno.test("main.ts master and replica: sync --wait, write-back and conflicts", async () => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    await put(m, "a.txt", "from the agent");
    const socket = `${base}/m.sock`;
    const master = daemon([m, "--replication", "--socket", socket]);
    const replica = daemon([r, "--connect", socket, "--sandbox-id", "sb-daemon"]);
    let logs = "";
    try {
      // sync --wait retries until the replica is up and holds what the master held.
      const syncWaitArgs = ["--wait", "-C", r, "--timeout", "20", "--json"];
      const waited = await waitFor("sync --wait to succeed once the daemons are up", async () => {
        const result = await cli("syncWaitCommand", syncWaitArgs);
        if (result.code !== 0) throw new Error(result.stderr); // the daemon is starting
        return result;
      }, { timeoutMs: 60_000, intervalMs: 100 });
      assertEquals(waited.code, 0, waited.stderr);
      assertEquals(JSON.parse(waited.stdout).satisfied, true);
      assertEquals(await Deno.readTextFile(`${r}/a.txt`), "from the agent");
      await put(r, "built.txt", "made in the sandbox");
      await waitForSameTrees([m, r]);
      const listed = await cli("conflictsCommand", ["-C", r, "--json"]);
      assertEquals(listed.code, 0, listed.stderr);
      assertEquals(JSON.parse(listed.stdout), {
        conflicts: [],
        refused: [],
        conflicts_total: 0,
        refused_total: 0,
      });
      const usage = await cli("syncWaitCommand", ["-C", r]);
      assertEquals(usage.code !== 0, true);
    } finally {
      logs += await stop(replica);
      logs += await stop(master);
    }
    assert(!/ ERROR /.test(logs), logs);
  });
});

/** What a test of a replica whose folder it removes is given (see `withRemovedReplica`). */
interface RemovedReplica {
  /** Whether the replica recorded `path` removed (its history's last iteration). */
  removed(path: string): Promise<boolean>;
  /** Waits for the replica to stop by itself (60 s at most): its exit code and log. */
  stopped(): Promise<{ code: number; log: string }>;
}

/**
 * Runs `work` with a master holding `paths` and a replica of it synced, both `main.ts`
 * daemons, for a test that removes the replica's folder; both are stopped after.
 */
async function withRemovedReplica(
  paths: readonly string[],
  work: (dirs: { m: string; r: string }, replica: RemovedReplica) => Promise<void>,
): Promise<void> {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    for (const path of paths) await put(m, path, `file ${path}`);
    const socket = `${base}/m.sock`;
    const master = daemon([m, "--replication", "--socket", socket]);
    const replica = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--no-check", `${ROOT}main.ts`, r, "--connect", socket],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const ended = replica.output();
    try {
      await waitForSameTrees([m, r], { timeoutMs: 120_000 });
      await work({ m, r }, {
        removed: async (path) => {
          const { stdout } = await runChronicle(["history", path, "-C", r, "--json"]);
          return (JSON.parse(stdout) as { deleted: boolean }[]).at(-1)?.deleted === true;
        },
        stopped: async () => {
          let timer: ReturnType<typeof setTimeout> | undefined;
          const { code, stderr } = await Promise.race([
            ended,
            new Promise<never>((_, reject) => {
              timer = setTimeout(() => reject(new Error("the replica did not stop")), 60_000);
            }),
          ]).finally(() => clearTimeout(timer));
          return { code, log: new TextDecoder().decode(stderr) };
        },
      });
    } finally {
      try {
        replica.kill("SIGKILL");
      } catch { /* already gone */ }
      await ended.catch(() => {});
      await stop(master);
    }
  });
}

/** The paths of the master's files that are still there. */
function keptOnMaster(m: string, paths: readonly string[]): string[] {
  return paths.filter((path) => {
    try {
      return Deno.statSync(`${m}/${path}`).isFile;
    } catch {
      return false;
    }
  });
}

Deno.test("main.ts replica whose folder is removed under it stops, and the master keeps every file", async () => {
  const paths = Array.from({ length: 200 }, (_, i) => `d${i % 10}/f${i}.txt`);
  await withRemovedReplica(paths, async ({ m, r }, replica) => {
    // `rm -rf` of the sandbox's folder, its data folder with it: no edit to write back.
    // A slow one: the files of one folder go first, and the replica records their
    // removals (as on a busy machine) before the rest of the folder goes.
    await Deno.remove(`${r}/d0`, { recursive: true });
    await waitFor(
      "the replica to record the removals",
      async () => await replica.removed("d0/f0.txt") && await replica.removed("d0/f190.txt"),
    );
    await Deno.remove(r, { recursive: true });
    // It stops by itself (its control socket went with the folder).
    const { code, log } = await replica.stopped();
    assertEquals(code, 1, log);
    // Whichever it found gone first: the data folder, or the workspace's.
    assert(
      new RegExp(
        `the (workspace|data) folder "${r}(/\\.chronicle)?" was removed while Chronicle ran; stopping`,
      )
        .test(log),
      log,
    );
    // It recorded no removal, so it sent none: the master holds every file.
    assertEquals(keptOnMaster(m, paths).length, paths.length);
  });
});

Deno.test("main.ts replica whose folder an rm -rf longer than the removals' hold removes sends none of them", async () => {
  const paths = Array.from({ length: MASS_REMOVALS + 1_000 }, (_, i) => `d${i % 30}/f${i}.txt`);
  await withRemovedReplica(paths, async ({ m, r }, replica) => {
    // An rm -rf of a large tree on a slow disk: a mass of files at once, recorded by the
    // replica, then one at a time for longer than removals are usually held, then the rest
    // with the data folder. Had the replica sent the first ones, the master would lack them.
    const burst = MASS_REMOVALS + 100;
    for (const path of paths.slice(0, burst)) Deno.removeSync(`${r}/${path}`);
    await waitFor(
      "the replica to record the first removals",
      async () => await replica.removed(paths[0]!) && await replica.removed(paths[burst - 1]!),
      { timeoutMs: 60_000 },
    );
    const recordedAt = Date.now();
    for (let next = burst; Date.now() - recordedAt < REMOVAL_HOLD_MAX_MS + 2_000; next++) {
      Deno.removeSync(`${r}/${paths[next]!}`);
      // The pace of a slow rm (never quiet for a second), not a wait for anything.
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await Deno.remove(r, { recursive: true });
    const { code, log } = await replica.stopped();
    assertEquals(code, 1, log);
    assertEquals(keptOnMaster(m, paths).length, paths.length);
  });
});

Deno.test("main.ts replica not ready says what it waits for: its master, and why it is not reached", async () => {
  await withDirs(["r"], async ({ base, r }) => {
    const socket = `${base}/no-master.sock`;
    const replica = daemon([r, "--connect", socket]);
    try {
      const said = await waitFor("health --ready to say what it waits for", async () => {
        const run = await runChronicle(["health", "--ready", "-C", r]);
        return run.stderr.includes("(last attempt:") ? run : undefined;
      }, { timeoutMs: 60_000, intervalMs: 200 });
      assertEquals(said.code, 1);
      assert(
        said.stderr.includes(
          `is not ready yet: it waits for a connection to the master at unix:${socket}`,
        ),
        said.stderr,
      );
    } finally {
      await stop(replica);
    }
  });
});
