/**
 * The master's contents received in pieces (`WriteBackUploads`) on a real CAS: bounded by
 * count, per replica, bytes and idle time, their temp files removed when dropped.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Cas, sha256Hex } from "../../lib/cas/mod.ts";
import {
  pieceProblem,
  type PieceReceived,
  WriteBackUploads,
} from "../../lib/replication/writeback_uploads.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { pseudoRandomBytes } from "./_harness.ts";

/** The temp files in the CAS's `tmp/` folder. */
async function temps(cas: Cas): Promise<number> {
  let count = 0;
  for await (const _ of Deno.readDir(join(cas.root, "tmp"))) count++;
  return count;
}

/** The first piece of a content of `size` bytes (seeded by `seed`), `length` bytes long. */
function firstPiece(seed: number, size: number, length: number) {
  const bytes = pseudoRandomBytes(size, seed);
  return {
    range: { hash: sha256Hex(bytes), offset: 0, length },
    bytes,
    slice: bytes.subarray(0, length),
  };
}

/** Sends the second piece of `piece`'s content (1,000 bytes from 1,000), declaring `size`. */
function secondPiece(
  uploads: WriteBackUploads,
  replica: string,
  piece: ReturnType<typeof firstPiece>,
  size = piece.bytes.length,
): Promise<PieceReceived> {
  const range = { ...piece.range, offset: 1000 };
  return uploads.receive(replica, range, size, piece.bytes.subarray(1000, 2000));
}

Deno.test("pieceProblem: what a piece cannot be (table)", () => {
  const hash = "a".repeat(64);
  const cases: Array<[string, { offset: number; length: number }, number, number, string | null]> =
    [
      ["fits", { offset: 0, length: 10 }, 10, 10, null],
      ["ends the content", { offset: 90, length: 10 }, 100, 10, null],
      ["carries fewer bytes than its range", { offset: 0, length: 10 }, 100, 9, "carries 9"],
      ["runs past the content", { offset: 95, length: 10 }, 100, 10, "runs past"],
      ["of a negative size", { offset: 0, length: 10 }, -5, 10, "runs past"],
      ["over 1 MiB", { offset: 0, length: 2 << 20 }, 4 << 20, 2 << 20, "over the 1048576"],
      ["of a content over the bound", { offset: 0, length: 10 }, 1001, 10, "over the 1000"],
    ];
  for (const [name, range, size, carried, expected] of cases) {
    const problem = pieceProblem({ hash, ...range }, size, new Uint8Array(carried), 1000);
    if (expected === null) assert.equal(problem, null, name);
    else assert.ok(problem?.includes(expected), `${name}: ${problem}`);
  }
});

Deno.test("WriteBackUploads keeps a content's pieces in order until whole, then stores it and drops its temp file", () =>
  withTempDir(async (root) => {
    const cas = await Cas.open(join(root, "cas"));
    const uploads = new WriteBackUploads(cas);
    const bytes = pseudoRandomBytes(250_000, 1);
    const hash = sha256Hex(bytes);
    const piece = (offset: number, length: number) =>
      uploads.receive(
        "r1",
        { hash, offset, length },
        bytes.length,
        bytes.subarray(offset, offset + length),
      );
    assert.deepEqual(await piece(100_000, 100_000), { held: 0 }, "nothing held: from the start");
    assert.equal(uploads.size, 0);
    assert.deepEqual(await piece(0, 100_000), { held: 100_000 });
    assert.deepEqual(
      await piece(50_000, 100_000),
      { held: 150_000 },
      "overlapping: the rest added",
    );
    assert.equal(await temps(cas), 1);
    assert.deepEqual(await piece(150_000, 100_000), { complete: true });
    assert.deepEqual(await cas.readBytes(hash), bytes);
    assert.equal(uploads.size, 0);
    assert.equal(await temps(cas), 0);
    // Another size for the same hash starts over (a replica's answer lost, its content changed).
    const other = firstPiece(2, 300_000, 1000);
    await uploads.receive("r1", other.range, 300_000, other.slice);
    assert.deepEqual(
      await secondPiece(uploads, "r1", other, 400_000),
      { held: 0 },
    );
  }));

Deno.test("WriteBackUploads: a replica's new content drops its own older ones; another's only once idle, else the new one waits", () =>
  withTempDir(async (root) => {
    const cas = await Cas.open(join(root, "cas"));
    let now = 0;
    const uploads = new WriteBackUploads(cas, {
      maxUploads: 3,
      maxBytes: 100_000,
      maxContentBytes: 40_000,
      busyMs: 60_000,
      now: () => now,
    });
    const start = async (replica: string, seed: number, size: number) => {
      const piece = firstPiece(seed, size, 1000);
      return { piece, answer: await uploads.receive(replica, piece.range, size, piece.slice) };
    };
    /** Adds the second piece: whether the content was still held. */
    const going = async (replica: string, piece: ReturnType<typeof firstPiece>) => {
      const answer = await secondPiece(uploads, replica, piece);
      return "held" in answer && answer.held >= 2000; // dropped: from the start (0)
    };
    const a = (await start("r1", 1, 10_000)).piece;
    const b = (await start("r1", 2, 10_000)).piece;
    // A third from r1: its oldest goes (two per replica).
    await start("r1", 3, 10_000);
    assert.deepEqual(
      await secondPiece(uploads, "r1", a),
      { held: 0 },
    );
    assert.equal(await going("r1", b), true);
    // 35,000 bytes more from r1: over its 40,000 together, its older ones go.
    await start("r1", 4, 35_000);
    assert.equal(uploads.size, 1);
    // Others fill the rest; a fourth content finds no room while they keep arriving.
    const c = (await start("r2", 5, 30_000)).piece;
    const d = (await start("r3", 6, 30_000)).piece;
    now = 30_000;
    const refused = await start("r4", 7, 10_000);
    assert.ok("busy" in refused.answer, JSON.stringify(refused.answer));
    assert.equal(uploads.size, 3);
    // A piece that adds nothing (the first again) is no sign of life: c goes idle.
    now = 59_000;
    assert.deepEqual(await uploads.receive("r2", c.range, 30_000, c.slice), { held: 1000 });
    assert.equal(await going("r3", d), true); // d is added to at 59 s
    now = 100_000;
    assert.deepEqual((await start("r4", 7, 10_000)).answer, { held: 1000 });
    assert.equal(uploads.size, 3, "the least recently added to idle one, r1's, made room");
    const r4 = firstPiece(8, 35_000, 1000);
    const more = await uploads.receive("r5", r4.range, 35_000, r4.slice);
    assert.deepEqual(more, { held: 1000 }, "c, idle for 100 s, made room");
    assert.equal(await going("r3", d), true, "d, added to 41 s ago, kept");
    assert.equal(await going("r2", c), false, "c dropped");
    assert.equal(await temps(cas), uploads.size);
    uploads.close();
    assert.equal(uploads.size, 0);
    assert.equal(await temps(cas), 0);
  }));

Deno.test("WriteBackUploads drops a content no piece was added to for the idle time", () =>
  withTempDir(async (root) => {
    const cas = await Cas.open(join(root, "cas"));
    let now = 0;
    const uploads = new WriteBackUploads(cas, { idleMs: 60_000, now: () => now });
    const piece = firstPiece(1, 10_000, 1000);
    await uploads.receive("r1", piece.range, 10_000, piece.slice);
    now = 59_000;
    await secondPiece(uploads, "r1", piece);
    now = 118_000;
    assert.equal(uploads.size, 1, "added to 59 s ago: kept");
    const next = { ...piece.range, offset: 2000 };
    now = 120_000;
    assert.deepEqual(
      await uploads.receive("r1", next, 10_000, piece.bytes.subarray(2000, 3000)),
      { held: 0 },
      "61 s without a piece: dropped, from the start",
    );
    assert.equal(await temps(cas), 0);
  }));
