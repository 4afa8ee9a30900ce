import { planPrune, type PruneCandidate } from "../../lib/snapshot/mod.ts";
import { assert, assertEquals } from "./_assert.ts";
import { withWorkspace } from "./_helpers.ts";

const DAY = 86_400_000;
const rows = (
  count: number,
  timestamp = 0,
  transactionId: string | null = null,
): PruneCandidate[] =>
  Array.from({ length: count }, (_, i) => ({ number: i + 1, timestamp, transactionId }));

Deno.test("planPrune() decides by count, age, active transactions and contiguity", () => {
  const config = { maxSnapshots: 3, maxAgeDays: 30 };
  const base = {
    anchorNumber: 1,
    headNumber: 5,
    now: 0,
    config,
    activeTransactions: new Set<string>(),
  };
  const cases: Array<
    { description: string; input: Partial<Parameters<typeof planPrune>[0]>; expected: number }
  > = [
    { description: "within both limits", input: { oldest: rows(3), headNumber: 3 }, expected: 0 },
    { description: "two over the count", input: { oldest: rows(5) }, expected: 2 },
    {
      description: "all too old, the newest is kept",
      input: { oldest: rows(5, 0), now: 31 * DAY, config: { maxSnapshots: 100, maxAgeDays: 30 } },
      expected: 4,
    },
    {
      description: "exactly at the age limit is kept",
      input: { oldest: rows(5, 0), now: 30 * DAY, config: { maxSnapshots: 100, maxAgeDays: 30 } },
      expected: 0,
    },
    {
      description: "an active transaction stops pruning",
      input: {
        oldest: [...rows(1), { number: 2, timestamp: 0, transactionId: "t" }, ...rows(5).slice(2)],
        activeTransactions: new Set(["t"]),
      },
      expected: 1,
    },
    {
      description: "a finished transaction does not",
      input: {
        oldest: [...rows(1), { number: 2, timestamp: 0, transactionId: "t" }, ...rows(5).slice(2)],
      },
      expected: 2,
    },
    {
      description: "a gap stops pruning (only a run from the anchor)",
      input: { oldest: [rows(5)[0]!, rows(5)[2]!], anchorNumber: 1 },
      expected: 1,
    },
    {
      description: "candidates not starting at the anchor prune nothing",
      input: { oldest: rows(5).slice(1), anchorNumber: 1 },
      expected: 0,
    },
    {
      description: "a young snapshot first stops age pruning",
      input: {
        oldest: [{ number: 1, timestamp: 40 * DAY, transactionId: null }, ...rows(5, 0).slice(1)],
        now: 41 * DAY,
        config: { maxSnapshots: 100, maxAgeDays: 30 },
      },
      expected: 0,
    },
  ];
  for (const { description, input, expected } of cases) {
    assertEquals(planPrune({ ...base, oldest: [], ...input }), expected, description);
  }
});

Deno.test("retention prunes by age after each new snapshot, keeping the chain verifiable", async () => {
  let now = Date.UTC(2024, 0, 1);
  await withWorkspace(async (ws) => {
    const snapshots = ws.open({ clock: () => now, config: { maxAgeDays: 2 } });
    await ws.write("a.txt", "a");
    await snapshots.snapshot({ type: "write_file", payload: { path: "a.txt" } });
    await snapshots.snapshot({ type: "write_file", payload: { path: "a.txt" } });
    now += 3 * DAY;
    const fresh = await snapshots.snapshot({ type: "write_file", payload: { path: "a.txt" } });
    assertEquals(snapshots.list().map((s) => s.id), [fresh!.id]);
    assert((await snapshots.verify()).ok);
  });
});

Deno.test("retention never prunes an active transaction's snapshots, and prunes them once committed", async () => {
  await withWorkspace(async (ws) => {
    const snapshots = ws.open({ config: { maxSnapshots: 2 } });
    await ws.write("a.txt", "a");
    const txn = snapshots.beginTransaction();
    const action = { type: "write_file", payload: { path: "a.txt" } };
    for (let i = 0; i < 3; i++) await snapshots.snapshot(action, { transactionId: txn.id });
    await snapshots.snapshot(action);
    assertEquals(snapshots.list().length, 4, "over the limit while the transaction is active");
    snapshots.commit(txn.id);
    assertEquals(snapshots.prune(), 2);
    assertEquals(snapshots.list().map((s) => s.number), [3, 4]);
    await snapshots.snapshot(action);
    assertEquals(snapshots.list().map((s) => s.number), [4, 5]);
    assertEquals(
      snapshots.transactions(),
      [],
      "a finished transaction with no snapshots left goes too",
    );
    assert((await snapshots.verify()).ok);
  });
});

Deno.test("cleanOrphans() removes content nobody references and keeps the rest", async () => {
  await withWorkspace(async (ws) => {
    const snapshots = ws.open({ config: { maxSnapshots: 1 } });
    await ws.write("a.txt", "old");
    const first = await snapshots.snapshot({ type: "write_file", payload: { path: "a.txt" } });
    await ws.write("a.txt", "new");
    const second = await snapshots.snapshot({ type: "write_file", payload: { path: "a.txt" } });
    const stored = await ws.cas.putBytes(new TextEncoder().encode("the store's own"));
    assertEquals(snapshots.list().map((s) => s.id), [second!.id]);
    const kept = await snapshots.cleanOrphans({ addHashesTo: (hashes) => hashes.add(stored.hash) });
    assertEquals(kept.removedObjects, 0, "recent content is kept within the grace period");
    const removed = await snapshots.cleanOrphans({
      addHashesTo: (hashes) => hashes.add(stored.hash),
    }, {
      graceMs: -1000,
    });
    assertEquals(removed.removedObjects, 1);
    assertEquals(await ws.cas.has(first!.files[0]!.hash), false);
    assertEquals(await ws.cas.has(second!.files[0]!.hash), true);
    assertEquals(await ws.cas.has(stored.hash), true);
  });
});
