import nodeAssert from "node:assert/strict";
import { join } from "node:path";
import { Cas } from "../../lib/cas/mod.ts";
import { Store } from "../../lib/store/mod.ts";
import { runChronicle, type RunResult } from "../_helpers/processes.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

const SNAPSHOT_CLI = new URL("../snapshot/_cli_main.ts", import.meta.url).pathname;

/** Runs a snapshot command in a child process in `cwd`, outside any transaction. */
function chronicle(cwd: string, ...args: string[]): Promise<RunResult> {
  return runChronicle(args, {
    script: SNAPSHOT_CLI,
    cwd,
    env: { CHRONICLE_TXN: "", CHRONICLE_NO_SNAPSHOTS: "" },
  });
}

function expect(
  run: RunResult,
  code: number,
  text?: string | RegExp,
  where: "stdout" | "stderr" = "stdout",
) {
  const shown = `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`;
  nodeAssert.equal(run.code, code, shown);
  if (text !== undefined) {
    const matched = typeof text === "string" ? run[where].includes(text) : text.test(run[where]);
    nodeAssert.ok(matched, `expected ${where} to match ${text}\n${shown}`);
  }
}

function withWorkspace(fn: (root: string) => Promise<void>): Promise<void> {
  return withTempDir(async (temp) => {
    await Deno.mkdir(join(temp, ".chronicle"));
    Store.open(join(temp, ".chronicle", "chronicle.db")).close();
    await fn(temp);
  }, "chronicle-snapcli-");
}

Deno.test("snapshot, snapshots, diff, rollback and verify work from the command line", async () => {
  await withWorkspace(async (root) => {
    await Deno.mkdir(join(root, "sub"));
    await Deno.writeTextFile(join(root, "a.txt"), "good");
    const taken = await chronicle(
      join(root, "sub"),
      "snapshot",
      "write_file",
      "--path",
      "a.txt",
      "--json",
    );
    expect(taken, 0);
    const snap = JSON.parse(taken.stdout);
    nodeAssert.equal(snap.files[0].path, "a.txt");
    await Deno.writeTextFile(join(root, "a.txt"), "broken!");
    const prefix = snap.id.slice(0, 8);
    expect(await chronicle(root, "diff", prefix), 0, /modified\s+a\.txt\s+4 bytes -> 7 bytes/);
    expect(
      await chronicle(root, "snapshots"),
      0,
      /#1\s+\S{8}\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+1 path\s+-\s+write_file: a\.txt/,
    );
    const rolled = await chronicle(root, "rollback", prefix);
    expect(rolled, 0, `rolled back snapshot ${snap.id}: 1 change`);
    nodeAssert.equal(await Deno.readTextFile(join(root, "a.txt")), "good");
    const undo = /undo with: chronicle rollback (\S+)/.exec(rolled.stdout)?.[1];
    nodeAssert.ok(undo);
    expect(await chronicle(root, "rollback", undo, "-C", root), 0);
    nodeAssert.equal(await Deno.readTextFile(join(root, "a.txt")), "broken!");
    expect(
      await chronicle(root, "verify"),
      0,
      "chain intact: 3 snapshots (#1 to #3), 2 content objects verified",
    );
    const json = JSON.parse((await chronicle(root, "verify", "--json")).stdout);
    nodeAssert.equal(json.ok, true);
  });
});

Deno.test("txn begin, snapshot --txn and txn rollback undo a group in one step", async () => {
  await withWorkspace(async (root) => {
    const begun = await chronicle(root, "txn", "begin");
    expect(begun, 0);
    const txn = begun.stdout.trim();
    nodeAssert.match(txn, /^[0-9a-f-]{36}$/);
    for (const name of ["x.txt", "y.txt"]) {
      expect(
        await chronicle(root, "snapshot", "write_file", "--path", name, "--txn", txn.slice(0, 6)),
        0,
        "in transaction",
      );
      await Deno.writeTextFile(join(root, name), name);
    }
    expect(await chronicle(root, "txn", "show", txn), 0, "transaction " + txn + ": active");
    expect(await chronicle(root, "txn", "rollback", txn), 0, "(2 snapshots): 2 changes");
    await nodeAssert.rejects(() => Deno.stat(join(root, "x.txt")), Deno.errors.NotFound);
    await nodeAssert.rejects(() => Deno.stat(join(root, "y.txt")), Deno.errors.NotFound);
    expect(
      await chronicle(root, "txn", "commit", txn),
      1,
      "it is rolled back, not active",
      "stderr",
    );
    expect(await chronicle(root, "txn", "list"), 0, "rolled_back");
  });
});

Deno.test("the snapshot commands give one-line errors and the right exit codes", async () => {
  await withWorkspace(async (root) => {
    const cases: Array<[string[], number, string]> = [
      [["rollback", "ffff"], 1, 'error: No snapshot has the ID "ffff"'],
      [["diff", "ab"], 1, 'error: Invalid snapshot ID "ab"'],
      [["snapshot", "write_file", "--path", "../x"], 1, "resolves outside the workspace"],
      [
        ["snapshot", "write_file", "--path", ".chronicle/chronicle.db"],
        1,
        "inside Chronicle's data folder",
      ],
      [["snapshot"], 2, "Usage: chronicle snapshot ACTION_TYPE --path P"],
      [
        ["snapshot", "write_file", "--path", "a", "--bogus"],
        2,
        "chronicle snapshot: Unknown option '--bogus'",
      ],
      [["txn", "frobnicate"], 2, "Usage: chronicle txn begin"],
      [
        ["snapshots", "--max-snapshots", "0"],
        2,
        '"max_snapshots" in flags must be a whole number from 1 to 1000000, not "0"',
      ],
      [["verify", "--config", join(root, "none.yaml")], 2, "no such file"],
      [["restore", "--to", "yesterday"], 2, 'Cannot read "yesterday"'],
    ];
    for (const [args, code, text] of cases) {
      const run = await chronicle(root, ...args);
      expect(run, code, text, "stderr");
      nodeAssert.equal(run.stderr.trim().split("\n").length, 1, `one line for ${args.join(" ")}`);
    }
    // A type that changes no files (or a typo) is refused, not silently accepted with exit 0.
    expect(
      await chronicle(root, "snapshot", "frobnicate", "--path", "a"),
      2,
      'Unknown action type "frobnicate": expected one of write_file,',
      "stderr",
    );
    expect(
      await chronicle(root, "snapshot", "write_file", "--path", "a", "--no-snapshots"),
      0,
      "no snapshot: off the record",
    );
    const outside = await Deno.makeTempDir();
    try {
      expect(
        await chronicle(outside, "snapshots"),
        1,
        "No Chronicle workspace here or above",
        "stderr",
      );
    } finally {
      await Deno.remove(outside);
    }
  });
});

Deno.test("verify exits 1 on a tampered chain and on a database it cannot read", async () => {
  await withWorkspace(async (root) => {
    await Deno.writeTextFile(join(root, "a.txt"), "a");
    expect(await chronicle(root, "snapshot", "write_file", "--path", "a.txt"), 0);
    const store = Store.open(join(root, ".chronicle", "chronicle.db"));
    store.db.exec("UPDATE snapshots SET summary = 'edited'");
    store.close();
    const tampered = await chronicle(root, "verify");
    expect(tampered, 1, "does not match its hash (edited)");
    nodeAssert.match(tampered.stderr, /error: integrity check failed: 1 problem/);
    await Deno.writeTextFile(
      join(root, ".chronicle", "chronicle.db"),
      "not a database at all, just text".repeat(100),
    );
    for (const suffix of ["-wal", "-shm"]) {
      await Deno.remove(join(root, ".chronicle", `chronicle.db${suffix}`)).catch(() => {});
    }
    expect(await chronicle(root, "verify"), 1, /^error: .*database/m, "stderr");
  });
});

Deno.test("config.yaml retention applies to commands", async () => {
  await withWorkspace(async (root) => {
    await Deno.writeTextFile(
      join(root, ".chronicle/config.yaml"),
      "chronicle:\n  max_snapshots: 2\n",
    );
    await Deno.writeTextFile(join(root, "a.txt"), "a");
    for (let i = 0; i < 3; i++) {
      expect(await chronicle(root, "snapshot", "write_file", "--path", "a.txt"), 0);
    }
    const list = JSON.parse((await chronicle(root, "snapshots", "--json")).stdout);
    nodeAssert.deepEqual(list.map((s: { number: number }) => s.number), [2, 3]);
    const more = JSON.parse(
      (await chronicle(root, "snapshots", "--json", "--max-snapshots", "5")).stdout,
    );
    nodeAssert.equal(more.length, 2);
    expect(await chronicle(root, "verify"), 0, "chain intact: 2 snapshots (#2 to #3)");
  });
});

Deno.test("restore --to shows its plan, needs --yes, and restores as new iterations", async () => {
  await withWorkspace(async (root) => {
    const store = Store.open(join(root, ".chronicle", "chronicle.db"));
    const cas = await Cas.open(join(root, ".chronicle", "cas"));
    const put = async (path: string, text: string) => {
      await Deno.writeTextFile(join(root, path), text);
      const stored = await cas.putFile(join(root, path));
      store.record([{
        path,
        hash: stored.hash,
        size: stored.size,
        mode: 0o100644,
        deleted: false,
      }]);
    };
    await put("a.txt", "one");
    const moment = store.sequence();
    await put("a.txt", "two");
    await put("b.txt", "later");
    store.close();
    const dry = await chronicle(root, "restore", "--to", String(moment), "--dry-run");
    expect(dry, 0, `restore to sequence ${moment}`);
    nodeAssert.match(dry.stdout, /write\s+a\.txt\s+3 bytes, mode 644/);
    nodeAssert.match(dry.stdout, /remove\s+b\.txt/);
    expect(await chronicle(root, "restore", "--to", String(moment)), 2, "add --yes", "stderr");
    nodeAssert.equal(await Deno.readTextFile(join(root, "a.txt")), "two");
    const done = await chronicle(root, "restore", "--to", String(moment), "--yes");
    expect(done, 0, "restored 2 paths to sequence 1");
    nodeAssert.equal(await Deno.readTextFile(join(root, "a.txt")), "one");
    await nodeAssert.rejects(() => Deno.stat(join(root, "b.txt")), Deno.errors.NotFound);
    const reopened = Store.open(join(root, ".chronicle", "chronicle.db"));
    try {
      nodeAssert.equal(reopened.latest("a.txt")?.iteration, 3);
      nodeAssert.equal(reopened.latest("b.txt")?.deleted, true);
    } finally {
      reopened.close();
    }
    const undo = /undo with: chronicle rollback (\S+)/.exec(done.stdout)?.[1];
    expect(await chronicle(root, "rollback", undo!), 0);
    nodeAssert.equal(await Deno.readTextFile(join(root, "b.txt")), "later");
    expect(
      await chronicle(root, "restore", "--to", "0", "a.txt", "--dry-run", "--json"),
      0,
      '"action":"remove"',
    );
  });
});
