import { type Cas, hashFile } from "../cas/mod.ts";
import { errorMessage, log } from "../log/mod.ts";
import { type ContentRange, RANGE_MAX_BYTES } from "./content_range.ts";
import { reasonWord, type WriteBackVerdict } from "./write_back_decision.ts";
import { judgeWriteBack, type WriteBackFactSources } from "./writeback_facts.ts";
import { partialReason, type Piece } from "./writeback_pieces.ts";

/** Options for {@linkcode WriteBackUploads}. */
export interface WriteBackUploadsOptions {
  /**
   * The largest content received in pieces, and the most bytes of the contents one
   * replica sends in pieces at once. @default {67108864}
   */
  maxContentBytes?: number;
  /**
   * The most bytes of all contents received in pieces at once.
   * @default {Math.max(268435456, 4 * maxContentBytes)}
   */
  maxBytes?: number;
  /** Contents received in pieces at once, across every replica. @default {32} */
  maxUploads?: number;
  /** Contents one replica sends in pieces at once. @default {2} */
  maxPerReplica?: number;
  /**
   * Another replica's content a piece was added to within this long is never dropped to
   * make room: the new one waits instead. @default {60000}
   */
  busyMs?: number;
  /** A content no piece was added to for this long is dropped. @default {1800000} */
  idleMs?: number;
  /** The clock, in ms. @default {Date.now} */
  now?: () => number;
}

/** What became of a piece (see {@linkcode WriteBackUploads.receive}). */
export type PieceReceived =
  | { held: number }
  | { complete: true }
  | { invalid: string }
  /** No room for a new content now (other replicas' contents are being received). */
  | { busy: string };

interface Upload {
  replica: string;
  hash: string;
  size: number;
  /** The bytes held, from the start: pieces come in order. */
  held: number;
  /** The temp file they are in, in the CAS's `tmp/`. */
  path: string;
  /** When a piece last added to it (or it started). */
  addedAt: number;
}

/**
 * The master's side of write-back in pieces (see `writeback_pieces.ts`): what each replica
 * has sent of a content it sends in pieces, kept in a temp file of the CAS across its
 * connections, and stored in the CAS once whole and checked.
 *
 * Pieces are taken in order: one starting past what is held adds nothing, and the answer
 * says where to go on. Everything is bounded, since a replica's messages are not trusted:
 * a piece's size, a content's size, the contents and bytes of one replica and of all, and
 * how long a content may go without a piece adding to it. Only a piece that adds bytes
 * counts as activity. A replica's new content drops its own older ones first; another
 * replica's is dropped for room only once idle for a while, and a new content that does
 * not fit otherwise is refused (`busy`) rather than starve a content still arriving.
 * Dropped contents are sent again from the start.
 */
export class WriteBackUploads {
  readonly #cas: Cas;
  readonly #o: Required<WriteBackUploadsOptions>;
  /** By replica and hash, the least recently added to first. */
  readonly #uploads = new Map<string, Upload>();
  #bytes = 0;

  /**
   * @param cas The master's CAS: the temp files go in its `tmp/`, the contents in it.
   * @param options See {@linkcode WriteBackUploadsOptions}.
   */
  constructor(cas: Cas, options: WriteBackUploadsOptions = {}) {
    this.#cas = cas;
    const maxContentBytes = options.maxContentBytes ?? 64 * 1024 * 1024;
    this.#o = {
      maxBytes: Math.max(256 * 1024 * 1024, 4 * maxContentBytes),
      maxUploads: 32,
      maxPerReplica: 2,
      busyMs: 60_000,
      idleMs: 30 * 60 * 1000,
      now: Date.now,
      ...options,
      maxContentBytes,
    };
  }

  /** How many contents are being received in pieces. */
  get size(): number {
    return this.#uploads.size;
  }

  /**
   * Keeps a piece `replica` sent of a content of `size` bytes.
   *
   * @returns How many bytes are held now, when not all; `complete` once the content is
   * whole, matches its hash, and is stored in the CAS (then no longer held here);
   * `invalid` with the reason, for a piece that cannot be one (what was held of the
   * content is dropped); `busy` when a new content does not fit now.
   */
  async receive(
    replica: string,
    range: ContentRange,
    size: number,
    bytes: Uint8Array,
  ): Promise<PieceReceived> {
    this.dropIdle();
    const problem = pieceProblem(range, size, bytes, this.#o.maxContentBytes);
    const key = `${replica}\n${range.hash}`;
    let upload = this.#uploads.get(key);
    if (problem !== null || (upload && upload.size !== size)) {
      if (upload) this.#drop(key, upload);
      if (problem !== null) return { invalid: problem };
      upload = undefined;
    }
    if (!upload) {
      if (range.offset > 0) return { held: 0 }; // dropped meanwhile: from the start
      const started = this.#start(key, replica, range.hash, size);
      if ("busy" in started) return started;
      upload = started;
    }
    if (range.offset > upload.held || range.offset + bytes.length <= upload.held) {
      return { held: upload.held }; // adds nothing: not activity either
    }
    try {
      await writeAt(upload.path, range.offset, bytes);
    } catch (error) {
      this.#drop(key, upload);
      throw error;
    }
    upload.held = range.offset + bytes.length;
    upload.addedAt = this.#o.now();
    this.#uploads.delete(key); // moved to the end: the most recently added to
    this.#uploads.set(key, upload);
    if (upload.held < size) return { held: upload.held };
    return await this.#complete(key, upload);
  }

  /**
   * Drops the contents no piece was added to for the idle time. Run by each piece, and by
   * the master at each write-back batch, so what a replica abandoned does not wait for
   * its next piece.
   */
  dropIdle(): void {
    const since = this.#o.now() - this.#o.idleMs;
    for (const [key, upload] of [...this.#uploads]) {
      if (upload.addedAt < since) this.#drop(key, upload);
    }
  }

  /** Drops every content held (the master is closing): their temp files are removed. */
  close(): void {
    for (const [key, upload] of [...this.#uploads]) this.#drop(key, upload);
  }

  async #complete(key: string, upload: Upload): Promise<PieceReceived> {
    try {
      // Checked before it is stored: a content that does not match is stored under no hash.
      const { hash } = await hashFile(upload.path);
      if (hash !== upload.hash) {
        return { invalid: `the ${upload.size} bytes received in pieces hash to "${hash}"` };
      }
      await this.#cas.putFile(upload.path);
      return { complete: true };
    } finally {
      this.#drop(key, upload);
    }
  }

  /** Starts a content, making room (see the class), or says why not. */
  #start(key: string, replica: string, hash: string, size: number): Upload | { busy: string } {
    const own = [...this.#uploads].filter(([, upload]) => upload.replica === replica);
    let ownBytes = own.reduce((sum, [, upload]) => sum + upload.size, 0);
    let ownCount = own.length;
    for (const [oldKey, old] of own) {
      if (ownCount < this.#o.maxPerReplica && ownBytes + size <= this.#o.maxContentBytes) break;
      this.#drop(oldKey, old);
      ownCount--;
      ownBytes -= old.size;
    }
    const fits = () =>
      this.#uploads.size < this.#o.maxUploads && this.#bytes + size <= this.#o.maxBytes;
    const idleSince = this.#o.now() - this.#o.busyMs;
    for (const [oldKey, old] of [...this.#uploads]) {
      if (fits()) break;
      if (old.addedAt < idleSince) this.#drop(oldKey, old);
    }
    if (!fits()) {
      return {
        busy: `${this.#uploads.size} contents of ${this.#bytes} bytes are being received in ` +
          `pieces from other replicas; no room for ${size} bytes more now`,
      };
    }
    const upload = {
      replica,
      hash,
      size,
      held: 0,
      path: this.#cas.tempPath(),
      addedAt: this.#o.now(),
    };
    this.#uploads.set(key, upload);
    this.#bytes += size;
    return upload;
  }

  #drop(key: string, upload: Upload): void {
    if (this.#uploads.get(key) !== upload) return;
    this.#uploads.delete(key);
    this.#bytes -= upload.size;
    try {
      Deno.removeSync(upload.path);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) {
        log("warn", "could not remove a write-back's temp file", { path: upload.path, error });
      }
    }
  }
}

/**
 * Writes `bytes` into the file at `path` from `offset`, creating it: the bytes through
 * Deno's blocking pool (a piece is up to 1 MiB), not on the master's main thread.
 */
async function writeAt(path: string, offset: number, bytes: Uint8Array): Promise<void> {
  const file = Deno.openSync(path, { write: true, create: true });
  try {
    file.seekSync(offset, Deno.SeekMode.Start);
    let done = 0;
    while (done < bytes.length) done += await file.write(bytes.subarray(done));
  } finally {
    file.close();
  }
}

/** What {@linkcode takePiece} made of a piece. */
export type PieceTaken =
  /** Answered under the piece's own number: how much is held, or why it is no piece. */
  | { answer: [bigint, string] }
  /** The change refused at its piece, for good (its paths, filters or size). */
  | { refused: Extract<WriteBackVerdict, { accept: false }> }
  /** The content is whole and stored: the change is to be decided and applied. */
  | { whole: true };

/**
 * Takes a piece of a change sent in pieces (see `writeback_pieces.ts`). The change is
 * judged first as if its content were here: what does not depend on the content (its
 * paths, filters, size) refuses it at once, before anything is kept; a conflict is
 * decided once the content is whole, as for any change.
 */
export async function takePiece(
  uploads: WriteBackUploads,
  facts: WriteBackFactSources,
  sandboxId: string,
  { piece, change, range }: Piece,
): Promise<PieceTaken> {
  const verdict = await judgeWriteBack(facts, sandboxId, change, { contentArriving: true });
  if (!verdict.accept && reasonWord(verdict.message) !== "conflict") return { refused: verdict };
  // Stored already (the same content changed elsewhere, or a master killed after storing it
  // and before recording the change): nothing more to receive.
  if (await facts.cas.has(range.hash)) return { whole: true };
  const size = Number(change.size);
  let received: PieceReceived;
  try {
    received = await uploads.receive(sandboxId, range, size, piece.content_bytes!);
  } catch (error) {
    // Never an outcome (a full disk, say): the change is then sent whole, and decided so.
    return { answer: [piece.local_seq, `failed: could not keep a piece: ${errorMessage(error)}`] };
  }
  if ("held" in received) return { answer: [piece.local_seq, partialReason(received.held, size)] };
  if ("invalid" in received) {
    return { answer: [piece.local_seq, `invalid content: ${received.invalid}`] };
  }
  if ("busy" in received) return { answer: [piece.local_seq, `busy: ${received.busy}`] };
  return { whole: true };
}

/** Why a piece cannot be one of a content of `size` bytes (`null`: it can). Pure. */
export function pieceProblem(
  range: ContentRange,
  size: number,
  bytes: Uint8Array,
  maxContentBytes: number,
): string | null {
  if (bytes.length !== range.length) {
    return `a piece of ${range.length} bytes carries ${bytes.length}`;
  }
  if (bytes.length > RANGE_MAX_BYTES) {
    return `a piece of ${bytes.length} bytes is over the ${RANGE_MAX_BYTES} a piece may carry`;
  }
  if (!Number.isSafeInteger(size) || range.offset + range.length > size) {
    return `a piece of ${range.length} bytes at ${range.offset} runs past the content's ${size}`;
  }
  if (size > maxContentBytes) {
    return `a content of ${size} bytes is over the ${maxContentBytes} received in pieces`;
  }
  return null;
}
