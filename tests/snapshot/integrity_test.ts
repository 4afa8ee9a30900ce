import { join } from "node:path";
import { DatabaseError } from "../../lib/db/mod.ts";
import { snapshotHash } from "../../lib/snapshot/mod.ts";
import { assert, assertEquals, assertRejects } from "./_assert.ts";
import { type TestWorkspace, withWorkspace } from "./_helpers.ts";

/** Three snapshots: a write, a move (present + absent entries) in a transaction, a delete. */
async function threeSnapshots(ws: TestWorkspace) {
  await ws.write("a.txt", "alpha");
  await ws.write("b.txt", "beta");
  const first = await ws.snapshots.snapshot({ type: "write_file", payload: { path: "a.txt" } });
  const txn = ws.snapshots.beginTransaction();
  const second = await ws.snapshots.snapshot(
    { type: "move_file", payload: { source: "b.txt", destination: "c.txt" } },
    { transactionId: txn.id },
  );
  const third = await ws.snapshots.snapshot({ type: "delete_file", payload: { path: "a.txt" } });
  return [first!, second!, third!] as const;
}

const TAMPERS: Array<{ description: string; sql: string; kind: string }> = [
  {
    description: "number",
    sql: "UPDATE snapshots SET number = 9 WHERE number = 2",
    kind: "missing_snapshot",
  },
  {
    description: "id",
    sql: "UPDATE snapshots SET id = '00000000-0000-4000-8000-000000000000' WHERE number = 2",
    kind: "hash_mismatch",
  },
  {
    description: "timestamp",
    sql: "UPDATE snapshots SET timestamp = timestamp + 1 WHERE number = 2",
    kind: "hash_mismatch",
  },
  {
    description: "action type",
    sql: "UPDATE snapshots SET action_type = 'copy_file' WHERE number = 2",
    kind: "hash_mismatch",
  },
  {
    description: "summary",
    sql: "UPDATE snapshots SET summary = 'nothing' WHERE number = 2",
    kind: "hash_mismatch",
  },
  {
    description: "transaction id removed",
    sql: "UPDATE snapshots SET transaction_id = NULL WHERE number = 2",
    kind: "hash_mismatch",
  },
  {
    description: "transaction id emptied",
    sql: "UPDATE snapshots SET transaction_id = '' WHERE number = 2",
    kind: "malformed",
  },
  {
    description: "transaction id added",
    sql:
      "UPDATE snapshots SET transaction_id = (SELECT transaction_id FROM snapshots WHERE number = 2) WHERE number = 1",
    kind: "hash_mismatch",
  },
  {
    description: "previous hash",
    sql: "UPDATE snapshots SET previous_hash = hash WHERE number = 2",
    kind: "broken_link",
  },
  {
    description: "hash",
    sql: "UPDATE snapshots SET hash = previous_hash WHERE number = 2",
    kind: "hash_mismatch",
  },
  {
    description: "file path",
    sql: "UPDATE snapshot_files SET path = 'z.txt' WHERE snapshot_number = 1",
    kind: "hash_mismatch",
  },
  {
    description: "file state",
    sql: "UPDATE snapshot_files SET state = 'present' WHERE state = 'absent'",
    kind: "malformed",
  },
  {
    description: "file kind",
    sql: "UPDATE snapshot_files SET kind = 'symlink' WHERE snapshot_number = 1",
    kind: "hash_mismatch",
  },
  {
    description: "file hash",
    sql:
      "UPDATE snapshot_files SET hash = (SELECT hash FROM snapshot_files WHERE path = 'b.txt') WHERE snapshot_number = 1",
    kind: "hash_mismatch",
  },
  {
    description: "file size",
    sql: "UPDATE snapshot_files SET size = size + 1 WHERE snapshot_number = 1",
    kind: "hash_mismatch",
  },
  {
    description: "file mode",
    sql: "UPDATE snapshot_files SET mode = 33279 WHERE snapshot_number = 1",
    kind: "hash_mismatch",
  },
  {
    description: "file row deleted",
    sql: "DELETE FROM snapshot_files WHERE path = 'c.txt'",
    kind: "hash_mismatch",
  },
  {
    description: "file row inserted",
    sql:
      "INSERT INTO snapshot_files SELECT snapshot_number, 'extra.txt', state, kind, hash, size, mode FROM snapshot_files WHERE snapshot_number = 1",
    kind: "hash_mismatch",
  },
  {
    description: "middle snapshot deleted",
    sql:
      "DELETE FROM snapshots WHERE number = 2; DELETE FROM snapshot_files WHERE snapshot_number = 2",
    kind: "missing_snapshot",
  },
  {
    description: "oldest snapshot deleted",
    sql:
      "DELETE FROM snapshots WHERE number = 1; DELETE FROM snapshot_files WHERE snapshot_number = 1",
    kind: "missing_snapshot",
  },
  {
    description: "tail truncated",
    sql:
      "DELETE FROM snapshots WHERE number = 3; DELETE FROM snapshot_files WHERE snapshot_number = 3",
    kind: "missing_snapshot",
  },
  {
    description: "tail truncated, head moved without its seal",
    sql:
      "DELETE FROM snapshots WHERE number = 3; DELETE FROM snapshot_files WHERE snapshot_number = 3; UPDATE snapshot_chain SET head_number = 2, head_hash = (SELECT hash FROM snapshots WHERE number = 2)",
    kind: "seal_mismatch",
  },
  {
    description: "snapshots reordered",
    sql:
      "UPDATE snapshots SET number = -number WHERE number IN (1, 2); UPDATE snapshots SET number = 2 WHERE number = -1; UPDATE snapshots SET number = 1 WHERE number = -2",
    kind: "hash_mismatch",
  },
  {
    description: "a copy appended",
    sql:
      "INSERT INTO snapshots SELECT 4, 'ffffffff-0000-4000-8000-000000000000', timestamp, action_type, summary, transaction_id, hash, hash FROM snapshots WHERE number = 3",
    kind: "head_mismatch",
  },
  {
    description: "head number",
    sql: "UPDATE snapshot_chain SET head_number = 2",
    kind: "seal_mismatch",
  },
  {
    description: "head hash",
    sql: "UPDATE snapshot_chain SET head_hash = anchor_hash",
    kind: "seal_mismatch",
  },
  {
    description: "anchor number",
    sql: "UPDATE snapshot_chain SET anchor_number = 2",
    kind: "seal_mismatch",
  },
  {
    description: "anchor hash",
    sql: "UPDATE snapshot_chain SET anchor_hash = head_hash",
    kind: "seal_mismatch",
  },
  { description: "seal", sql: "UPDATE snapshot_chain SET seal = head_hash", kind: "seal_mismatch" },
  { description: "head record deleted", sql: "DELETE FROM snapshot_chain", kind: "head_missing" },
];

Deno.test("verify() detects tampering with every stored field", async (t) => {
  await withWorkspace(async (ws) => {
    await threeSnapshots(ws);
    assertEquals((await ws.snapshots.verify()).problems, []);
    for (const { description, sql, kind } of TAMPERS) {
      await t.step(description, async () => {
        ws.store.db.exec("BEGIN");
        try {
          ws.store.db.exec(sql);
          const report = await ws.snapshots.verify({ content: false });
          assertEquals(report.ok, false);
          const kinds = report.problems.map((problem) => problem.kind);
          assert(
            kinds.includes(kind as never),
            `expected ${kind}, got ${JSON.stringify(report.problems)}`,
          );
        } finally {
          ws.store.db.exec("ROLLBACK");
        }
      });
    }
    assert((await ws.snapshots.verify()).ok, "the untampered chain still verifies");
  });
});

Deno.test("verify() detects a forged snapshot inserted in the middle with a valid hash", async () => {
  await withWorkspace(async (ws) => {
    const [first, second] = await threeSnapshots(ws);
    const forged = { ...second, id: crypto.randomUUID(), number: 2, previousHash: first.hash };
    const hash = snapshotHash(forged);
    const db = ws.store.db;
    db.exec("UPDATE snapshots SET number = number + 10 WHERE number >= 2");
    db.exec("UPDATE snapshots SET number = number - 9 WHERE number >= 12");
    db.exec(
      "UPDATE snapshot_files SET snapshot_number = snapshot_number + 1 WHERE snapshot_number >= 2",
    );
    db.prepare("INSERT INTO snapshots VALUES (2, ?, ?, ?, ?, ?, ?, ?)").run(
      forged.id,
      forged.timestamp,
      forged.actionType,
      forged.summary,
      forged.transactionId,
      forged.previousHash,
      hash,
    );
    for (const file of forged.files) {
      db.prepare("INSERT INTO snapshot_files VALUES (2, ?, ?, ?, ?, ?, ?)").run(
        file.path,
        file.state,
        file.kind,
        file.hash,
        file.size,
        file.mode,
      );
    }
    const report = await ws.snapshots.verify({ content: false });
    assertEquals(report.ok, false);
    assert(report.problems.some((p) => p.kind === "hash_mismatch" && p.number === 3));
  });
});

Deno.test("verify() detects content that no longer matches its hash, then content that is missing", async () => {
  await withWorkspace(async (ws) => {
    await ws.write("a.txt", "alpha");
    const snap = await ws.snapshots.snapshot({ type: "write_file", payload: { path: "a.txt" } });
    const hash = snap!.files[0]!.hash;
    const object = join(ws.casDir, "objects", hash.slice(0, 2), hash);
    await Deno.chmod(object, 0o644);
    await Deno.writeTextFile(object, "alphb");
    const corrupt = await ws.snapshots.verify();
    assertEquals(corrupt.problems.map((p) => p.kind), ["content_corrupt"]);
    assert(corrupt.problems[0]!.message.includes('"a.txt" in snapshot 1'));
    await Deno.remove(object).catch(() => {/* the CAS removes corrupt objects it finds */});
    const missing = await ws.snapshots.verify();
    assertEquals(missing.problems.map((p) => p.kind), ["content_missing"]);
    assertEquals((await ws.snapshots.verify({ content: false })).ok, true);
  });
});

Deno.test("verify() throws when the snapshot tables cannot be read", async () => {
  await withWorkspace(async (ws) => {
    await ws.write("a.txt", "alpha");
    await ws.snapshots.snapshot({ type: "write_file", payload: { path: "a.txt" } });
    ws.store.db.exec("DROP TABLE snapshot_files");
    await assertRejects(
      () => ws.snapshots.verify(),
      DatabaseError,
      "Cannot read the snapshot chain",
    );
  });
});

Deno.test("verify() passes after retention pruned old snapshots, and keeps detecting deletions", async () => {
  await withWorkspace(async (ws) => {
    const snapshots = ws.open({ config: { maxSnapshots: 3 } });
    await ws.write("f.txt", "0");
    for (let i = 1; i <= 7; i++) {
      await snapshots.snapshot({ type: "write_file", payload: { path: "f.txt" } });
      await ws.write("f.txt", String(i));
    }
    const kept = snapshots.list();
    assertEquals(kept.map((s) => s.number), [5, 6, 7]);
    const report = await snapshots.verify();
    assertEquals(report.problems, []);
    assertEquals(report.head.anchorNumber, 5);
    assertEquals(report.head.anchorHash, kept[0]!.previousHash);
    ws.store.db.exec(
      "DELETE FROM snapshots WHERE number = 5; DELETE FROM snapshot_files WHERE snapshot_number = 5",
    );
    const after = await snapshots.verify();
    assert(after.problems.some((p) => p.kind === "missing_snapshot" && p.number === 5));
  });
});
