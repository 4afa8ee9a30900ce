/** The durable replication records, on real SQLite files. */
import { assert, assertEquals } from "./_assert.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { openDatabase } from "../../lib/db/mod.ts";
import { MasterState, type NewJournalEntry, openReplicaTables } from "../../lib/replication/mod.ts";

function withDatabase(work: (path: string) => void | Promise<void>): Promise<void> {
  return withTempDir((dir) => work(`${dir}/test.db`), "chronicle-state-");
}

function change(path: string, overrides: Partial<NewJournalEntry> = {}): NewJournalEntry {
  return {
    sourceSeq: 1,
    path,
    operation: "write",
    newPath: null,
    hash: "ab".repeat(32),
    size: 3,
    mode: 0o100644,
    deleted: false,
    masterSeen: 0,
    ...overrides,
  };
}

Deno.test("WriteJournal keeps entries across restarts and answers each once", async () => {
  await withDatabase((path) => {
    let db = openDatabase(path);
    let { journal } = openReplicaTables(db);
    const [a, b, c] = journal.append([
      change("a.txt", { sourceSeq: 3 }),
      change("b.txt", { sourceSeq: 4, operation: "rename", newPath: "c.txt" }),
      change("d.txt", { sourceSeq: 5 }),
    ]);
    // Numbers start from the creation time, so a recreated journal never repeats them.
    assert(a!.localSeq > Date.now() * 1000 - 60_000_000_000, String(a!.localSeq));
    assertEquals([b!.localSeq - a!.localSeq, c!.localSeq - b!.localSeq], [1, 1]);
    assert(journal.hasOpen("a.txt") && journal.hasOpen("c.txt"));
    journal.markSent([a!.localSeq]);
    db.close();

    // After a restart the open entries (sent or not) are still there, oldest first.
    db = openDatabase(path);
    journal = openReplicaTables(db).journal;
    assertEquals(journal.open().map((e) => [e.path, e.state]), [
      ["a.txt", "sent"],
      ["b.txt", "pending"],
      ["d.txt", "pending"],
    ]);
    assertEquals(journal.sourceHighWater(), 5);
    assert(journal.hasOpen("c.txt"));
    const resolved = journal.resolve([[a!.localSeq, 41]], [[b!.localSeq, "conflict: x"]]);
    assertEquals(resolved.map((e) => [e.path, e.state, e.masterSeq, e.reason]), [
      ["a.txt", "accepted", 41, null],
      ["b.txt", "rejected", null, "conflict: x"],
    ]);
    // An answer that arrives twice changes nothing.
    assertEquals(journal.resolve([[a!.localSeq, 99]], []), []);
    assert(!journal.hasOpen("a.txt") && !journal.hasOpen("c.txt"));
    const refused = journal.refuse(c!.localSeq, "too large: 9 bytes");
    assertEquals(refused?.state, "refused");
    assertEquals(journal.counts(), { pending: 0, sent: 0, accepted: 1, rejected: 1, refused: 1 });
    assertEquals(journal.openCount(), 0);
    db.close();
  });
});

Deno.test("ReplicaPaths remembers applied, accepted and deferred master versions", async () => {
  await withDatabase((path) => {
    const db = openDatabase(path);
    const { paths } = openReplicaTables(db);
    assertEquals(paths.get("a").applied.sequence, 0);
    paths.setApplied("a", { sequence: 5, hash: "h5", mode: 0o100644, deleted: false });
    assertEquals(paths.seen("a"), 5);
    paths.defer("a", { sequence: 9, hash: "h9", mode: 0o100644, deleted: false });
    paths.defer("a", { sequence: 7, hash: "h7", mode: 0o100644, deleted: false }); // older: ignored
    assertEquals(paths.get("a").deferred?.sequence, 9);
    assertEquals(paths.deferredPaths(), ["a"]);
    paths.setAccepted("a", 12);
    paths.setAccepted("a", 11);
    assertEquals(paths.get("a").acceptedSeq, 12);
    // Applying an older version keeps the later deferral whole.
    paths.setApplied("a", { sequence: 8, hash: "h8", mode: 0o100755, deleted: false });
    assertEquals(paths.get("a").applied, {
      sequence: 8,
      hash: "h8",
      mode: 0o100755,
      deleted: false,
    });
    assertEquals(paths.get("a").deferred, {
      sequence: 9,
      hash: "h9",
      mode: 0o100644,
      deleted: false,
    });
    paths.setApplied("b", { sequence: 3, hash: "", mode: 0, deleted: true });
    const many = paths.getMany(["a", "never-heard-of", "b"]);
    assertEquals([...many.keys()], ["a", "never-heard-of", "b"]);
    for (const path of many.keys()) assertEquals(many.get(path), paths.get(path), path);
    // Applying the deferred version (or a newer one) clears the deferral.
    paths.setApplied("a", { sequence: 9, hash: "h9", mode: 0o100644, deleted: false });
    assertEquals(paths.get("a").deferred, null);
    assertEquals(paths.get("a").applied.hash, "h9");
    db.close();
  });
});

Deno.test("ReplicaPaths holds back no version the path has moved past (a write-back answer read while it was decided)", async () => {
  await withDatabase((path) => {
    const db = openDatabase(path);
    const { paths } = openReplicaTables(db);
    const removal = (sequence: number) => ({ sequence, hash: "", mode: 0, deleted: true });
    // A rename's accepted answer sets its source removed as of the sequence it answered.
    paths.setAccepted("from", 1145);
    paths.setApplied("from", removal(1145));
    paths.defer("from", removal(1144)); // decided before that answer was read
    assertEquals(paths.get("from").deferred, null, "not below the version applied");
    paths.defer("from", removal(1145));
    assertEquals(paths.get("from").deferred, null, "nor the version applied itself");
    paths.setAccepted("written", 20);
    paths.defer("written", { sequence: 19, hash: "h19", mode: 0o100644, deleted: false });
    assertEquals(paths.get("written").deferred, null, "nor below an accepted write");
    paths.defer("written", { sequence: 21, hash: "h21", mode: 0o100644, deleted: false });
    assertEquals(paths.get("written").deferred?.sequence, 21, "a later one is held back");
    // Taking the applied version back for a conflict still holds it back.
    paths.deferApplied("from");
    assertEquals(paths.get("from").deferred, removal(1145));
    db.close();
  });
});

Deno.test("ReplicaPaths forgets accepted and deferred sequences for a full resync, keeps what was applied", async () => {
  await withDatabase((path) => {
    const db = openDatabase(path);
    const { paths } = openReplicaTables(db);
    const applied = { sequence: 40, hash: "h40", mode: 0o100644, deleted: false };
    paths.setApplied("a", applied);
    paths.setAccepted("a", 44);
    paths.setAccepted("b", 43);
    paths.setAccepted("d", 17);
    paths.defer("c", { sequence: 41, hash: "", mode: 0, deleted: true });
    assertEquals([...paths.acceptedAfter(43)], ["a"]);
    paths.forgetMasterSequences(["d"]); // accepted by the master resynced with: kept
    assertEquals(paths.get("a").applied, applied);
    assertEquals(paths.get("a").acceptedSeq, 0);
    assertEquals([...paths.acceptedAfter(0)], ["d"]);
    paths.forgetMasterSequences();
    assertEquals(paths.acceptedAfter(0).size, 0);
    assertEquals(paths.deferredPaths(), []);
    // A replaced master's numbering starts again: its lower sequences are taken again.
    paths.defer("c", { sequence: 3, hash: "h3", mode: 0o100644, deleted: false });
    assertEquals(paths.get("c").deferred?.sequence, 3);
    paths.setAccepted("b", 17);
    assertEquals([...paths.acceptedAfter(16)], ["b"]);
    db.close();
  });
});

Deno.test("ApplyIntents notes versions being written until recorded, across reopening", async () => {
  await withDatabase((path) => {
    const v = (sequence: number, hash: string) => ({
      sequence,
      hash,
      mode: 0o100644,
      deleted: false,
    });
    let db = openDatabase(path);
    let { intents } = openReplicaTables(db);
    const first = intents.begin([{ path: "a", version: v(4, "ha") }, {
      path: "b",
      version: v(5, "hb"),
    }]);
    const removal = { sequence: 7, hash: "", mode: 0, deleted: true };
    intents.begin([{ path: "c", version: v(6, "hc") }, {
      path: "gone",
      version: removal,
    }]);
    assertEquals(intents.match("a", "ha", 0o100644), v(4, "ha"));
    assertEquals(intents.match("a", "other", 0o100644), null, "other content: a local change");
    assertEquals(intents.match("a", "ha", 0o100755), null, "other mode: a local change");
    assertEquals(intents.match("unknown", "ha", 0o100644), null);
    // The first batch recorded but "b"; the second never ends (a crash): both stay noted.
    intents.end(first, new Set(["b"]));
    assertEquals(intents.match("a", "ha", 0o100644), null, "recorded: forgotten");
    db.close();
    db = openDatabase(path);
    ({ intents } = openReplicaTables(db));
    assertEquals(intents.size, 3);
    assertEquals(intents.match("b", "hb", 0o100644), v(5, "hb"));
    assertEquals(intents.match("c", "hc", 0o100644), v(6, "hc"), "still there after a match");
    assertEquals(intents.match("gone", "", 0), removal, "a removal: found missing");
    // "b" had a later version applied since, "c" its own; "gone" none yet.
    const applied: Record<string, number> = { b: 8, c: 6 };
    intents.dropSuperseded((p) => applied[p] ?? 0);
    assertEquals(intents.size, 1);
    db.close();
    db = openDatabase(path);
    ({ intents } = openReplicaTables(db));
    assertEquals(intents.match("gone", "", 0), removal, "kept for good");
    assertEquals(intents.match("b", "hb", 0o100644), null);
    intents.dropSuperseded(() => 7);
    db.close();
    db = openDatabase(path);
    assertEquals(openReplicaTables(db).intents.size, 0, "all applied: none left");
    db.close();
  });
});

Deno.test("ConflictLog lists rejected write-backs with the kept content", async () => {
  await withDatabase((path) => {
    const db = openDatabase(path);
    const { journal, conflicts } = openReplicaTables(db);
    const [entry] = journal.append([change("x.txt")]);
    const [rejected] = journal.resolve([], [[entry!.localSeq, "conflict: changed"]]);
    conflicts.add(rejected!, "conflict: changed", null);
    assert(conflicts.hasUnresolved("x.txt"));
    const [listed] = conflicts.list();
    assertEquals([listed!.path, listed!.keptHash, listed!.resolution], [
      "x.txt",
      "ab".repeat(32),
      null,
    ]);
    conflicts.resolve(listed!.id, "local");
    assert(!conflicts.hasUnresolved("x.txt"));
    assertEquals(conflicts.counts(), { total: 1, unresolved: 0 });
    db.close();
  });
});

Deno.test("ConflictLog keeps one open conflict per path, updated by further rejections", async () => {
  await withDatabase((path) => {
    const db = openDatabase(path);
    const { journal, conflicts } = openReplicaTables(db);
    const reject = (hash: string, resolution: string | null) => {
      const [entry] = journal.append([change("x.txt", { hash })]);
      const [rejected] = journal.resolve([], [[entry!.localSeq, `conflict: ${hash}`]]);
      return conflicts.add(rejected!, `conflict: ${hash}`, resolution);
    };
    const first = reject("01".repeat(32), null);
    conflicts.note(first.id, "merging");
    const again = reject("02".repeat(32), null); // saved again before resolving
    assertEquals(again.id, first.id);
    const [open] = conflicts.list({ unresolved: true });
    assertEquals(
      [open!.keptHash, open!.reason, open!.resolution, open!.createdMs],
      ["02".repeat(32), `conflict: ${"02".repeat(32)}`, "merging", first.createdMs],
    );
    assertEquals(conflicts.counts(), { total: 1, unresolved: 1 });
    // A later save refused as too large gets its own row: the conflict keeps its reason.
    const [big] = journal.append([change("x.txt", { hash: "0f".repeat(32) })]);
    const [tooLarge] = journal.resolve([], [[big!.localSeq, "too large: 9 MiB"]]);
    const refusal = conflicts.add(tooLarge!, "too large: 9 MiB", null);
    assert(refusal.id !== first.id);
    assertEquals(conflicts.list({ unresolved: true }).map((c) => c.reason).sort(), [
      `conflict: ${"02".repeat(32)}`,
      "too large: 9 MiB",
    ]);
    assertEquals(conflicts.supersede("x.txt", big!.localSeq + 1), 1, "the refusal only");
    conflicts.resolve(first.id, "local");
    reject("03".repeat(32), null); // after the resolution: a new conflict
    reject("04".repeat(32), "upstream"); // settled at once (sandbox): always its own row
    reject("05".repeat(32), "upstream");
    assertEquals(conflicts.counts(), { total: 5, unresolved: 1 });
    db.close();
  });
});

Deno.test("ConflictLog settles the refusals a later accepted change of their path leaves behind, never a conflict", async () => {
  await withDatabase((path) => {
    const db = openDatabase(path);
    const { journal, conflicts } = openReplicaTables(db);
    const refuse = (file: string, reason: string) => {
      const [entry] = journal.append([change(file)]);
      const [rejected] = journal.resolve([], [[entry!.localSeq, reason]]);
      conflicts.add(rejected!, reason, null);
      return entry!.localSeq;
    };
    refuse("big.bin", "too large: 9 MiB, over the master's write-back limit");
    refuse("other.bin", "too large: 9 MiB, over the master's write-back limit");
    refuse("edited.txt", 'conflict: "edited.txt" changed on the master');
    const later = journal.append([change("big.bin")])[0]!.localSeq;
    const refusedAfter = refuse("after.bin", "forbidden: a link out of the workspace");
    // The later change of each went through.
    assertEquals(conflicts.supersede("big.bin", later), 1);
    assertEquals(conflicts.supersede("edited.txt", later), 0, "a conflict stays for a person");
    assertEquals(conflicts.supersede("after.bin", refusedAfter), 0, "only earlier changes");
    const status = new Map(conflicts.list().map((c) => [c.path, c.resolution]));
    assertEquals(Object.fromEntries(status), {
      "after.bin": null,
      "big.bin": "superseded",
      "edited.txt": null,
      "other.bin": null,
    });
    assertEquals(conflicts.counts(), { total: 4, unresolved: 3 });
    db.close();
  });
});

Deno.test("MasterState records cumulative acks and write-back outcomes", async () => {
  await withDatabase((path) => {
    let db = openDatabase(path);
    let state = new MasterState(db);
    state.touch("sb-1", "unix:/s#1");
    state.recordAck("sb-1", 10);
    state.recordAck("sb-1", 7); // lower: changes nothing
    state.saveOutcome("sb-1", 1_700_000_000_000_001n, {
      accepted: true,
      masterSeq: 33,
      reason: "",
    });
    db.close();
    db = openDatabase(path);
    state = new MasterState(db);
    assertEquals(state.replicas().map((r) => [r.sandboxId, r.ackedSequence]), [["sb-1", 10]]);
    assertEquals(state.outcome("sb-1", 1_700_000_000_000_001n), {
      accepted: true,
      masterSeq: 33,
      reason: "",
    });
    assertEquals(state.outcome("sb-2", 1_700_000_000_000_001n), undefined);
    db.close();
  });
});

Deno.test("MasterState notes write-backs being applied until their outcome is stored", async () => {
  await withDatabase((path) => {
    let db = openDatabase(path);
    let state = new MasterState(db);
    const write = { path: "a.txt", hash: "ab".repeat(32), mode: 0o100644, deleted: false };
    const removal = { path: "gone.txt", hash: "", mode: 0, deleted: true };
    state.noteApplying("sb-1", [{ localSeq: 5n, ...write }, { localSeq: 6n, ...removal }]);
    db.close(); // as if killed while applying them
    db = openDatabase(path);
    state = new MasterState(db);
    assertEquals(state.applying("sb-1", 5n), [write]);
    assertEquals(state.applying("sb-1", 6n), [removal]);
    assertEquals(state.applying("sb-2", 5n), [], "by sandbox id");
    state.saveOutcome("sb-1", 5n, { accepted: true, masterSeq: 9, reason: "" });
    assertEquals(state.applying("sb-1", 5n), [], "decided: no longer noted");
    assertEquals(state.applying("sb-1", 6n), [removal]);
    db.close();
  });
});

Deno.test("MasterState notes every state a rename may leave, once each, and forgets them together", async () => {
  await withDatabase((path) => {
    const db = openDatabase(path);
    const state = new MasterState(db);
    const hash = "cd".repeat(32);
    const states = [
      { path: "a.txt", hash: "", mode: 0, deleted: true },
      { path: "b.txt", hash, mode: 0o100644, deleted: false },
      { path: "b.txt", hash, mode: 0o100755, deleted: false },
    ];
    state.noteApplying("sb-1", states.map((noted) => ({ localSeq: 7n, ...noted })));
    state.noteApplying("sb-1", [{ localSeq: 7n, ...states[1]! }]); // noted again on a retry
    assertEquals(state.applying("sb-1", 7n), states);
    state.saveOutcome("sb-1", 7n, { accepted: true, masterSeq: 12, reason: "" });
    assertEquals(state.applying("sb-1", 7n), []);
    db.close();
  });
});

Deno.test("MasterState keeps what an older master noted as being applied", async () => {
  await withDatabase((path) => {
    let db = openDatabase(path);
    // The schema before states were noted per path: one row per entry.
    db.exec(`
      CREATE TABLE schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL);
      INSERT INTO schema_versions VALUES ('master', 2);
      CREATE TABLE master_replicas (sandbox_id TEXT PRIMARY KEY, acked_sequence INTEGER NOT NULL DEFAULT 0,
        first_seen_ms INTEGER NOT NULL, last_seen_ms INTEGER NOT NULL, remote TEXT NOT NULL DEFAULT '');
      CREATE TABLE master_writebacks (sandbox_id TEXT NOT NULL, local_seq INTEGER NOT NULL,
        accepted INTEGER NOT NULL, master_seq INTEGER NOT NULL, reason TEXT NOT NULL,
        decided_ms INTEGER NOT NULL, PRIMARY KEY (sandbox_id, local_seq));
      CREATE TABLE master_applying (sandbox_id TEXT NOT NULL, local_seq INTEGER NOT NULL,
        path TEXT NOT NULL, hash TEXT NOT NULL, mode INTEGER NOT NULL, deleted INTEGER NOT NULL,
        PRIMARY KEY (sandbox_id, local_seq));
      INSERT INTO master_applying VALUES ('sb-1', 3, 'a.txt', '${"ef".repeat(32)}', 33188, 0);
    `);
    db.close();
    db = openDatabase(path);
    const state = new MasterState(db);
    const write = { path: "a.txt", hash: "ef".repeat(32), mode: 0o100644, deleted: false };
    assertEquals(state.applying("sb-1", 3n), [write]);
    state.noteApplying("sb-1", [{ localSeq: 3n, ...write, mode: 0o100755 }]);
    assertEquals(state.applying("sb-1", 3n).length, 2, "a second state for the same path");
    db.close();
  });
});
