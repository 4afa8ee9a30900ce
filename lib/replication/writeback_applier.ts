import { type Cas, CHUNKING_THRESHOLD, isContentHash, sha256Hex } from "../cas/mod.ts";
import type { DirectionalFilter } from "../filter/mod.ts";
import { type Iteration, S_IFMT, S_IFREG, type Store } from "../store/mod.ts";
import type { Workspace } from "../workspace/mod.ts";
import { I64_MAX, type WriteBackEntry } from "../wire/mod.ts";
import { SerialQueue } from "../concurrency/mod.ts";
import { diskMatches } from "./disk_check.ts";
import type { MasterState, WriteBackOutcome } from "./master_state.ts";
import {
  decideWriteBack,
  entryPaths,
  type WriteBackFacts,
  type WriteBackVerdict,
} from "./write_back_decision.ts";

/** Options for {@linkcode WriteBackApplier}. */
export interface WriteBackApplierOptions {
  /** The master's workspace: every change goes through its write-through API. */
  workspace: Workspace;
  /** The master's store. */
  store: Store;
  /** The master's CAS. */
  cas: Cas;
  /** The master's filters; `toMaster` rejects entries as `filtered`. */
  filter: DirectionalFilter;
  /** Durable outcomes, so an entry sent twice is applied once. */
  state: MasterState;
  /** Largest content a write-back may carry. @default {67108864} */
  maxContentBytes?: number;
}

/** What became of a batch. */
export interface WriteBackBatchResult {
  /** `[local_seq, master sequence]` pairs. */
  accepted: [bigint, bigint][];
  /** `[local_seq, reason]` pairs. */
  rejected: [bigint, string][];
  /** Set when an entry was hostile (a path leaving the workspace): close the connection. */
  disconnect: string | null;
}

/**
 * The master's side of write-back (PROTOCOL.md §6): decides each entry by the causal rule
 * and applies the accepted ones to the workspace with the replica as origin, one entry at
 * a time across all replicas, so two replicas writing one path cannot both win.
 */
export class WriteBackApplier {
  readonly #workspace: Workspace;
  readonly #store: Store;
  readonly #cas: Cas;
  readonly #filter: DirectionalFilter;
  readonly #state: MasterState;
  readonly #maxContentBytes: number;
  readonly #queue = new SerialQueue();

  /** @param options See {@linkcode WriteBackApplierOptions}. */
  constructor(options: WriteBackApplierOptions) {
    this.#workspace = options.workspace;
    this.#store = options.store;
    this.#cas = options.cas;
    this.#filter = options.filter;
    this.#state = options.state;
    this.#maxContentBytes = options.maxContentBytes ?? 64 * 1024 * 1024;
  }

  /**
   * Decides and applies a batch, in order. Entries decided before (same sandbox id and
   * local sequence) get their stored outcome again and are not applied twice.
   *
   * @param sandboxId The sending replica.
   * @param entries The batch.
   * @returns The outcomes, and whether to disconnect the sender.
   */
  apply(sandboxId: string, entries: WriteBackEntry[]): Promise<WriteBackBatchResult> {
    return this.#queue.run(async () => {
      const result: WriteBackBatchResult = { accepted: [], rejected: [], disconnect: null };
      for (const entry of entries) {
        let outcome: WriteBackOutcome;
        if (entry.local_seq > I64_MAX) {
          outcome = { accepted: false, masterSeq: 0, reason: "failed: local_seq out of range" };
        } else {
          const stored = this.#state.outcome(sandboxId, entry.local_seq);
          if (stored) {
            outcome = stored;
          } else {
            const decided = await this.#applyOne(sandboxId, entry);
            outcome = decided.outcome;
            if (decided.disconnect) result.disconnect = outcome.reason;
            this.#state.saveOutcome(sandboxId, entry.local_seq, outcome);
          }
        }
        if (outcome.accepted) result.accepted.push([entry.local_seq, BigInt(outcome.masterSeq)]);
        else result.rejected.push([entry.local_seq, outcome.reason]);
        if (result.disconnect) break;
      }
      return result;
    });
  }

  async #applyOne(
    sandboxId: string,
    entry: WriteBackEntry,
  ): Promise<{ outcome: WriteBackOutcome; disconnect: boolean }> {
    let verdict = await this.#decide(sandboxId, entry);
    if (verdict.accept && !(await this.#diskIsRecorded(verdict.paths))) {
      // Someone changed a path on disk and the watcher has not recorded it yet: record it
      // first, then decide again, so the change is weighed and never overwritten unseen.
      await this.#workspace.settled();
      if (!(await this.#diskIsRecorded(verdict.paths))) await this.#workspace.scan();
      verdict = await this.#decide(sandboxId, entry);
    }
    if (!verdict.accept) {
      return {
        outcome: { accepted: false, masterSeq: 0, reason: verdict.message },
        disconnect: verdict.disconnect,
      };
    }
    try {
      const masterSeq = await this.#execute(sandboxId, entry, verdict.paths);
      return { outcome: { accepted: true, masterSeq, reason: "" }, disconnect: false };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return {
        outcome: { accepted: false, masterSeq: 0, reason: `failed: ${message}` },
        disconnect: false,
      };
    }
  }

  async #decide(sandboxId: string, entry: WriteBackEntry): Promise<WriteBackVerdict> {
    const dataDir = this.#workspace.layout.dataDirInside;
    const located = entryPaths(entry, dataDir);
    const facts: WriteBackFacts = {
      sandboxId,
      dataDir,
      maxContentBytes: this.#maxContentBytes,
      content: await this.#contentState(entry),
      paths: {},
    };
    if ("paths" in located) {
      const seen = Number(entry.master_rowid_seen);
      for (const path of located.paths) {
        facts.paths[path] = {
          filtered: this.#filter.toMaster.ignores(path) || this.#filter.local.ignores(path),
          later: this.#laterIterations(path, seen),
        };
      }
    }
    return decideWriteBack(entry, facts);
  }

  #laterIterations(path: string, seen: number): { sequence: number; origin: string }[] {
    const latest = this.#store.latest(path);
    if (!latest || latest.sequence <= seen) return [];
    return this.#store.history(path)
      .filter((iteration) => iteration.sequence > seen)
      .map(({ sequence, origin }) => ({ sequence, origin }));
  }

  async #contentState(entry: WriteBackEntry): Promise<WriteBackFacts["content"]> {
    if (entry.operation.type !== "Write" || entry.content_hash === null) return "missing";
    if (!isContentHash(entry.content_hash)) return "mismatch";
    if (entry.content_bytes !== null) {
      if (entry.content_bytes.length > this.#maxContentBytes) return "verified"; // refused as too large
      return sha256Hex(entry.content_bytes) === entry.content_hash ? "verified" : "mismatch";
    }
    return await this.#cas.has(entry.content_hash) ? "stored" : "missing";
  }

  async #diskIsRecorded(paths: string[]): Promise<boolean> {
    for (const path of paths) {
      const latest: Iteration | undefined = this.#store.latest(path);
      if (!(await diskMatches(this.#workspace.root, path, latest))) return false;
    }
    return true;
  }

  /** Applies an accepted entry; returns the master sequence it became. */
  async #execute(sandboxId: string, entry: WriteBackEntry, paths: string[]): Promise<number> {
    const origin = { origin: sandboxId };
    const workspace = this.#workspace;
    const mode = fullMode(Number(entry.permissions));
    const path = paths[0]!;
    let recorded: (Iteration | undefined)[];
    switch (entry.operation.type) {
      case "Write": {
        const hash = entry.content_hash!;
        const bytes = entry.content_bytes;
        if (bytes !== null) {
          // Verified above; large content is stored chunked so replicas fetch pieces.
          if (bytes.length < CHUNKING_THRESHOLD) await this.#cas.putVerified(hash, bytes);
          else await this.#cas.putBytes(bytes);
        }
        recorded = [await workspace.writeContent(path, hash, mode, origin)];
        break;
      }
      case "Delete":
        recorded = [await workspace.remove(path, origin)];
        break;
      case "Rename": {
        const target = paths[1]!;
        recorded = await workspace.move(path, target, origin);
        const moved = this.#store.latest(target);
        if (moved && !moved.deleted && (moved.mode & 0o7777) !== (mode & 0o7777)) {
          recorded.push(await workspace.chmod(target, mode, origin));
        }
        break;
      }
      case "Chmod":
        recorded = [await workspace.chmod(path, mode, origin)];
        break;
    }
    const sequences = recorded.filter((it) => it !== undefined).map((it) => it.sequence);
    if (sequences.length > 0) return Math.max(...sequences);
    // Nothing changed (the master already held exactly this): answer with the latest.
    return Math.max(0, ...paths.map((p) => this.#store.latest(p)?.sequence ?? 0));
  }
}

function fullMode(mode: number): number {
  return (mode & S_IFMT) === 0 ? S_IFREG | (mode & 0o7777) : mode;
}
