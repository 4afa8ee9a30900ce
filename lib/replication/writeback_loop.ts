import type { Cas } from "../cas/mod.ts";
import { SYSTEM_CLOCK, type Timers } from "../concurrency/mod.ts";
import { errorMessage } from "../log/mod.ts";
import type { WireMessage, WriteBackEntry, WriteBackResultMessage } from "../wire/mod.ts";
import type { JournalEntry, WriteJournal } from "./write_journal.ts";

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
  /** Largest content sent in one entry; larger entries are refused here. */
  maxContentBytes: number;
  /** Called with the entries each answer resolved. */
  onResolved: (entries: JournalEntry[]) => void;
  /** Called with an entry refused here (too large, content gone). */
  onRefused: (entry: JournalEntry) => void;
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
}

export type { Timers } from "../concurrency/mod.ts";

/** The connection's answer did not come in time. */
export class WritebackTimeoutError extends Error {
  constructor(ms: number) {
    super(`No WriteBackResult within ${ms} ms`);
    this.name = "WritebackTimeoutError";
  }
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
  readonly #unsubscribe: () => void;

  /** @param options See {@linkcode WritebackLoopOptions}. */
  constructor(options: WritebackLoopOptions) {
    this.#o = {
      maxEntries: 256,
      maxBatchBytes: 8 * 1024 * 1024,
      answerTimeoutMs: 60_000,
      timers: SYSTEM_CLOCK,
      ...options,
    };
    this.#batchBytes = Math.min(FIRST_BATCH_BYTES, this.#o.maxBatchBytes);
    this.#unsubscribe = options.journal.onAppend(() => this.#notify());
  }

  /** Hands the master's answer to the oldest batch in flight. */
  onResult(result: WriteBackResultMessage): void {
    const answer = this.#answers.shift();
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
      const batch = this.#answers.length < BATCHES_IN_FLIGHT ? await this.#nextBatch() : [];
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
      await this.#o.send({ type: "WriteBack", sandbox_id: this.#o.sandboxId, entries: batch });
      if (this.#answers.length === 1) this.#armAnswerTimer();
      const sent = batch.map((entry) => Number(entry.local_seq));
      this.#o.journal.markSent(sent);
      this.#sentThrough = sent[sent.length - 1]!;
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

  #resolve(result: WriteBackResultMessage): JournalEntry[] {
    return this.#o.journal.resolve(
      result.accepted.map(([seq, master]) => [Number(seq), Number(master)]),
      result.rejected.map(([seq, reason]) => [Number(seq), reason]),
    );
  }

  /** The next batch from the journal, refusing entries too large to send. */
  async #nextBatch(): Promise<WriteBackEntry[]> {
    const batch: WriteBackEntry[] = [];
    let bytes = 0;
    for (const entry of this.#o.journal.open(this.#o.maxEntries, this.#sentThrough)) {
      let content: Uint8Array | null = null;
      if (entry.operation === "write") {
        const size = await this.#o.cas.objectSize(entry.hash!) ?? entry.size;
        if (size > this.#o.maxContentBytes) {
          this.#refuse(
            entry,
            `too large: ${size} bytes exceed the write-back limit of ${this.#o.maxContentBytes}`,
          );
          continue;
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
    return batch;
  }

  #refuse(entry: JournalEntry, reason: string): void {
    const refused = this.#o.journal.refuse(entry.localSeq, reason);
    if (refused) this.#o.onRefused(refused);
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
