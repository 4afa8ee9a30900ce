import { join } from "node:path";
import { openDatabase } from "../../lib/db/mod.ts";
import {
  type CapturedFile,
  type ChainHead,
  headSeal,
  snapshotHash,
  TransactionStateError,
  verifyChain,
} from "../../lib/snapshot/mod.ts";
import {
  appendSnapshot,
  movedAnchor,
  type NewSnapshot,
  nextLink,
  pruneNow,
  sealed,
} from "../../lib/snapshot/chain.ts";
import { SnapshotRecords } from "../../lib/snapshot/snapshot_records.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { assertEquals, assertThrows } from "./_assert.ts";

const FILE: CapturedFile = {
  path: "a.txt",
  state: "absent",
  kind: "file",
  hash: "",
  size: 0,
  mode: 0,
};
const fields = (transactionId: string | null = null): NewSnapshot => ({
  actionType: "write_file",
  summary: "write_file: a.txt",
  transactionId,
  files: [FILE],
});
const EMPTY: ChainHead = { headNumber: 0, headHash: "", anchorNumber: 1, anchorHash: "" };
const H = (n: number) => String(n).repeat(64);

Deno.test("nextLink() numbers, links and hashes the next snapshot", async (t) => {
  const cases: Array<{
    description: string;
    input: ChainHead;
    expected: { number: number; previousHash: string; head: Omit<ChainHead, "headHash"> };
  }> = [
    {
      description: "the first snapshot ever",
      input: EMPTY,
      expected: {
        number: 1,
        previousHash: "",
        head: { headNumber: 1, anchorNumber: 1, anchorHash: "" },
      },
    },
    {
      description: "after the fifth",
      input: { headNumber: 5, headHash: H(5), anchorNumber: 1, anchorHash: "" },
      expected: {
        number: 6,
        previousHash: H(5),
        head: { headNumber: 6, anchorNumber: 1, anchorHash: "" },
      },
    },
    {
      description: "after pruning, the anchor stays",
      input: { headNumber: 9, headHash: H(9), anchorNumber: 4, anchorHash: H(3) },
      expected: {
        number: 10,
        previousHash: H(9),
        head: { headNumber: 10, anchorNumber: 4, anchorHash: H(3) },
      },
    },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => {
      const before = { ...input };
      const { record, head } = nextLink(input, fields(), "0b6c", 1717000000000);
      assertEquals(record.number, expected.number);
      assertEquals(record.previousHash, expected.previousHash);
      assertEquals(record.id, "0b6c");
      assertEquals(record.timestamp, 1717000000000);
      const { hash, ...unsealed } = record;
      assertEquals(hash, snapshotHash(unsealed));
      assertEquals(head, { ...expected.head, headHash: hash });
      assertEquals(input, before, "the head given is left alone");
    });
  }
});

Deno.test("movedAnchor() moves the anchor past the last pruned snapshot", async (t) => {
  const head = { headNumber: 9, headHash: H(9), anchorNumber: 1, anchorHash: "" };
  const cases: Array<{ description: string; input: [number, string]; expected: ChainHead }> = [
    {
      description: "the oldest pruned",
      input: [1, H(1)],
      expected: { ...head, anchorNumber: 2, anchorHash: H(1) },
    },
    {
      description: "all but the newest pruned",
      input: [8, H(8)],
      expected: { ...head, anchorNumber: 9, anchorHash: H(8) },
    },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => assertEquals(movedAnchor(head, ...input), expected));
  }
});

Deno.test("sealed() seals the head's fields and nothing else", async (t) => {
  const head = { headNumber: 3, headHash: H(3), anchorNumber: 2, anchorHash: H(1) };
  const cases: Array<{ description: string; input: ChainHead; expected: string }> = [
    { description: "an empty chain", input: EMPTY, expected: headSeal(EMPTY) },
    { description: "a pruned chain", input: head, expected: headSeal(head) },
    {
      description: "a stale seal given along is replaced",
      input: { ...head, seal: "stale" } as ChainHead,
      expected: headSeal(head),
    },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => {
      const stored = sealed(input);
      assertEquals(stored.seal, expected);
      assertEquals(Object.keys(stored).sort(), [
        "anchorHash",
        "anchorNumber",
        "headHash",
        "headNumber",
        "seal",
      ]);
    });
  }
});

Deno.test("appendSnapshot() and pruneNow() keep a stored chain that verifies", async () => {
  await withTempDir((temp) => {
    const db = openDatabase(join(temp, "chronicle.db"));
    try {
      const records = SnapshotRecords.open(db);
      let now = 1_000;
      const options = { clock: () => now, config: { maxSnapshots: 2, maxAgeDays: 30 } };
      for (let i = 0; i < 4; i++) appendSnapshot(records, fields(), options);
      assertEquals(records.snapshots().map((s) => s.number), [3, 4]);
      const head = records.readHead()!;
      assertEquals(head.anchorNumber, 3);
      assertEquals(head.anchorHash, records.snapshots()[0]!.previousHash);
      assertEquals(verifyChain(records.snapshots(), head), []);

      // Older than the age limit: everything but the newest goes, and the head is resealed.
      now += 31 * 86_400_000;
      assertEquals(pruneNow(records, options), 1);
      assertEquals(pruneNow(records, options), 0);
      assertEquals(records.snapshots().map((s) => s.number), [4]);
      assertEquals(verifyChain(records.snapshots(), records.readHead()), []);

      // A transaction that is not active refuses the snapshot, and nothing is recorded.
      assertThrows(
        () => appendSnapshot(records, fields("0b6c0000-0000-4000-8000-000000000000"), options),
        TransactionStateError,
      );
      assertEquals(records.readHead()!.headNumber, 4);
      assertEquals(records.snapshots().length, 1);
    } finally {
      db.close();
    }
  }, "chronicle-chain-");
});
