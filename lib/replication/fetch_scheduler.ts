import { sharedWork } from "../concurrency/mod.ts";
import type { BudgetHolder, ByteBudget } from "../net/mod.ts";
import type { WireMessage } from "../wire/mod.ts";

/** Options for {@linkcode FetchScheduler}. */
export interface FetchSchedulerOptions {
  /**
   * Prepares the answer to a fetch (reads and verifies content); `next` are the hashes the
   * same connection queued after it, at most {@linkcode NEXT_MAX}, for a read ahead.
   */
  answer(hash: string, maxPayload: number, next: readonly string[]): Promise<WireMessage>;
  /** Answers prepared at once over every connection. @default {2} */
  concurrency?: number;
  /** Fetches one connection may have queued or unsent; past it the connection is closed. @default {256} */
  maxPerConnection?: number | undefined;
  /** Fetches queued over every connection; past it the asking connection is closed. @default {4096} */
  maxTotal?: number;
  /** Budget of answer bytes prepared and not yet sent, per connection and in all. */
  sendBudget?: ByteBudget;
}

/** Hashes queued next on the same connection handed to an answer at most. */
export const NEXT_MAX = 32;

/** One connection's side of the scheduler. */
export interface FetchClient {
  /** Its largest frame payload. */
  readonly maxPayload: number;
  /** Sends a prepared answer ahead of queued notifications. */
  send(answer: WireMessage): Promise<void>;
  /** Closes the connection with a reason. */
  close(reason: string): void;
}

interface Queue {
  client: FetchClient;
  hashes: string[];
  /** Fetches queued, being prepared or being sent. */
  outstanding: number;
  unsentBytes: number;
  holder: BudgetHolder;
  closed: boolean;
}

/**
 * Serves the content fetches of every replica connection fairly: one queue per
 * connection, taken round-robin, a few answers prepared at once, and a turn of the event
 * loop between two answers, so a peer that asks for the same large object hundreds of
 * times cannot hold up `/health`, heartbeats or another replica. Concurrent requests for
 * one hash share one read. A connection that queues more than its bound is closed (a
 * replica keeps at most 64 in flight), and a closed connection's queue is dropped.
 */
export class FetchScheduler {
  readonly #o: FetchSchedulerOptions;
  readonly #concurrency: number;
  readonly #maxPerConnection: number;
  readonly #maxTotal: number;
  readonly #queues = new Map<FetchClient, Queue>();
  readonly #order: Queue[] = [];
  readonly #preparing = new Map<string, Promise<WireMessage>>();
  #next = 0;
  #queued = 0;
  #running = 0;

  /** @param options See {@linkcode FetchSchedulerOptions}. */
  constructor(options: FetchSchedulerOptions) {
    this.#o = options;
    this.#concurrency = options.concurrency ?? 2;
    this.#maxPerConnection = options.maxPerConnection ?? 256;
    this.#maxTotal = options.maxTotal ?? 4096;
  }

  /** Fetches waiting over every connection (for tests and metrics). */
  get queued(): number {
    return this.#queued;
  }

  /**
   * Queues a fetch of `hash` for `client`; never waits, so the connection keeps being read.
   *
   * @returns False when the client was closed for asking too much.
   */
  request(client: FetchClient, hash: string): boolean {
    let queue = this.#queues.get(client);
    if (!queue) {
      const created: Queue = {
        client,
        hashes: [],
        outstanding: 0,
        unsentBytes: 0,
        holder: { evict: (reason) => this.#closeQueue(created, reason) },
        closed: false,
      };
      queue = created;
      this.#queues.set(client, queue);
      this.#order.push(queue);
    }
    if (queue.outstanding >= this.#maxPerConnection) {
      this.#closeQueue(queue, `more than ${this.#maxPerConnection} content fetches outstanding`);
      return false;
    }
    if (this.#queued >= this.#maxTotal) {
      this.#closeQueue(queue, `the master's fetch queue is full (${this.#maxTotal})`);
      return false;
    }
    queue.hashes.push(hash);
    queue.outstanding++;
    this.#queued++;
    this.#pump();
    return true;
  }

  /** Drops a closed connection's queued fetches. */
  drop(client: FetchClient): void {
    const queue = this.#queues.get(client);
    if (!queue) return;
    queue.closed = true;
    this.#queued -= queue.hashes.length;
    queue.hashes = [];
    this.#queues.delete(client);
    const at = this.#order.indexOf(queue);
    if (at >= 0) this.#order.splice(at, 1);
    this.#o.sendBudget?.set(queue.holder, 0);
  }

  #closeQueue(queue: Queue, reason: string): void {
    this.drop(queue.client);
    queue.client.close(reason);
  }

  #pump(): void {
    while (this.#running < this.#concurrency) {
      const queue = this.#take();
      if (!queue) return;
      const hash = queue.hashes.shift()!;
      this.#queued--;
      this.#running++;
      void this.#serve(queue, hash).finally(() => {
        this.#running--;
        // A turn of the event loop between answers: other connections' messages, timers
        // and HTTP requests run before the next answer is prepared.
        setTimeout(() => this.#pump(), 0);
      });
    }
  }

  /** The next queue with work, round-robin. */
  #take(): Queue | undefined {
    for (let tried = 0; tried < this.#order.length; tried++) {
      this.#next = (this.#next + 1) % this.#order.length;
      const queue = this.#order[this.#next]!;
      if (queue.hashes.length > 0) return queue;
    }
    return undefined;
  }

  async #serve(queue: Queue, hash: string): Promise<void> {
    const { client } = queue;
    try {
      const answer = await this.#prepare(hash, client.maxPayload, queue.hashes.slice(0, NEXT_MAX));
      if (queue.closed) return;
      const bytes = answer.type === "ContentFetchResponse" ? answer.content.length : 0;
      queue.unsentBytes += bytes;
      this.#o.sendBudget?.set(queue.holder, queue.unsentBytes);
      if (queue.closed) return;
      try {
        await client.send(answer);
      } finally {
        queue.unsentBytes -= bytes;
        if (!queue.closed) this.#o.sendBudget?.set(queue.holder, queue.unsentBytes);
      }
    } catch {
      this.#closeQueue(queue, "send failed");
    } finally {
      queue.outstanding--;
    }
  }

  /** One read per hash at a time, shared by everyone asking meanwhile. */
  #prepare(hash: string, maxPayload: number, next: readonly string[]): Promise<WireMessage> {
    return sharedWork(
      this.#preparing,
      `${hash}:${maxPayload}`,
      () => this.#o.answer(hash, maxPayload, next),
    );
  }
}
