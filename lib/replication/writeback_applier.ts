import { type Cas, CHUNKING_THRESHOLD } from "../cas/mod.ts";
import type { DirectionalFilter } from "../filter/mod.ts";
import type { Iteration, Store } from "../store/mod.ts";
import {
  ChangedOnDiskError,
  DEFAULT_WRITEBACK_MODE_BITS,
  maskMode,
  type Workspace,
  type WorkspaceChange,
} from "../workspace/mod.ts";
import { I64_MAX, type WriteBackEntry } from "../wire/mod.ts";
import { lstatOrNullSync } from "../disk/mod.ts";
import { forEachLimited, SerialQueue } from "../concurrency/mod.ts";
import { inTransaction } from "../db/mod.ts";
import { PathSet } from "../paths/mod.ts";
import { MasterConflicts } from "./master_conflicts.ts";
import { matchingStamp, type SeenStamp } from "./disk_check.ts";
import type { AppliedContent, MasterState, WriteBackOutcome } from "./master_state.ts";
import { entryPaths, type WriteBackVerdict } from "./write_back_decision.ts";
import { type Piece, pieceOf } from "./writeback_pieces.ts";
import { takePiece, WriteBackUploads } from "./writeback_uploads.ts";
import { type MoveContext, renameOrChmod } from "./writeback_moves.ts";
import { judgeWriteBack, type WriteBackFactSources } from "./writeback_facts.ts";
import {
  acceptedPaths,
  changedOnDisk,
  contentOf,
  countDecided,
  failedReason,
  fullMode,
  keepRejected,
  report,
  sequencesByChange,
  type WriteBackBatchResult,
} from "./writeback_outcomes.ts";

export type { WriteBackBatchResult } from "./writeback_outcomes.ts";

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
  maxContentBytes?: number | undefined;
  /**
   * Permission bits a write-back may set; the others (setuid, setgid, sticky by
   * default) are cleared from every mode a replica sends (`--writeback-mode-bits`).
   * @default {0o777}
   */
  allowedModeBits?: number | undefined;
}

/** Most writes and deletions applied together. */
const RUN_LIMIT = 512;

/**
 * The master's side of write-back (PROTOCOL.md §6): decides each entry by the causal rule
 * and applies the accepted ones to the workspace with the replica as origin, one batch at
 * a time across all replicas, so two replicas writing one path cannot both win.
 */
export class WriteBackApplier {
  readonly #workspace: Workspace;
  readonly #store: Store;
  readonly #cas: Cas;
  readonly #state: MasterState;
  readonly #allowedModeBits: number;
  readonly #conflicts: MasterConflicts;
  readonly #facts: WriteBackFactSources;
  readonly #queue = new SerialQueue();
  readonly #uploads: WriteBackUploads;
  readonly #moves: MoveContext;

  /** @param options See {@linkcode WriteBackApplierOptions}. */
  constructor(options: WriteBackApplierOptions) {
    this.#workspace = options.workspace;
    this.#store = options.store;
    this.#cas = options.cas;
    this.#state = options.state;
    this.#allowedModeBits = options.allowedModeBits ?? DEFAULT_WRITEBACK_MODE_BITS;
    this.#conflicts = new MasterConflicts(options.store.db);
    this.#facts = {
      dataDir: options.workspace.layout.dataDirInside,
      store: options.store,
      cas: options.cas,
      filter: options.filter,
      state: options.state,
      maxContentBytes: options.maxContentBytes ?? 64 * 1024 * 1024,
      allowedModeBits: this.#allowedModeBits,
    };
    this.#uploads = new WriteBackUploads(options.cas, {
      maxContentBytes: this.#facts.maxContentBytes,
    });
    this.#moves = { ...this.#facts, workspace: this.#workspace };
  }

  /**
   * Decides and applies a batch, in order. Entries decided before (same sandbox id and
   * local sequence) get their stored outcome again and are not applied twice. Runs of
   * writes and deletions of unrelated paths are applied together (one store transaction);
   * renames and mode changes one by one.
   *
   * @param sandboxId The sending replica.
   * @param entries The batch.
   * @returns The outcomes, and whether to disconnect the sender.
   */
  apply(sandboxId: string, entries: WriteBackEntry[]): Promise<WriteBackBatchResult> {
    return this.#queue.run(async () => {
      this.#uploads.dropIdle(); // what a replica abandoned is not kept until its next piece
      const result: WriteBackBatchResult = { accepted: [], rejected: [], disconnect: null };
      // Each entry's stored outcome is read once per batch: the entry that ends a run is
      // looked at again when the next run starts. Kept in step with what is saved below.
      const known = new Map<bigint, WriteBackOutcome | undefined>();
      const stored = (localSeq: bigint) => {
        if (!known.has(localSeq)) known.set(localSeq, this.#state.outcome(sandboxId, localSeq));
        return known.get(localSeq);
      };
      const save = (localSeq: bigint, outcome: WriteBackOutcome) => {
        this.#state.saveOutcome(sandboxId, localSeq, outcome);
        known.set(localSeq, outcome);
      };
      let index = 0;
      while (index < entries.length && result.disconnect === null) {
        const run = this.#nextRun(entries, index, stored);
        if (run.length > 0) {
          const outcomes = await this.#applyRun(sandboxId, run);
          inTransaction(this.#store.db, () => {
            run.forEach((entry, i) => save(entry.local_seq, outcomes[i]!));
          });
          outcomes.forEach(countDecided);
          for (let i = 0; i < run.length; i++) await this.#keep(sandboxId, run[i]!, outcomes[i]!);
          run.forEach((entry, i) => report(result, entry, outcomes[i]!));
          index += run.length;
          continue;
        }
        const entry = entries[index++]!;
        let outcome: WriteBackOutcome;
        const piece = pieceOf(entry);
        if (piece !== null) {
          await this.#receivePiece(sandboxId, piece, result, stored, save);
          continue;
        }
        if (entry.local_seq > I64_MAX) {
          outcome = { accepted: false, masterSeq: 0, reason: "failed: local_seq out of range" };
        } else {
          const before = stored(entry.local_seq);
          if (before) {
            outcome = before;
          } else {
            const decided = await this.#applyOne(sandboxId, entry);
            outcome = decided.outcome;
            if (decided.disconnect) result.disconnect = outcome.reason;
            save(entry.local_seq, outcome);
            countDecided(outcome);
            await this.#keep(sandboxId, entry, outcome);
          }
        }
        report(result, entry, outcome);
      }
      return result;
    });
  }

  /**
   * Takes a piece of a change sent in pieces (see `takePiece`): answered under its own
   * number until the content is whole; then the change itself is decided and applied, and
   * answered under its number, as any change.
   */
  async #receivePiece(
    sandboxId: string,
    piece: Piece,
    result: WriteBackBatchResult,
    stored: (localSeq: bigint) => WriteBackOutcome | undefined,
    save: (localSeq: bigint, outcome: WriteBackOutcome) => void,
  ): Promise<void> {
    const { change } = piece;
    const before = stored(change.local_seq);
    if (before) return report(result, change, before);
    const taken = await takePiece(this.#uploads, this.#facts, sandboxId, piece);
    if ("answer" in taken) {
      result.rejected.push(taken.answer);
      return;
    }
    let outcome: WriteBackOutcome;
    if ("refused" in taken) {
      outcome = { accepted: false, masterSeq: 0, reason: taken.refused.message };
      if (taken.refused.disconnect) result.disconnect = outcome.reason;
    } else [outcome] = await this.#applyRun(sandboxId, [change]) as [WriteBackOutcome];
    save(change.local_seq, outcome);
    countDecided(outcome);
    await this.#keep(sandboxId, change, outcome);
    report(result, change, outcome);
  }

  /** Drops the contents received in part, once no batch is being applied (the master is closing). */
  close(): Promise<void> {
    return this.#queue.run(() => Promise.resolve(this.#uploads.close()));
  }

  /** The entries from `start` on that can be applied together: new writes and deletions of unrelated, valid paths. */
  #nextRun(
    entries: WriteBackEntry[],
    start: number,
    stored: (localSeq: bigint) => WriteBackOutcome | undefined,
  ): WriteBackEntry[] {
    const run: WriteBackEntry[] = [];
    const paths = new PathSet();
    for (let i = start; i < entries.length && run.length < RUN_LIMIT; i++) {
      const entry = entries[i]!;
      if (entry.operation.type !== "Write" && entry.operation.type !== "Delete") break;
      if (entry.local_seq > I64_MAX || stored(entry.local_seq)) break;
      const located = entryPaths(entry, this.#workspace.layout.dataDirInside);
      if (!("paths" in located) || paths.overlaps(located.paths[0]!)) break;
      paths.add(located.paths[0]!);
      run.push(entry);
    }
    return run;
  }

  /**
   * Decides each entry of a run, then applies the accepted ones at once. One whose path
   * changed on disk after the look that decided it (someone on the master wrote it) is
   * not made: that change is recorded, and the entry decided again (twice at most; then
   * it fails, and its content is kept as a conflict).
   */
  async #applyRun(
    sandboxId: string,
    run: WriteBackEntry[],
    attempt = 0,
  ): Promise<WriteBackOutcome[]> {
    const { verdicts, seen } = await this.#decideRecorded(sandboxId, run);
    const failures = new Map<string, unknown>();
    const inRunOrder: Array<WorkspaceChange | undefined> = [];
    const applying: Array<{ localSeq: bigint } & AppliedContent> = [];
    await forEachLimited(
      run.map((entry, i) => [entry, verdicts[i]!, i] as const),
      16,
      async ([entry, verdict, i]) => {
        if (!verdict.accept || verdict.unchanged) return;
        const path = verdict.paths[0]!;
        try {
          const change = await this.#change(entry, path, seen.get(path));
          inRunOrder[i] = change;
          applying.push({ localSeq: entry.local_seq, ...contentOf(change) });
        } catch (error) {
          failures.set(path, error);
        }
      },
    );
    this.#state.noteApplying(sandboxId, applying);
    const changes = inRunOrder.filter((change) => change !== undefined);
    const { recorded, failed } = await this.#workspace.applyChanges(changes, {
      origin: sandboxId,
      onlyOwnChanges: true, // the agent's change right after is its own, not the sandbox's
      inGivenOrder: true, // recorded in the order the sandbox made them, not by path
    });
    for (const failure of failed) failures.set(failure.path, failure.error);
    // The sandbox's own: not what the agent put where a deletion removed a file, recorded
    // right after it (the sandbox must still be sent that).
    const sequences = sequencesByChange(
      changes,
      recorded.filter((iteration) => iteration.origin === sandboxId),
    );
    const again = attempt < 2
      ? run.filter((_, i) =>
        verdicts[i]!.accept && changedOnDisk(failures.get(verdicts[i]!.paths[0]!))
      )
      : [];
    const decidedAgain = new Map<bigint, WriteBackOutcome>();
    if (again.length > 0) {
      for (const entry of again) this.#state.forgetApplying(sandboxId, entry.local_seq);
      await this.#recordDisk(); // what changed there (inside a folder too) is weighed
      const outcomes = await this.#applyRun(sandboxId, again, attempt + 1);
      again.forEach((entry, i) => decidedAgain.set(entry.local_seq, outcomes[i]!));
    }
    return verdicts.map((verdict, i): WriteBackOutcome => {
      const redone = decidedAgain.get(run[i]!.local_seq);
      if (redone) return redone;
      if (!verdict.accept) return { accepted: false, masterSeq: 0, reason: verdict.message };
      const path = verdict.paths[0]!;
      if (failures.has(path)) {
        return {
          accepted: false,
          masterSeq: 0,
          reason: failedReason(failures.get(path), this.#workspace.root),
        };
      }
      // Nothing recorded: the master already held exactly this; answer with its latest.
      const masterSeq = sequences.get(path) ?? this.#store.latest(path)?.sequence ?? 0;
      return { accepted: true, masterSeq, reason: "" };
    });
  }

  /**
   * Decides each entry against what the store holds, once the disk under the accepted
   * ones is recorded: a change the watcher has not recorded yet is recorded first and
   * then weighed, never overwritten unseen.
   */
  async #decideRecorded(
    sandboxId: string,
    entries: WriteBackEntry[],
  ): Promise<{ verdicts: WriteBackVerdict[]; seen: Map<string, SeenStamp | false> }> {
    const decideAll = () =>
      Promise.all(entries.map((entry) => judgeWriteBack(this.#facts, sandboxId, entry)));
    let verdicts = await decideAll();
    let seen = await this.#seenOnDisk(acceptedPaths(verdicts));
    if (![...seen.values()].includes(false)) return { verdicts, seen };
    await this.#workspace.settled();
    if ([...(await this.#seenOnDisk(acceptedPaths(verdicts))).values()].includes(false)) {
      await this.#workspace.scan({ keepRecorded: false });
    }
    verdicts = await decideAll();
    // What each write then replaces is what was seen here (a path still differing from
    // what is recorded, changing all along, is not written: see #change).
    seen = await this.#seenOnDisk(acceptedPaths(verdicts));
    return { verdicts, seen };
  }

  /**
   * The workspace change an accepted write or deletion makes, replacing only what was
   * seen on disk when it was decided (`seen`): nothing there (create only), or that file
   * or link, checked again right before it is replaced.
   *
   * @throws {ChangedOnDiskError} When the disk differed from the record even then.
   */
  async #change(
    entry: WriteBackEntry,
    path: string,
    seen: SeenStamp | false | undefined,
  ): Promise<WorkspaceChange> {
    if (seen === false || seen === undefined) {
      // What is there is named when it is a special file, which never settles by recording.
      throw new ChangedOnDiskError(path, lstatOrNullSync(`${this.#workspace.root}/${path}`));
    }
    const unchanged = seen.stamp ? { unchangedSince: seen.stamp } : {};
    // A folder goes only once empty: what it holds that the replica did not remove (a
    // filtered path, a file not recorded yet) is kept, and the entry fails.
    if (entry.operation.type === "Delete") {
      return { path, remove: true, onlyEmptyFolder: true, ...unchanged };
    }
    const hash = entry.content_hash!;
    const mode = fullMode(maskMode(Number(entry.permissions), this.#allowedModeBits));
    const bytes = entry.content_bytes;
    const latest = this.#store.latest(path);
    const where = { createOnly: latest === undefined || latest.deleted, ...unchanged };
    // Small content is written from the entry and stored by the write; large content is
    // stored chunked first, so that replicas fetch it in pieces.
    if (bytes !== null && bytes.length < CHUNKING_THRESHOLD) {
      return { path, hash, mode, bytes, ...where };
    }
    if (bytes !== null) await this.#cas.putBytes(bytes);
    return { path, hash, mode, ...where };
  }

  /** Decides and applies a rename or mode change; decided again when the disk changed meanwhile (see #applyRun). */
  async #applyOne(
    sandboxId: string,
    entry: WriteBackEntry,
    attempt = 0,
  ): Promise<{ outcome: WriteBackOutcome; disconnect: boolean }> {
    const { verdicts, seen } = await this.#decideRecorded(sandboxId, [entry]);
    const verdict = verdicts[0]!;
    if (!verdict.accept) {
      return {
        outcome: { accepted: false, masterSeq: 0, reason: verdict.message },
        disconnect: verdict.disconnect,
      };
    }
    try {
      const masterSeq = await renameOrChmod(this.#moves, sandboxId, entry, verdict.paths, seen);
      return { outcome: { accepted: true, masterSeq, reason: "" }, disconnect: false };
    } catch (error) {
      // A rename's source gone since the decision (the agent removed or moved it) is a
      // change on disk too: recorded, then decided again (a conflict, which the sandbox
      // undoes, rather than a failure, which it keeps).
      if (attempt < 2 && changedOnDisk(error)) {
        this.#state.forgetApplying(sandboxId, entry.local_seq); // not made: not its own result
        await this.#recordDisk();
        return await this.#applyOne(sandboxId, entry, attempt + 1);
      }
      return {
        outcome: {
          accepted: false,
          masterSeq: 0,
          reason: failedReason(error, this.#workspace.root),
        },
        disconnect: false,
      };
    }
  }

  #keep(sandboxId: string, entry: WriteBackEntry, outcome: WriteBackOutcome): Promise<void> {
    return keepRejected({ cas: this.#cas, conflicts: this.#conflicts }, sandboxId, entry, outcome);
  }

  /** Records what changed on disk, before an entry the disk changed under is decided again. */
  async #recordDisk(): Promise<void> {
    await this.#workspace.settled();
    await this.#workspace.scan({ keepRecorded: false });
  }

  /** What is on disk at each path, or `false` where it differs from what is recorded. */
  async #seenOnDisk(paths: Iterable<string>): Promise<Map<string, SeenStamp | false>> {
    const seen = new Map<string, SeenStamp | false>();
    for (const path of paths) {
      const latest: Iteration | undefined = this.#store.latest(path);
      seen.set(path, await matchingStamp(this.#workspace.root, path, latest));
    }
    return seen;
  }
}
