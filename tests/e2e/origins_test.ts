/**
 * Origins end to end: a real master (`main.ts` with replication and REST) and a real replica
 * (`main.ts --connect`), each a child process. A local edit, a REST PUT, a rollback, a restore
 * and a replica write-back each add exactly one iteration on the master, with the origin that
 * tells what happened, seen through `chronicle history --json` and `GET /files/{path}/history`.
 */
import assert from "node:assert/strict";
import { type Child, freePort, runChronicle, spawnChronicle } from "../_helpers/processes.ts";
import { put, putAtomic, withTempDir } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";

const TOKEN = "origins-e2e-token";
const SANDBOX = "sb-origins";
/** Commands run as a person would, outside any transaction an outer shell may hold. */
const ENV = { CHRONICLE_TXN: "" };

interface Entry {
  iteration: number;
  origin: string;
  hash: string;
}

/** The master's history of `path` through the CLI (a reader beside the running master). */
async function cliHistory(root: string, path: string): Promise<Entry[]> {
  const result = await runChronicle(["history", path, "--json", "-C", root], { env: ENV });
  if (result.code !== 0) throw new Error(`chronicle history failed: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

/** The master's history of `path` over REST. */
async function restHistory(base: string, path: string): Promise<Entry[]> {
  const response = await fetch(`${base}/files/${path}/history`);
  if (response.status !== 200) {
    throw new Error(`GET history answered ${response.status}: ${await response.text()}`);
  }
  return await response.json();
}

const origins = (history: Entry[]) => history.map((entry) => entry.origin);

async function chronicle(root: string, args: string[]): Promise<string> {
  const result = await runChronicle([...args, "-C", root], { env: ENV });
  assert.equal(result.code, 0, `chronicle ${args.join(" ")}: ${result.stdout}${result.stderr}`);
  return result.stdout;
}

/** Reads a file, or null while it is missing (the replica may not hold it yet). */
async function readOrNull(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

Deno.test("master and replica: each change adds one iteration with its origin", () =>
  withTempDir(async (base) => {
    const m = `${base}/master`;
    const r = `${base}/replica`;
    await Deno.mkdir(m);
    await Deno.mkdir(r);
    await put(m, "notes.md", "v1");
    const port = freePort();
    const url = `http://127.0.0.1:${port}`;
    const socket = `${base}/m.sock`;
    const master = spawnChronicle([
      m,
      "--replication",
      "--socket",
      socket,
      "--http",
      `127.0.0.1:${port}`,
      "--token",
      TOKEN,
    ]);
    let replica: Child | undefined;
    try {
      await waitFor("the master's REST API", async () => {
        const response = await fetch(`${url}/ready`).catch(() => undefined);
        await response?.body?.cancel();
        return response?.status === 200;
      }, { timeoutMs: 30_000 });
      replica = spawnChronicle([r, "--connect", socket, "--sandbox-id", SANDBOX]);
      /** Waits until the replica holds `content` and has recorded it (it is visible first). */
      const replicaHolds = async (content: string) => {
        await waitFor(
          `the replica to hold ${JSON.stringify(content)}`,
          async () => await readOrNull(`${r}/notes.md`) === content,
          { timeoutMs: 30_000 },
        );
        const latest = (await cliHistory(m, "notes.md")).at(-1)!.hash;
        await waitFor(
          "the replica to record it",
          async () => (await cliHistory(r, "notes.md")).at(-1)?.hash === latest,
          { timeoutMs: 30_000 },
        );
      };
      await replicaHolds("v1");
      assert.deepEqual(origins(await cliHistory(m, "notes.md")), ["local"]);

      /** Runs `change`, then waits for the master to record one more iteration of notes.md. */
      const step = async (what: string, change: () => Promise<void>, expected: string) => {
        const before = (await cliHistory(m, "notes.md")).length;
        await change();
        const after = await waitFor(
          `${what} to be recorded`,
          async () => {
            const history = await cliHistory(m, "notes.md");
            return history.length > before ? history : undefined;
          },
          { timeoutMs: 30_000 },
        );
        assert.equal(after.length, before + 1, `${what}: ${JSON.stringify(after)}`);
        assert.equal(after.at(-1)!.iteration, before + 1, what);
        assert.equal(after.at(-1)!.origin, expected, what);
      };

      // Each write in one step: the empty file of a truncate, captured alone (or written
      // back), would be an iteration of its own, and the steps count them.
      await step("a local edit", () => putAtomic(m, "notes.md", "v2"), "local");
      await replicaHolds("v2");
      const snapshot = JSON.parse(
        await chronicle(m, ["snapshot", "write_file", "--path", "notes.md", "--json"]),
      ) as { id: string };

      await step("a REST PUT", async () => {
        const response = await fetch(`${url}/files/notes.md`, {
          method: "PUT",
          body: "v3",
          headers: { authorization: `Bearer ${TOKEN}` },
        });
        assert.equal(response.status, 201, await response.text());
      }, "api");
      await replicaHolds("v3");

      await step("a rollback", async () => {
        await chronicle(m, ["rollback", snapshot.id]);
      }, "rollback");
      assert.equal(await Deno.readTextFile(`${m}/notes.md`), "v2");
      await replicaHolds("v2");

      await step("a restore", async () => {
        await chronicle(m, ["restore", "notes.md", "--at", "3"]);
      }, "restore");
      assert.equal(await Deno.readTextFile(`${m}/notes.md`), "v3");
      await replicaHolds("v3");

      await step("a write-back", () => putAtomic(r, "notes.md", "v4 from the sandbox"), SANDBOX);
      assert.equal(await Deno.readTextFile(`${m}/notes.md`), "v4 from the sandbox");

      // A later write-back through the same connection: once the master holds it, anything
      // the replica would have echoed back of the steps above has arrived too.
      await putAtomic(r, "marker.txt", "flush");
      await waitFor("the marker's write-back", async () => {
        const history = await cliHistory(m, "marker.txt").catch(() => []);
        return history.length === 1;
      }, { timeoutMs: 30_000 });

      const expected = ["local", "local", "api", "rollback", "restore", SANDBOX];
      const cli = await cliHistory(m, "notes.md");
      assert.deepEqual(origins(cli), expected, JSON.stringify(cli));
      assert.deepEqual(cli.map((entry) => entry.iteration), [1, 2, 3, 4, 5, 6]);
      const rest = await restHistory(url, "notes.md");
      assert.deepEqual(origins(rest), expected, JSON.stringify(rest));
      assert.deepEqual(origins(await cliHistory(m, "marker.txt")), [SANDBOX]);
    } finally {
      const replicaCode: number | undefined = await replica?.stop();
      const masterCode = await master.stop();
      assert.equal(replicaCode ?? 0, 0, replica?.output());
      assert.equal(masterCode, 0, master.output());
    }
  }));
