import type { Cas } from "../cas/mod.ts";
import { SYSTEM_CLOCK, type Timers } from "../concurrency/mod.ts";
import { bytesForPeople, errorMessage, log } from "../log/mod.ts";
import type { WireMessage, WriteBackEntry, WriteBackResultMessage } from "../wire/mod.ts";
import type { JournalEntry, WriteJournal } from "./write_journal.ts";
import { rangeKey } from "./content_range.ts";
import { REMOVAL_QUIET_MS, removalWait } from "./removal_hold.ts";
import {
  changeOfPiece,
  type LostBatch,
  parsePartial,
  pieceSeq,
  type WriteBackPieces,
} from "./writeback_pieces.ts";

/** Options for {@linkcode WritebackLoop}. */
export interface WritebackLoopOptions {
  /** The replica's journal. */
  journal: WriteJournal;
  /** The replica's CAS, holding every journaled content. */
  cas: Cas;
  /** The replica's identity. */
  sandboxId: string;
  /** Sends a message to the master on the current connection. */
  send: (message: WireMessage) => Promise<void>;
  /** Largest content written back (the write-back limit); larger entries are refused here. */
  maxContentBytes: number;
  /**
   * Largest content sent whole in one entry: what one message of the connection carries. A
   * larger content within `maxContentBytes` goes in pieces (see `WriteBackPieces`), and is
   * refused here when the master takes none of them. @default {maxContentBytes}
   */
  maxWholeBytes?: number;
  /** Called with the entries each answer resolved. */
  onResolved: (entries: JournalEntry[]) => void;
  /** Called with an entry refused here (too large, content gone). */
  onRefused: (entry: JournalEntry) => void;
  /**
   * What is sent in pieces, across connections (see `WriteBackPieces`). Without it,
   * every change is sent whole.
   */
  pieces?: WriteBackPieces | null;
  /** Entries per batch. @default {256} */
  maxEntries?: number;
  /**
   * Content bytes per batch (a larger single entry goes alone). A connection's first batch
   * holds at most {@linkcode FIRST_BATCH_BYTES}, and each answer doubles the limit up to
   * this one. @default {8388608}
   */
  maxBatchBytes?: number;
  /** Milliseconds to wait for an answer before giving up on the connection. @default {60000} */
  answerTimeoutMs?: number;
  /** The timers the answer timeout uses (a test fires them itself). @default {setTimeout, clearTimeout} */
  timers?: Timers;
  /**
   * Whether the workspace's folder or data folder is gone: then no removal is sent (see
   * `removalWait`). @default {() => false}
   */
  workspaceGone?: () => boolean;
  /**
   * How long no removal may have been journaled before removals are sent (see
   * `removalWait`). @default {REMOVAL_QUIET_MS}
   */
  removalQuietMs?: number;
}

export type { Timers } from "../concurrency/mod.ts";

/** The connection's answer did not come in time. */
export class WritebackTimeoutError extends Error {
  constructor(ms: number) {
    super(`No WriteBackResult within ${ms} ms`);
    this.name = "WritebackTimeoutError";
  }
}

/** A piece sent (see `WriteBackPieces`): of which change and content, and where. */
interface PieceInFlight {
  localSeq: number;
  hash: string;
  offset: number;
  length: number;
}

/** Batches sent and not yet answered, at most: the next is sent while earlier ones apply. */
const BATCHES_IN_FLIGHT = 4;
/**
 * Content bytes of a connection's first batch. Each answer doubles the limit (up to
 * `maxBatchBytes`): a connection that is cut every few tens of kilobytes still gets a
 * batch through and answered, where a backlog sent as one large batch would be cut on
 * every connection and never get through.
 */
export const FIRST_BATCH_BYTES = 16 * 1024;

/**
 * Sends journaled local changes to the master for one connection (PROTOCOL.md §6): oldest
 * first, in `WriteBack` batches bounded by count and bytes, each answered by a
 * `WriteBackResult` that marks its entries accepted or rejected. A few batches are in flight
 * at once, so a change is sent while earlier ones are still being applied; the
 * master applies a replica's batches one after another and answers them in order.
 * Entries sent but unanswered when a connection ends stay open and are sent again on the
 * next one; the master answers a repeat from its records, so no entry is ever applied
 * twice. A new loop is made for each connection.
 */
export class WritebackLoop {
  readonly #o: Required<WritebackLoopOptions>;
  /** The answers awaited, oldest batch first. */
  readonly #answers: Array<(result: WriteBackResultMessage | null) => void> = [];
  /** The last journal entry sent on this connection: later batches start after it. */
  #sentThrough = 0;
  /** The first failure of a batch in flight (no answer in time, or recording it failed). */
  #failure: unknown = null;
  /** Limits the wait for the oldest batch's answer: the master answers batches in order. */
  #answerTimer: unknown;
  #wake: (() => void) | null = null;
  /** Something happened since the loop last looked (an append, an answer): look again. */
  #woken = false;
  #stopped = false;
  /** This connection's content bytes per batch now (see {@linkcode FIRST_BATCH_BYTES}). */
  #batchBytes: number;
  /** The content bytes of each batch in flight, oldest first, and whether it is a piece. */
  readonly #inFlight: LostBatch[] = [];
  /** The piece in flight, if any: nothing else is sent until it is answered. */
  #piece: PieceInFlight | null = null;
  /** This connection's master answered a piece as a master that takes none: all go whole. */
  #piecesRefused = false;
  /**
   * Changes too large to go whole whose piece the master answered as taking none, with what
   * it said: refused here, since they cannot go whole either.
   */
  readonly #refusedInPieces = new Map<number, string>();
  readonly #unsubscribe: () => void;
  /** Wakes the loop once the removals it holds back may go (see `removalWait`). */
  #removalTimer: unknown;

  /** @param options See {@linkcode WritebackLoopOptions}. */
  constructor(options: WritebackLoopOptions) {
    this.#o = {
      maxEntries: 256,
      maxBatchBytes: 8 * 1024 * 1024,
      answerTimeoutMs: 60_000,
      timers: SYSTEM_CLOCK,
      pieces: null,
      workspaceGone: () => false,
      removalQuietMs: REMOVAL_QUIET_MS,
      maxWholeBytes: options.maxContentBytes,
      ...options,
    };
    this.#batchBytes = Math.min(FIRST_BATCH_BYTES, this.#o.maxBatchBytes);
    this.#unsubscribe = options.journal.onAppend(() => this.#notify());
  }

  /** Hands the master's answer to the oldest batch in flight. */
  onResult(result: WriteBackResultMessage): void {
    const answer = this.#answers.shift();
    if (this.#inFlight.shift()?.piece) this.#pieceAnswered(result);
    this.#armAnswerTimer(); // for the batch now oldest, if any
    if (answer) {
      this.#batchBytes = Math.min(2 * this.#batchBytes, this.#o.maxBatchBytes);
      answer(result);
    } else {
      // An answer with no batch in flight can only repeat known outcomes: record them anyway.
      this.#o.onResolved(this.#resolve(result));
    }
    this.#notify(); // a place in the window is free
  }

  /** Ends the loop (the connection is gone). */
  stop(): void {
    this.#stopped = true;
    this.#unsubscribe();
    this.#o.timers.clear(this.#answerTimer);
    this.#o.timers.clear(this.#removalTimer);
    this.#o.pieces?.connectionEnded(this.#inFlight.splice(0));
    for (const answer of this.#answers.splice(0)) answer(null);
    this.#notify();
  }

  /**
   * Runs until {@linkcode WritebackLoop.stop}.
   *
   * @throws {WritebackTimeoutError} When an answer does not come in time.
   * @throws Whatever sending throws (the connection closed).
   */
  async run(): Promise<void> {
    while (!this.#stopped) {
      if (this.#failure !== null) throw this.#failure;
      this.#woken = false;
      const { batch, bytes, piece } = this.#answers.length < BATCHES_IN_FLIGHT && !this.#piece
        ? await this.#nextBatch()
        : { batch: [], bytes: 0, piece: null };
      if (batch.length === 0) {
        // An append while the journal was read has set #woken: it must not be slept through.
        if (!this.#woken) {
          await new Promise<void>((resolve) => {
            this.#wake = resolve;
            if (this.#stopped || this.#failure !== null) resolve();
          });
        }
        continue;
      }
      const answered = new Promise<WriteBackResultMessage | null>((resolve) =>
        this.#answers.push(resolve)
      );
      this.#inFlight.push({ bytes, piece: piece !== null });
      this.#piece = piece;
      await this.#o.send({ type: "WriteBack", sandbox_id: this.#o.sandboxId, entries: batch });
      if (this.#answers.length === 1) this.#armAnswerTimer();
      if (piece) {
        // Sent again, piece after piece, until its own outcome comes.
        this.#o.journal.markSent([piece.localSeq]);
      } else {
        const sent = batch.map((entry) => Number(entry.local_seq));
        this.#o.journal.markSent(sent);
        this.#sentThrough = sent[sent.length - 1]!;
      }
      answered.then((result) => {
        if (result !== null) this.#o.onResolved(this.#resolve(result));
      }).catch((error) => this.#fail(error)); // recording the answer failed: end the loop
    }
  }

  /** Times the wait for the oldest batch in flight (from when it became the oldest). */
  #armAnswerTimer(): void {
    this.#o.timers.clear(this.#answerTimer);
    this.#answerTimer = undefined;
    if (this.#answers.length === 0 || this.#stopped) return;
    const ms = this.#o.answerTimeoutMs;
    this.#answerTimer = this.#o.timers.set(() => this.#fail(new WritebackTimeoutError(ms)), ms);
  }

  #fail(error: unknown): void {
    this.#failure ??= error;
    this.#notify();
  }

  /**
   * A piece's answer: how much the master holds of its change's content (the next piece
   * starts there); or, answered otherwise, that this master takes no pieces (its change
   * goes whole). Its change's own outcome, when the piece completed the content, is
   * recorded with the others ({@linkcode WritebackLoop.#resolve}).
   */
  #pieceAnswered(result: WriteBackResultMessage): void {
    const piece = this.#piece;
    this.#piece = null;
    if (piece === null) return;
    const change = BigInt(piece.localSeq);
    const seqs = [...result.accepted, ...result.rejected].map(([seq]) => seq);
    if (!seqs.includes(pieceSeq(piece.localSeq)) && !seqs.includes(change)) {
      // Not answered at all: sent again, it would be again and again.
      log("warn", "the master did not answer a piece of a write-back; the change goes whole", {
        local_seq: piece.localSeq,
      });
      this.#refusedInPieces.set(piece.localSeq, "it did not answer a piece");
      this.#piecesRefused = true;
      this.#o.pieces?.forget(piece.localSeq);
      return;
    }
    // Its own outcome came (the last piece): done here, even before the journal records
    // the answer, so the loop's next look does not send it again.
    if (seqs.includes(change)) this.#sentThrough = Math.max(this.#sentThrough, piece.localSeq);
    for (const [seq, reason] of result.rejected) {
      if (changeOfPiece(seq) !== change) continue;
      const partial = parsePartial(reason);
      if (partial !== null) {
        this.#o.pieces?.heldBy(piece.localSeq, piece.hash, partial.held, piece.length);
        continue;
      }
      log("info", "the master does not take this change in pieces now; it goes whole", {
        local_seq: piece.localSeq,
        reason,
      });
      this.#refusedInPieces.set(piece.localSeq, reason);
      this.#piecesRefused = true;
      this.#o.pieces?.forget(piece.localSeq);
    }
  }

  /** Records an answer's outcomes (a piece's answer is none: see #pieceAnswered). */
  #resolve(result: WriteBackResultMessage): JournalEntry[] {
    const accepted = result.accepted.filter(([seq]) => changeOfPiece(seq) === null)
      .map(([seq, master]): [number, number] => [Number(seq), Number(master)]);
    const rejected = result.rejected.filter(([seq]) => changeOfPiece(seq) === null)
      .map(([seq, reason]): [number, string] => [Number(seq), reason]);
    for (const [seq] of [...accepted, ...rejected]) this.#o.pieces?.forget(seq);
    return this.#o.journal.resolve(accepted, rejected);
  }

  /**
   * The next batch from the journal, refusing entries too large to send; or, for a change
   * sent in pieces, its next piece alone, once nothing else is in flight.
   */
  async #nextBatch(): Promise<
    { batch: WriteBackEntry[]; bytes: number; piece: PieceInFlight | null }
  > {
    const batch: WriteBackEntry[] = [];
    let bytes = 0;
    let removalsHeld: boolean | undefined; // looked up at the batch's first removal
    for (const entry of this.#o.journal.open(this.#o.maxEntries, this.#sentThrough)) {
      // A removal, and all after it, wait while removals keep coming (an `rm -rf` of the
      // whole folder), and never go once the folder is gone.
      if (entry.deleted && (removalsHeld ??= this.#holdRemovals())) break;
      let content: Uint8Array | null = null;
      if (entry.operation === "write") {
        const size = await this.#o.cas.objectSize(entry.hash!) ?? entry.size;
        if (size > this.#o.maxContentBytes) {
          this.#refuse(
            entry,
            `too large: ${bytesForPeople(size)}, over this replica's write-back limit of ${
              bytesForPeople(this.#o.maxContentBytes)
            } (--max-writeback-bytes)`,
          );
          continue;
        }
        // More than one message carries: in pieces whatever the link, or not at all.
        const whole = size <= this.#o.maxWholeBytes;
        const refusedInPieces = this.#refusedInPieces.get(entry.localSeq);
        if (!whole && (refusedInPieces !== undefined || this.#o.pieces === null)) {
          this.#refuse(
            entry,
            `too large: ${bytesForPeople(size)}, more than one message carries (${
              bytesForPeople(this.#o.maxWholeBytes)
            }), ` +
              `and the master took no piece of it${
                refusedInPieces === undefined ? "" : ` (${refusedInPieces})`
              }`,
          );
          continue;
        }
        if (!whole || (!this.#piecesRefused && this.#o.pieces?.inPieces(size))) {
          // Alone, with nothing else in flight: the answers then say plainly how far it got.
          if (batch.length > 0 || this.#answers.length > 0) break;
          const piece = await this.#pieceOf(entry, size);
          if (piece !== null) return piece;
          // Not stored here to read a slice of: too large to read whole, it goes without its
          // bytes (the master holds them, as for a chmod of a file it sent, or says it does
          // not); else read whole below (through the tier, or refused).
          if (!whole) {
            batch.push(toWire(entry, null));
            return { batch, bytes: 0, piece: null };
          }
        }
        if (batch.length > 0 && bytes + size > this.#batchBytes) break;
        try {
          content = await this.#o.cas.readBytes(entry.hash!);
        } catch (error) {
          this.#refuse(entry, `content unavailable: ${errorMessage(error)}`);
          continue;
        }
        bytes += content.length;
      }
      batch.push(toWire(entry, content));
    }
    return { batch, bytes, piece: null };
  }

  /** The next piece of a change sent in pieces (`null`: its content is not stored here). */
  async #pieceOf(
    entry: JournalEntry,
    size: number,
  ): Promise<{ batch: WriteBackEntry[]; bytes: number; piece: PieceInFlight } | null> {
    const hash = entry.hash!;
    const { offset, length } = this.#o.pieces!.nextPiece(
      entry.localSeq,
      hash,
      size,
      this.#o.maxWholeBytes,
    );
    const bytes = await this.#o.cas.readContentRange(hash, offset, length).catch(() => null);
    if (bytes === null || bytes.length !== length) return null;
    const wire = toWire(entry, bytes);
    const piece = { localSeq: entry.localSeq, hash, offset, length };
    return {
      batch: [{
        ...wire,
        local_seq: pieceSeq(entry.localSeq),
        content_hash: rangeKey({ hash, offset, length }),
        size: BigInt(size),
      }],
      bytes: length,
      piece,
    };
  }

  #refuse(entry: JournalEntry, reason: string): void {
    const refused = this.#o.journal.refuse(entry.localSeq, reason);
    if (refused) this.#o.onRefused(refused);
  }

  /** Whether removals must wait now; if only for a while, the loop is woken then. */
  #holdRemovals(): boolean {
    const wait = removalWait(
      this.#o.journal.pendingRemovals(),
      Date.now(),
      this.#o.workspaceGone(),
      this.#o.removalQuietMs,
    );
    if (wait === 0) return false;
    this.#o.timers.clear(this.#removalTimer);
    if (wait !== null) this.#removalTimer = this.#o.timers.set(() => this.#notify(), wait);
    return true;
  }

  #notify(): void {
    this.#woken = true;
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }
}

/** The wire form of a journal entry. Pure. */
export function toWire(entry: JournalEntry, content: Uint8Array | null): WriteBackEntry {
  const operation: WriteBackEntry["operation"] = entry.operation === "write"
    ? { type: "Write" }
    : entry.operation === "delete"
    ? { type: "Delete" }
    : entry.operation === "chmod"
    ? { type: "Chmod" }
    : { type: "Rename", new_path: entry.newPath! };
  return {
    local_seq: BigInt(entry.localSeq),
    filepath: entry.path,
    operation,
    content_hash: entry.hash,
    content_bytes: content,
    // The bytes are the truth: a capture racing a writer may have noted a stale size.
    size: BigInt(content?.length ?? entry.size),
    permissions: BigInt(entry.mode),
    is_deletion: entry.deleted,
    master_rowid_seen: BigInt(entry.masterSeen),
  };
}
