/**
 * Write-back in pieces: the replica's rules for what goes in pieces and how large they
 * are (tables), its write-back loop sending a change piece by piece (a real journal and
 * CAS), and the master's applier taking the pieces into a real workspace.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { Cas, sha256Hex } from "../../lib/cas/mod.ts";
import { openDatabase } from "../../lib/db/mod.ts";
import { type JournalEntry, openReplicaTables } from "../../lib/replication/mod.ts";
import type { WriteBackApplier } from "../../lib/replication/writeback_applier.ts";
import { WritebackLoop } from "../../lib/replication/writeback_loop.ts";
import {
  changeOfPiece,
  type LostBatch,
  parsePartial,
  partialReason,
  PIECE_BIT,
  pieceSeq,
  WriteBackPieces,
} from "../../lib/replication/writeback_pieces.ts";
import type { WireMessage, WriteBackEntry, WriteBackMessage } from "../../lib/wire/mod.ts";
import { Workspace } from "../../lib/workspace/mod.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { pseudoRandomBytes } from "./_harness.ts";
import { applierOf } from "./_writeback_applier.ts";

const KiB = 1024;

Deno.test("piece numbers and the master's partial answers read back as written", () => {
  assert.equal(pieceSeq(7), PIECE_BIT | 7n);
  assert.equal(changeOfPiece(pieceSeq(7)), 7n);
  assert.equal(changeOfPiece(7n), null, "a change's own number is no piece's");
  assert.equal(changeOfPiece(PIECE_BIT), null, "no change numbered 0");
  assert.equal(changeOfPiece(2n ** 64n - 1n), 2n ** 63n - 1n);
  assert.deepEqual(parsePartial(partialReason(65536, 900000)), { held: 65536, size: 900000 });
  for (
    const other of [
      "conflict: partial",
      "partial: 1 of 2",
      "partial: 01 of 2 bytes held",
      "partial: -1 of 2 bytes held",
      "failed: local_seq out of range",
    ]
  ) assert.equal(parsePartial(other), null, other);
});

Deno.test("the piece size follows what connections lost and carried (table)", () => {
  const cases: Array<{
    name: string;
    ends: LostBatch[][];
    carried?: number[];
    expected: number | null;
  }> = [
    { name: "no connection lost a batch: all whole", ends: [[], []], expected: null },
    {
      name: "half the largest batch lost",
      ends: [[{ bytes: 16 * KiB, piece: false }, { bytes: 900_000, piece: false }]],
      expected: 450_000,
    },
    {
      name: "never more than 1 MiB",
      ends: [[{ bytes: 50_000_000, piece: false }]],
      expected: 1024 * KiB,
    },
    {
      name: "a piece lost halves it",
      ends: [[{ bytes: 900_000, piece: false }], [{ bytes: 450_000, piece: true }]],
      expected: 225_000,
    },
    {
      name: "never under 4 KiB",
      ends: [[{ bytes: 5000, piece: false }], [{ bytes: 4096, piece: true }]],
      expected: 4 * KiB,
    },
    {
      name: "a whole batch lost after pieces shrank it does not grow it back",
      ends: [[{ bytes: 100_000, piece: false }], [{ bytes: 900_000, piece: false }]],
      expected: 50_000,
    },
    {
      name: "doubles once a connection carried four pieces' worth",
      ends: [[{ bytes: 64 * KiB, piece: false }]],
      carried: [32 * KiB, 32 * KiB, 32 * KiB, 32 * KiB],
      expected: 64 * KiB,
    },
    {
      name: "past 1 MiB carried so: whole again",
      ends: [[{ bytes: 4 * 1024 * KiB, piece: false }]],
      carried: [1024 * KiB, 1024 * KiB, 1024 * KiB, 1024 * KiB],
      expected: null,
    },
    {
      name: "not before",
      ends: [[{ bytes: 64 * KiB, piece: false }]],
      carried: [32 * KiB, 32 * KiB, 32 * KiB],
      expected: 32 * KiB,
    },
  ];
  for (const { name, ends, carried = [], expected } of cases) {
    const pieces = new WriteBackPieces();
    for (const lost of ends) pieces.connectionEnded(lost);
    for (const bytes of carried) pieces.heldBy(1, "h", bytes, bytes);
    assert.equal(pieces.pieceBytes, expected, name);
  }
});

Deno.test("a change goes in pieces once larger than the piece size, from what the master holds of its content", () => {
  const pieces = new WriteBackPieces();
  assert.equal(pieces.inPieces(50_000_000), false, "nothing lost yet: whole");
  pieces.connectionEnded([{ bytes: 200_000, piece: false }]);
  assert.equal(pieces.inPieces(100_000), false);
  assert.equal(pieces.inPieces(100_001), true);
  assert.deepEqual(pieces.nextPiece(3, "a", 250_000), { offset: 0, length: 100_000 });
  pieces.heldBy(3, "a", 100_000, 100_000);
  assert.deepEqual(pieces.nextPiece(3, "a", 250_000), { offset: 100_000, length: 100_000 });
  pieces.heldBy(3, "a", 200_000, 100_000);
  assert.deepEqual(pieces.nextPiece(3, "a", 250_000), { offset: 200_000, length: 50_000 });
  assert.deepEqual(pieces.nextPiece(3, "b", 250_000).offset, 0, "another content: from the start");
  pieces.forget(3);
  assert.deepEqual(pieces.nextPiece(3, "a", 250_000).offset, 0);
});

/** What a test of the loop works with (see {@linkcode withPiecesLoop}). */
interface PiecesLoop {
  loop: WritebackLoop;
  sent: WriteBackMessage[];
  journal: ReturnType<typeof openReplicaTables>["journal"];
  /**
   * Stores `bytes` (unless `stored` is false) and journals them as a local write; returns
   * its local sequence.
   */
  write: (bytes: Uint8Array, stored?: boolean) => Promise<number>;
  /** The entries the loop refused here. */
  refused: JournalEntry[];
}

/**
 * Runs `work` with a running loop over a real journal and CAS, sending in pieces of 50,000
 * bytes (`answer` sees each batch as it is sent); then stops it.
 */
/** How {@linkcode withPiecesLoop} makes its loop. */
interface PiecesLoopOptions {
  /** What one message carries (`maxWholeBytes`). @default {the write-back limit} */
  maxWholeBytes?: number;
  /** Whether a connection lost a batch before: changes of 50 KB and more go in pieces. @default {true} */
  lostBefore?: boolean;
}

function withPiecesLoop(
  work: (loop: PiecesLoop) => Promise<void>,
  answer: (loop: WritebackLoop, message: WriteBackMessage) => void = () => {},
  options: PiecesLoopOptions = {},
): Promise<void> {
  return withTempDir(async (root) => {
    const db = openDatabase(join(root, "replica.db"));
    try {
      const parts = await piecesLoop(db, root, answer, options);
      const running = parts.loop.run();
      try {
        await work(parts);
      } finally {
        parts.loop.stop();
        await running;
      }
    } finally {
      db.close();
    }
  });
}

async function piecesLoop(
  db: DatabaseSync,
  root: string,
  answer: (loop: WritebackLoop, message: WriteBackMessage) => void,
  options: PiecesLoopOptions,
): Promise<PiecesLoop> {
  const { journal } = openReplicaTables(db);
  const cas = await Cas.open(join(root, "cas"), { db });
  const pieces = new WriteBackPieces();
  if (options.lostBefore ?? true) pieces.connectionEnded([{ bytes: 100_000, piece: false }]);
  const sent: WriteBackMessage[] = [];
  const refused: JournalEntry[] = [];
  const loop: WritebackLoop = new WritebackLoop({
    journal,
    cas,
    sandboxId: "sandbox-1",
    send: (message: WireMessage) => {
      if (message.type === "WriteBack") {
        sent.push(message);
        answer(loop, message);
      }
      return Promise.resolve();
    },
    maxContentBytes: 16 * 1024 * 1024,
    ...(options.maxWholeBytes ? { maxWholeBytes: options.maxWholeBytes } : {}),
    onResolved: () => {},
    onRefused: (entry) => refused.push(entry),
    pieces,
  });
  const write = async (bytes: Uint8Array, stored = true) => {
    const hash = stored ? (await cas.putBytes(bytes)).hash : sha256Hex(bytes);
    const [entry] = journal.append([{
      sourceSeq: 1,
      path: "big.bin",
      operation: "write",
      newPath: null,
      hash,
      size: bytes.length,
      mode: 0o100644,
      deleted: false,
      masterSeen: 0,
    }]);
    return entry!.localSeq;
  };
  return { loop, sent, journal, write, refused };
}

Deno.test("the write-back loop sends a large change piece by piece, each from what the master says it holds", () =>
  withPiecesLoop(async ({ loop, sent, journal, write }) => {
    const bytes = pseudoRandomBytes(120_000, 1);
    const seq = await write(bytes);
    const hash = sha256Hex(bytes);
    const pieceAt = async (n: number) => {
      await waitFor(`piece ${n} sent`, () => sent.length === n);
      const [piece, ...others] = sent[n - 1]!.entries;
      assert.deepEqual(others, [], "a piece goes alone");
      return piece!;
    };
    const first = await pieceAt(1);
    assert.equal(first.local_seq, pieceSeq(seq));
    assert.equal(first.content_hash, `${hash}@0+50000`);
    assert.equal(first.size, 120_000n);
    assert.deepEqual(first.content_bytes, bytes.subarray(0, 50_000));
    loop.onResult(partialAnswer(first, 50_000));
    const second = await pieceAt(2);
    assert.equal(second.content_hash, `${hash}@50000+50000`);
    // The master lost what it held (it restarted): from the start again.
    loop.onResult(partialAnswer(second, 0));
    assert.equal((await pieceAt(3)).content_hash, `${hash}@0+50000`);
    loop.onResult(partialAnswer(sent[2]!.entries[0]!, 100_000));
    const last = await pieceAt(4);
    assert.equal(last.content_hash, `${hash}@100000+20000`);
    assert.deepEqual(last.content_bytes, bytes.subarray(100_000));
    // The last piece completes the content: the change's own outcome, under its number.
    loop.onResult({ type: "WriteBackResult", accepted: [[BigInt(seq), 42n]], rejected: [] });
    await waitFor("the change answered", () => journal.open().length === 0);
    assert.equal(sent.length, 4);
  }));

Deno.test("a change whose last piece is answered before its send returns is not sent again", () =>
  (async () => {
    const size = 120_000;
    let sent: WriteBackMessage[] = [];
    await withPiecesLoop(async (parts) => {
      sent = parts.sent; // read once the loop has stopped
      const { journal, write } = parts;
      await write(pseudoRandomBytes(size, 3));
      await waitFor("the change answered", () => journal.open().length === 0);
    }, (loop, message) => {
      // The master answers each piece at once, inside the send: the answer comes first.
      const [piece] = message.entries;
      const [, offset, length] = /@(\d+)\+(\d+)$/.exec(piece!.content_hash!)!.map(Number);
      const held = offset! + length!;
      loop.onResult(
        held < size ? partialAnswer(piece!, held) : {
          type: "WriteBackResult",
          accepted: [[changeOfPiece(piece!.local_seq)!, 9n]],
          rejected: [],
        },
      );
    });
    // Once more, the journal not yet told of the answer, it was sent again from the start.
    assert.deepEqual(sent.map((batch) => batch.entries[0]!.content_hash!.slice(64)), [
      "@0+50000",
      "@50000+50000",
      "@100000+20000",
    ]);
  })());

Deno.test("a master that takes no pieces gets the change whole, and its answer to the piece is no outcome", () =>
  withPiecesLoop(async ({ loop, sent, journal, write }) => {
    const bytes = pseudoRandomBytes(120_000, 2);
    const seq = await write(bytes);
    await waitFor("a piece sent", () => sent.length === 1);
    // What a master before pieces answers such a number: nothing recorded.
    loop.onResult({
      type: "WriteBackResult",
      accepted: [],
      rejected: [[pieceSeq(seq), "failed: local_seq out of range"]],
    });
    await waitFor("the change sent whole", () => sent.length === 2);
    const [whole] = sent[1]!.entries;
    assert.equal(whole!.local_seq, BigInt(seq));
    assert.equal(whole!.content_hash, sha256Hex(bytes));
    assert.deepEqual(whole!.content_bytes, bytes);
    assert.equal(journal.open().length, 1, "still open: the piece's answer was no outcome");
  }));

Deno.test("a change larger than one message carries goes in pieces on any link, each at most a message", () =>
  withPiecesLoop(
    async ({ loop, sent, journal, write }) => {
      const bytes = pseudoRandomBytes(250_000, 4);
      const seq = await write(bytes);
      const hash = sha256Hex(bytes);
      // Smaller changes go whole (no connection lost anything); this one cannot.
      await write(pseudoRandomBytes(90_000, 5));
      for (const [n, range] of [[1, "@0+100000"], [2, "@100000+100000"], [3, "@200000+50000"]]) {
        await waitFor(`piece ${n} sent`, () => sent.length === n);
        const [piece, ...others] = sent[n as number - 1]!.entries;
        assert.deepEqual(others, [], "a piece goes alone");
        assert.equal(piece!.content_hash, `${hash}${range}`);
        loop.onResult(
          n === 3
            ? { type: "WriteBackResult", accepted: [[BigInt(seq), 7n]], rejected: [] }
            : partialAnswer(piece!, 100_000 * (n as number)),
        );
      }
      // Then the next change, whole.
      await waitFor("the next change sent", () => sent.length === 4);
      assert.equal(sent[3]!.entries[0]!.content_bytes?.length, 90_000);
      assert.equal(journal.open().length, 1);
    },
    () => {},
    { maxWholeBytes: 100_000, lostBefore: false },
  ));

Deno.test("a change larger than one message carries, which the master takes in no piece, is refused here with why", () =>
  withPiecesLoop(
    async ({ loop, sent, journal, write, refused }) => {
      const seq = await write(pseudoRandomBytes(250_000, 6));
      await waitFor("a piece sent", () => sent.length === 1);
      loop.onResult({
        type: "WriteBackResult",
        accepted: [],
        rejected: [[pieceSeq(seq), "busy: 32 contents in pieces held already"]],
      });
      await waitFor("the change refused here", () => refused.length === 1);
      assert.match(
        refused[0]!.reason!,
        /^too large: 244\.1 KiB \(250000 bytes\), more than one message carries \(97\.7 KiB \(100000 bytes\)\), and the master took no piece of it \(busy: 32 contents in pieces held already\)$/,
      );
      assert.equal(sent.length, 1, "never sent whole");
      assert.equal(journal.open().length, 0);
    },
    () => {},
    { maxWholeBytes: 100_000, lostBefore: false },
  ));

Deno.test("a change larger than one message carries whose content is not held here goes without its bytes", () =>
  withPiecesLoop(
    async ({ sent, write }) => {
      const bytes = pseudoRandomBytes(250_000, 7);
      await write(bytes, false); // a chmod of a file the master sent: its content is the master's
      await waitFor("the change sent", () => sent.length === 1);
      const [entry] = sent[0]!.entries;
      assert.equal(entry!.content_hash, sha256Hex(bytes));
      assert.equal(entry!.content_bytes, null);
      assert.equal(entry!.size, 250_000n);
    },
    () => {},
    { maxWholeBytes: 100_000, lostBefore: false },
  ));

function partialAnswer(piece: WriteBackEntry, held: number) {
  return {
    type: "WriteBackResult" as const,
    accepted: [],
    rejected: [[piece.local_seq, partialReason(held, Number(piece.size))] as [bigint, string]],
  };
}

/** Runs `work` with a master's write-back applier on a scanned workspace at a temp folder. */
function withMasterApplier(
  work: (applier: WriteBackApplier, workspace: Workspace, root: string) => Promise<void>,
): Promise<void> {
  return withTempDir(async (root) => {
    const workspace = await Workspace.open({ root });
    try {
      await workspace.scan();
      const applier = applierOf(workspace);
      await work(applier, workspace, root);
      await applier.close();
    } finally {
      await workspace.close();
    }
  });
}

/** The pieces of `bytes` for change `seq` at `path`, `length` bytes each. */
function piecesOf(
  seq: number,
  path: string,
  bytes: Uint8Array,
  length: number,
): WriteBackEntry[] {
  const hash = sha256Hex(bytes);
  const out: WriteBackEntry[] = [];
  for (let offset = 0; offset < bytes.length; offset += length) {
    const slice = bytes.subarray(offset, offset + length);
    out.push({
      local_seq: pieceSeq(seq),
      filepath: path,
      operation: { type: "Write" },
      content_hash: `${hash}@${offset}+${slice.length}`,
      content_bytes: slice,
      size: BigInt(bytes.length),
      permissions: 0o100644n,
      is_deletion: false,
      master_rowid_seen: 0n,
    });
  }
  return out;
}

Deno.test("the master takes a change in pieces: each answered with what it holds, the last with the change's outcome", () =>
  withMasterApplier(async (applier, workspace, root) => {
    const bytes = pseudoRandomBytes(5_000_000, 3); // chunked once stored
    const [a, b, c, d, e] = piecesOf(1001, "big.bin", bytes, 1024 * 1024);
    const answers: string[] = [];
    for (const piece of [a!, c!, b!, b!, c!, d!]) {
      const result = await applier.apply("sandbox-1", [piece]);
      assert.deepEqual(result.accepted, []);
      assert.equal(result.rejected.length, 1);
      assert.equal(result.rejected[0]![0], pieceSeq(1001), "under the piece's own number");
      answers.push(result.rejected[0]![1]);
    }
    assert.deepEqual(answers.map((reason) => parsePartial(reason)?.held), [
      1048576, // a
      1048576, // c, past what is held: nothing added
      2097152, // b
      2097152, // b again
      3145728, // c
      4194304, // d
    ]);
    const done = await applier.apply("sandbox-1", [e!]);
    assert.deepEqual(done.rejected, []);
    assert.equal(done.accepted.length, 1);
    assert.equal(done.accepted[0]![0], 1001n, "under the change's number");
    assert.deepEqual(await Deno.readFile(join(root, "big.bin")), bytes);
    assert.equal(workspace.store.latest("big.bin")?.origin, "sandbox-1");
    // The last piece sent again (its answer lost): the same outcome, applied once.
    const again = await applier.apply("sandbox-1", [e!]);
    assert.deepEqual(again.accepted, done.accepted);
    assert.equal(workspace.store.history("big.bin").length, 1);
  }));

Deno.test("the master takes a change whose content it stores already at its first piece", () =>
  withMasterApplier(async (applier, workspace, root) => {
    const bytes = pseudoRandomBytes(300_000, 6);
    await workspace.cas.putBytes(bytes); // another path holds it, say
    const [first] = piecesOf(7, "copy.bin", bytes, 100_000);
    const result = await applier.apply("sandbox-1", [first!]);
    assert.deepEqual(result.rejected, []);
    assert.deepEqual(result.accepted.map(([seq]) => seq), [7n]);
    assert.deepEqual(await Deno.readFile(join(root, "copy.bin")), bytes);
  }));

Deno.test("the master refuses a change sent in pieces at its first piece when its path is refused, and pieces that do not fit", () =>
  withMasterApplier(async (applier, workspace) => {
    const bytes = pseudoRandomBytes(300_000, 4);
    // Chronicle's own data folder: refused at once, and for good, under the change's number.
    const [inData] = piecesOf(1, ".chronicle/x.bin", bytes, 100_000);
    const refused = await applier.apply("sandbox-1", [inData!]);
    assert.equal(refused.rejected.length, 1);
    assert.equal(refused.rejected[0]![0], 1n);
    assert.match(refused.rejected[0]![1], /^invalid path/);
    // A piece carrying other bytes than its range says, or running past its content.
    const [first] = piecesOf(2, "x.bin", bytes, 100_000);
    const short = { ...first!, content_bytes: first!.content_bytes!.subarray(1) };
    const past = { ...first!, size: 50_000n };
    for (const bad of [short, past]) {
      const result = await applier.apply("sandbox-1", [bad]);
      assert.equal(result.rejected.length, 1);
      assert.equal(result.rejected[0]![0], pieceSeq(2), "under the piece's number: no outcome");
      assert.match(result.rejected[0]![1], /^invalid content: a piece/);
    }
    // Pieces whose whole does not hash to the content's hash: the change is not decided.
    const other = pseudoRandomBytes(300_000, 5);
    const lying = piecesOf(3, "y.bin", other, 100_000).map((piece) => ({
      ...piece,
      content_hash: piece.content_hash!.replace(/^[0-9a-f]{64}/, sha256Hex(bytes)),
    }));
    const last = (await Promise.all(lying.map((p) => applier.apply("sandbox-1", [p])))).pop()!;
    assert.equal(last.rejected[0]![0], pieceSeq(3));
    assert.match(
      last.rejected[0]![1],
      /^invalid content: the 300000 bytes received in pieces hash to/,
    );
    assert.equal(await workspace.cas.has(sha256Hex(other)), false);
    assert.equal(workspace.store.latest("y.bin"), undefined);
  }));
