import { inTransaction } from "../db/mod.ts";
import { log } from "../log/mod.ts";
import { metrics } from "../metrics/mod.ts";
import type { NotificationMessage } from "../wire/mod.ts";
import { fetchesIntoMemory } from "./apply_batch.ts";
import type { ContentFetcher } from "./content_fetcher.ts";
import { SyncProgress } from "./progress.ts";
import type { VersionApplier } from "./replica_apply.ts";
import type { ReplicaCore } from "./replica_core.ts";
import type { ResyncSweep } from "./replica_resync.ts";
import type { ApplyItem, BarrierResult, ReplicaAction, ReplicaEvent } from "./replica_state.ts";
import type { Transport } from "./transports/mod.ts";
import type { WritebackLoop } from "./writeback_loop.ts";

/** Fetches pending beyond which a notification arriving is not prefetched (see `prefetch`). */
const PREFETCH_AHEAD = 512;

/** The parts of one connection the executor acts on. */
export interface SessionParts {
  /** The replica. */
  core: ReplicaCore;
  /** The connection. */
  transport: Transport;
  /** Its content fetcher. */
  fetcher: ContentFetcher;
  /** Its write-back loop. */
  writeback: WritebackLoop;
  /** Its apply pipeline. */
  applier: VersionApplier;
  /** The resync's memory of paths mentioned, and its sweep. */
  resync: ResyncSweep;
  /** Queues an item for the applier. */
  enqueue(item: ApplyItem): void;
  /** Closes the connection. */
  close(reason: string): void;
  /** Settles `syncWait`'s barrier `id`. */
  resolveBarrier(id: number, result: BarrierResult | null): void;
  /** Feeds an event back to the state machine (an ack sent, a sweep done). */
  step(event: ReplicaEvent): void | Promise<void>;
}

/**
 * Runs the actions of the replica's state machine (`replica_state.ts`) for one
 * connection: sends, store records, the watcher, progress, and the apply pipeline. The
 * only place a replica connection's decisions touch the world.
 */
export class ReplicaExecutor {
  readonly #p: SessionParts;
  #progress: SyncProgress | null = null;
  /** Paths whose write-back the master accepted on this connection. */
  readonly #acceptedHere = new Set<string>();
  /**
   * Notifications already weighed for a prefetch as they arrived: not looked up again
   * (a store query and a look for the object) when the applier takes their batch.
   */
  readonly #prefetched = new WeakSet<NotificationMessage>();

  /** @param parts See {@linkcode SessionParts}. */
  constructor(parts: SessionParts) {
    this.#p = parts;
  }

  /**
   * Runs one action.
   *
   * @returns A promise when the action waits for something (a send, the disk), else
   * nothing: actions that need not wait run in the same turn, in order.
   */
  run(action: ReplicaAction): void | Promise<void> {
    const { core, transport, fetcher, writeback } = this.#p;
    switch (action.type) {
      case "enqueue":
        return this.#p.enqueue(action.item);
      case "prefetch":
        return this.prefetch(action.message);
      case "answer": {
        const msg = action.message;
        if (msg.type === "WriteBackResult") writeback.onResult(msg);
        else if (msg.type === "ContentFetchResponse" || msg.type === "ContentNotFound") {
          fetcher.onAnswer(msg);
        }
        return;
      }
      case "forgetAccepted":
        return core.tables.paths.forgetMasterSequences(this.#acceptedHere);
      case "problem":
        return core.noteProblem(action.path, action.reason);
      case "requestCatchup":
        return Promise.all([
          transport.send({ type: "BarrierRequest", sequence: 0n }),
          transport.send({
            type: "CatchupRequest",
            sandbox_id: core.sandboxId,
            since_sequence: BigInt(action.since),
          }),
        ]).then(() => {});
      case "askCatchup":
        return transport.send({
          type: "CatchupRequest",
          sandbox_id: core.sandboxId,
          since_sequence: BigInt(action.since),
        });
      case "sendBarrier":
        transport.send({ type: "BarrierRequest", sequence: 0n }).catch(() => {});
        return;
      case "saveApplied":
        return core.saveApplied();
      case "sendAck":
        transport.send({ type: "Ack", up_to_sequence: BigInt(action.sequence) })
          .catch(() => {})
          .finally(() => this.#p.step({ type: "ackSent" }));
        return;
      case "resolveBarrier":
        return this.#p.resolveBarrier(action.id, action.result);
      case "pauseWatching":
        if (!action.burst) return core.pauseWatching("the catch-up");
        // Decided while a notification is routed, which waits for nothing: the notification
        // is queued at once, in order, while the watcher stops (queued after the pause, it
        // came after the later ones, and a folder's removal went before its files'). A
        // burst's batches, like a large catch-up's, checkpoint on a worker.
        core.checkpoints.busy();
        core.pauseWatching("a large change").catch((error) =>
          log("error", "cannot pause watching for a large change", { error })
        );
        return;
      case "resumeWatching":
        // All received is applied: the bulk is over. The worker (a V8 isolate) is not kept
        // through the scan that follows, which starts the watcher's own.
        core.checkpoints.idle(0);
        return core.resumeWatching();
      case "startProgress":
        // A large catch-up: its batches' checkpoints run on a worker until it is over.
        core.checkpoints.busy();
        this.#progress = new SyncProgress({
          label: action.label,
          from: action.from,
          to: action.to,
          tty: core.options.progress ?? "auto",
        });
        return;
      case "finishProgress":
        return this.finishProgress();
      case "inSync":
        log("info", "replica in sync", { sequence: action.sequence });
        return this.#dropAppliedIntents();
      case "startResync":
        log("warn", "full resync required", {
          reason: action.reason,
          master_sequence: action.target,
        });
        core.resyncPending = true;
        return this.#p.resync.reset();
      case "sweepResync":
        return this.#p.resync.sweep(action.sequence, this.#p.applier).then((removed) =>
          this.#p.step({ type: "resyncSwept", sequence: action.sequence, removed })
        );
      case "resyncDone":
        core.resyncPending = false;
        core.saveApplied();
        log("info", "full resync done", { sequence: action.sequence, removed: action.removed });
        return this.#dropAppliedIntents();
      case "accepted":
        inTransaction(core.store.db, () => {
          const { paths } = core.tables;
          paths.setAccepted(action.path, action.masterSeq);
          // The master's removal of a rename's source comes before the sequence it
          // answered, so its notification is skipped as superseded: without this the
          // path would keep the version applied before, which a later conflict's release
          // would take back (or skip), where the master has nothing.
          if (action.removed && paths.get(action.path).applied.sequence < action.masterSeq) {
            paths.setApplied(action.path, {
              sequence: action.masterSeq,
              hash: "",
              mode: 0,
              deleted: true,
            });
          }
          // An earlier change the master refused (too large, forbidden, filtered), or this
          // replica refused (too large), is no longer what the path holds: the later one
          // went through.
          core.tables.conflicts.supersede(action.path, action.localSeq);
          core.tables.journal.supersedeRefusals(action.path, action.localSeq, action.masterSeq);
        });
        this.#acceptedHere.add(action.path);
        return;
      case "rejected": {
        const { entry, reason } = action;
        if (action.conflict) metrics.conflicts.inc();
        inTransaction(core.store.db, () => {
          core.tables.conflicts.add(entry, reason, action.keep);
          // The master's version is taken back by the release queued behind this answer;
          // held back durably too, so that a connection ending first leaves it for the next.
          if (action.keep === "upstream") {
            for (const path of [entry.path, ...(entry.newPath === null ? [] : [entry.newPath])]) {
              core.tables.paths.deferApplied(path);
            }
          }
        });
        log("warn", "write-back rejected", {
          path: entry.path,
          operation: entry.operation,
          reason,
          kept_hash: entry.hash,
        });
        return;
      }
      case "releaseAll":
        return this.#p.applier.releaseAll(action.paths);
      case "close":
        return this.#p.close(action.reason);
    }
  }

  /**
   * Starts fetching content a notification will need, so fetches overlap.
   *
   * @param msg The notification.
   * @param ahead Whether it is fetched ahead of the applier (as it arrives): then nothing
   * is started once {@linkcode PREFETCH_AHEAD} fetches are pending. Each pending fetch
   * holds its promises until answered, and during a long catch-up thousands of queued
   * notifications would; the applier starts the rest when it takes their batch (those
   * weighed as they arrived are not weighed again: the applier fetches what it needs
   * anyway, this only starts it sooner).
   */
  prefetch(msg: NotificationMessage, ahead = true): void {
    if (msg.is_deletion || msg.inline_content !== null) return;
    // Content fetched into memory as it is applied (see `VersionApplier`) would be
    // stored if fetched ahead.
    if (fetchesIntoMemory(Number(msg.size), this.#p.core.keepsMasterContent)) return;
    if (ahead && this.#p.fetcher.inFlight >= PREFETCH_AHEAD) return;
    if (this.#prefetched.has(msg)) return;
    this.#prefetched.add(msg);
    const { store, filter } = this.#p.core;
    if (filter.toReplica.ignores(msg.filepath)) return;
    if (store.latest(msg.filepath)?.hash === msg.content_hash) return;
    this.#p.fetcher.ensure(msg.content_hash, Number(msg.size)).catch(() => {});
  }

  /** Moves the progress shown of a large catch-up. */
  updateProgress(sequence: number, size: number): void {
    this.#progress?.update(sequence, size);
  }

  /**
   * Ends the progress shown, if any; the checkpoint worker stops after a quiet while (a cut
   * connection's next one goes on with the catch-up), or when watching resumes.
   *
   * @param complete Whether the catch-up is over; else the connection ended first.
   */
  finishProgress(complete = true): void {
    this.#progress?.finish(complete);
    this.#progress = null;
    this.#p.core.checkpoints.idle();
  }

  /** Forgets notes of versions applied since; the rest still tell crash-left files apart. */
  #dropAppliedIntents(): void {
    const { intents, paths } = this.#p.core.tables;
    intents.dropSuperseded((path) => paths.get(path).applied.sequence);
  }
}
