import { ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { openDatabase } from "../../lib/db/mod.ts";
import { openReplicaTables } from "../../lib/replication/mod.ts";
import { runChronicle } from "../_helpers/processes.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

/** More conflicts than `chronicle conflicts` shows by default (1,000). */
const CONFLICTS = 1003;
const REFUSED = 3;
/** A refused write's reason as the replica stores it. */
const TOO_LARGE =
  "too large: 66.8 MiB (70000000 bytes), over this replica's write-back limit of 64 MiB (--max-writeback-bytes)";

/**
 * Runs `fn` on a data folder whose database `fill` wrote (its replica tables made first),
 * closed before `fn` runs.
 */
async function withDataFolder(
  fill: (db: DatabaseSync) => void,
  fn: (data: string) => Promise<void>,
): Promise<void> {
  await withTempDir(async (root) => {
    const data = join(root, ".chronicle");
    await Deno.mkdir(data);
    const db = openDatabase(join(data, "chronicle.db"));
    try {
      openReplicaTables(db);
      fill(db);
    } finally {
      db.close();
    }
    await fn(data);
  }, "chronicle-conflicts-");
}

/** A replica's database holding CONFLICTS conflicts and REFUSED refused writes. */
function withReplicaConflicts(fn: (data: string) => Promise<void>): Promise<void> {
  return withDataFolder((db) => {
    db.exec("BEGIN");
    const conflict = db.prepare(
      `INSERT INTO replica_conflicts (local_seq, path, operation, reason, kept_hash, kept_size,
         kept_mode, created_ms) VALUES (?, ?, 'write', 'changed on the master', NULL, 1, 420, ?)`,
    );
    for (let i = 1; i <= CONFLICTS; i++) conflict.run(i, `c${i}.txt`, Date.UTC(2026, 0, 1) + i);
    const refused = db.prepare(
      `INSERT INTO replica_journal (source_seq, path, operation, size, mode, deleted,
         master_seen, state, reason, created_ms) VALUES (?, ?, 'write', 1, 420, 0, 0, 'refused',
         ?, ?)`,
    );
    for (let i = 1; i <= REFUSED; i++) {
      refused.run(i, `r${i}.bin`, TOO_LARGE, Date.UTC(2026, 0, 1) + i);
    }
    db.exec("COMMIT");
  }, fn);
}

Deno.test("chronicle conflicts says when it shows only the newest, and --limit/--all choose how many", async (t) => {
  await withReplicaConflicts(async (data) => {
    const conflicts = (...args: string[]) =>
      runChronicle(["conflicts", "--data-dir", data, ...args]);
    await t.step("default: the newest 1,000, and a notice with the total", async () => {
      const { code, stdout, stderr } = await conflicts();
      strictEqual(code, 0, stderr);
      ok(stdout.includes(`c${CONFLICTS}.txt`), "the newest is shown");
      ok(!stdout.includes(" c3.txt "), "the oldest are not");
      ok(
        stdout.includes(
          `showing the newest 1000 of ${CONFLICTS} conflicts; use --limit ${CONFLICTS} or --all`,
        ),
        stdout.slice(-400),
      );
    });
    await t.step("--limit N: N of each list, with a notice for each cut list", async () => {
      const { code, stdout, stderr } = await conflicts("--limit", "2");
      strictEqual(code, 0, stderr);
      const rows = stdout.split("\n").filter((line) => /\.(txt|bin) /.test(line));
      strictEqual(rows.length, 4, stdout);
      ok(stdout.includes(`showing the newest 2 of ${CONFLICTS} conflicts`), stdout);
      ok(stdout.includes(`showing the newest 2 of ${REFUSED} refused writes`), stdout);
    });
    await t.step("--all: everything, no notice", async () => {
      const { code, stdout, stderr } = await conflicts("--all");
      strictEqual(code, 0, stderr);
      ok(stdout.includes(" c1.txt "), "the oldest is shown");
      ok(!stdout.includes("showing the newest"), stdout.slice(-400));
    });
    await t.step("--json keeps its lists and adds the totals", async () => {
      const { code, stdout, stderr } = await conflicts("--json", "--limit", "5");
      strictEqual(code, 0, stderr);
      const body = JSON.parse(stdout);
      strictEqual(body.conflicts.length, 5);
      strictEqual(body.refused.length, REFUSED);
      strictEqual(body.conflicts_total, CONFLICTS);
      strictEqual(body.refused_total, REFUSED);
      strictEqual(body.conflicts[0].path, `c${CONFLICTS}.txt`);
      strictEqual(body.refused[0].reason, TOO_LARGE, "exact bytes for machines");
    });
    await t.step("people read the reason as stored: sizes in MiB", async () => {
      const { stdout } = await conflicts("--limit", "1");
      ok(stdout.includes(TOO_LARGE), stdout);
    });
    await t.step("bad usage: exit 2", async () => {
      strictEqual((await conflicts("--limit", "0")).code, 2);
      strictEqual((await conflicts("--limit", "3", "--all")).code, 2);
    });
  });
});

Deno.test("chronicle conflicts shows each conflict's status: open, open with progress noted, settled", () =>
  withDataFolder((db) => {
    const insert = db.prepare(
      `INSERT INTO replica_conflicts (local_seq, path, operation, reason, kept_hash, kept_size,
         kept_mode, created_ms, resolved_ms, resolution) VALUES (?, ?, 'write', ?, NULL, 1, 420,
         ?, ?, ?)`,
    );
    const at = Date.UTC(2026, 0, 1);
    insert.run(1, "open.txt", "conflict: changed on the master", at, null, null);
    insert.run(2, "merging.txt", "conflict: changed on the master", at, null, "merging");
    insert.run(3, "big.bin", TOO_LARGE, at, at + 1, "superseded");
  }, async (data) => {
    const { code, stdout, stderr } = await runChronicle(["conflicts", "--data-dir", data]);
    strictEqual(code, 0, stderr);
    const row = (path: string) => stdout.split("\n").find((line) => line.includes(` ${path} `));
    ok(row("open.txt")?.includes(" unresolved "), stdout);
    ok(row("merging.txt")?.includes(" unresolved (merging) "), stdout);
    ok(row("big.bin")?.includes(" resolved (superseded) "), stdout);
  }));

Deno.test("chronicle conflicts on a master says when its list is cut", async () => {
  await withTempDir(async (root) => {
    const data = join(root, ".chronicle");
    await Deno.mkdir(data);
    const db = openDatabase(join(data, "chronicle.db"));
    try {
      // The master's table as lib/replication/_schema.ts makes it.
      db.exec(`CREATE TABLE master_conflicts (
        id INTEGER PRIMARY KEY AUTOINCREMENT, sandbox_id TEXT NOT NULL, local_seq INTEGER NOT NULL,
        path TEXT NOT NULL, operation TEXT NOT NULL, reason TEXT NOT NULL, kept_hash TEXT,
        kept_size INTEGER NOT NULL, kept_mode INTEGER NOT NULL, created_ms INTEGER NOT NULL)`);
      const insert = db.prepare(
        `INSERT INTO master_conflicts (sandbox_id, local_seq, path, operation, reason, kept_hash,
           kept_size, kept_mode, created_ms) VALUES ('sb', ?, ?, 'write', 'stale', NULL, 1, 420, ?)`,
      );
      for (let i = 1; i <= 4; i++) insert.run(i, `m${i}.txt`, Date.UTC(2026, 0, 1) + i);
    } finally {
      db.close();
    }
    const human = await runChronicle(["conflicts", "--data-dir", data, "--limit", "3"]);
    strictEqual(human.code, 0, human.stderr);
    ok(human.stdout.includes("showing the newest 3 of 4 conflicts; use --limit 4 or --all"));
    const json = await runChronicle(["conflicts", "--data-dir", data, "--json", "--limit", "3"]);
    const body = JSON.parse(json.stdout);
    strictEqual(body.conflicts.length, 3);
    strictEqual(body.conflicts_total, 4);
  }, "chronicle-conflicts-");
});
