import type { Cas } from "../cas/mod.ts";
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
  /** Content bytes per batch (a larger single entry goes alone). @default {8388608} */
  maxBatchBytes?: number;
  /** Milliseconds to wait for an answer before giving up on the connection. @default {60000} */
  answerTimeoutMs?: number;
}

/** The connection's answer did not come in time. */
export class WritebackTimeoutError extends Error {
  constructor(ms: number) {
    super(`No WriteBackResult within ${ms} ms`);
    this.name = "WritebackTimeoutError";
  }
}

/**
 * Sends journaled local changes to the master for one connection (seed 001 "Sandbox →
 * Agent"): oldest first, in `WriteBack` batches bounded by count and bytes, one batch in
 * flight, each answered by a `WriteBackResult` that marks its entries accepted or
 * rejected. Entries sent but unanswered when a connection ends stay open and are sent
 * again on the next one; the master answers a repeat from its records, so no entry is
 * ever applied twice. A new loop is made for each connection.
 */
export class WritebackLoop {
  readonly #o: Required<WritebackLoopOptions>;
  #answer: ((result: WriteBackResultMessage | null) => void) | null = null;
  #wake: (() => void) | null = null;
  #stopped = false;
  readonly #unsubscribe: () => void;

  /** @param options See {@linkcode WritebackLoopOptions}. */
  constructor(options: WritebackLoopOptions) {
    this.#o = {
      maxEntries: 256,
      maxBatchBytes: 8 * 1024 * 1024,
      answerTimeoutMs: 60_000,
      ...options,
    };
    this.#unsubscribe = options.journal.onAppend(() => this.#notify());
  }

  /** Hands the master's answer to the batch in flight. */
  onResult(result: WriteBackResultMessage): void {
    const answer = this.#answer;
    this.#answer = null;
    if (answer) answer(result);
    else {
      // An answer with no batch in flight can only repeat known outcomes: record them anyway.
      this.#o.onResolved(this.#resolve(result));
    }
  }

  /** Ends the loop (the connection is gone). */
  stop(): void {
    this.#stopped = true;
    this.#unsubscribe();
    this.#notify();
    const answer = this.#answer;
    this.#answer = null;
    answer?.(null);
  }

  /**
   * Runs until {@linkcode WritebackLoop.stop}.
   *
   * @throws {WritebackTimeoutError} When an answer does not come in time.
   * @throws Whatever sending throws (the connection closed).
   */
  async run(): Promise<void> {
    while (!this.#stopped) {
      const batch = await this.#nextBatch();
      if (batch.length === 0) {
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
          if (this.#stopped) resolve();
        });
        continue;
      }
      const answered = new Promise<WriteBackResultMessage | null>((resolve) =>
        this.#answer = resolve
      );
      await this.#o.send({ type: "WriteBack", sandbox_id: this.#o.sandboxId, entries: batch });
      this.#o.journal.markSent(batch.map((entry) => Number(entry.local_seq)));
      const result = await withTimeout(answered, this.#o.answerTimeoutMs);
      if (result === null) return; // stopped
      this.#o.onResolved(this.#resolve(result));
    }
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
    for (const entry of this.#o.journal.open(this.#o.maxEntries)) {
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
        if (batch.length > 0 && bytes + size > this.#o.maxBatchBytes) break;
        try {
          content = await this.#o.cas.readBytes(entry.hash!);
        } catch (error) {
          this.#refuse(entry, `content unavailable: ${(error as Error).message}`);
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

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new WritebackTimeoutError(ms)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
