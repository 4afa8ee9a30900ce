import { DatabaseError } from "../db/mod.ts";
import { type ChainHead, headSeal, snapshotHash } from "./canonical_encoding.ts";
import { ageCutoff, planPrune } from "./retention.ts";
import type { SnapshotRecords } from "./snapshot_records.ts";
import type { SnapshotConfig, SnapshotRecord } from "./types.ts";
import type { StoredHead } from "./verify_chain.ts";

/** The fields of a new snapshot that the caller decides; the chain adds the rest. */
export type NewSnapshot = Pick<
  SnapshotRecord,
  "actionType" | "summary" | "transactionId" | "files"
>;

/** What {@linkcode nextLink} gives: the sealed snapshot and the head that names it. */
export interface ChainLink {
  /** The new snapshot, hashed and linked to the previous head. */
  record: SnapshotRecord;
  /** The head after it (the anchor unchanged). */
  head: ChainHead;
}

/** Options for {@linkcode appendSnapshot} and {@linkcode pruneSnapshots}. */
export interface ChainOptions {
  /** The clock for timestamps and retention, epoch milliseconds. */
  clock: () => number;
  /** Retention limits in force. */
  config: SnapshotConfig;
}

/**
 * The chain's next link: `fields` numbered one past the head, linked to the head's hash,
 * and hashed. Pure.
 *
 * @param head The head before.
 * @param fields What the snapshot holds.
 * @param id The new snapshot's ID.
 * @param timestamp Its time, epoch milliseconds.
 * @returns The sealed record and the head that names it.
 *
 * @example The first snapshot ever
 * ```ts
 * import { nextLink } from "./chain.ts";
 * const head = { headNumber: 0, headHash: "", anchorNumber: 1, anchorHash: "" };
 * const fields = { actionType: "write_file", summary: "", transactionId: null, files: [] };
 * const { record } = nextLink(head, fields, "0b6c", 5);
 * if (record.number !== 1 || record.previousHash !== "") throw new Error("not first");
 * ```
 */
export function nextLink(
  head: ChainHead,
  fields: NewSnapshot,
  id: string,
  timestamp: number,
): ChainLink {
  const unsealed = {
    id,
    number: head.headNumber + 1,
    timestamp,
    actionType: fields.actionType,
    summary: fields.summary,
    transactionId: fields.transactionId,
    files: fields.files,
    previousHash: head.headHash,
  };
  const record: SnapshotRecord = { ...unsealed, hash: snapshotHash(unsealed) };
  return { record, head: { ...head, headNumber: record.number, headHash: record.hash } };
}

/**
 * The head after pruning every snapshot numbered at most `last`: the anchor moves to the
 * oldest kept snapshot, whose `previousHash` is the last pruned one's hash. Pure.
 *
 * @param head The head before.
 * @param last The number of the last pruned snapshot.
 * @param lastHash That snapshot's hash.
 * @returns The head with the anchor moved.
 */
export function movedAnchor(head: ChainHead, last: number, lastHash: string): ChainHead {
  return { ...head, anchorNumber: last + 1, anchorHash: lastHash };
}

/**
 * The head record as stored: the head's fields and the seal over them. Pure.
 *
 * @param head The head's fields.
 * @returns The fields with their seal ({@linkcode headSeal}).
 */
export function sealed(head: ChainHead): StoredHead {
  return {
    headNumber: head.headNumber,
    headHash: head.headHash,
    anchorNumber: head.anchorNumber,
    anchorHash: head.anchorHash,
    seal: headSeal(head),
  };
}

/**
 * Records a snapshot as the chain's next link, then prunes by retention: one write
 * transaction that reads the head inside `BEGIN IMMEDIATE`, so two processes appending at
 * once never fork the chain.
 *
 * @param records The snapshot tables.
 * @param fields What the snapshot holds.
 * @param options The clock and the retention limits.
 * @returns The recorded snapshot.
 * @throws {DatabaseError} When the head record is missing.
 * @throws {TransactionStateError} When its transaction is no longer active.
 */
export function appendSnapshot(
  records: SnapshotRecords,
  fields: NewSnapshot,
  options: ChainOptions,
): SnapshotRecord {
  return records.write(() => {
    const before = readHead(records);
    if (fields.transactionId !== null) {
      records.requireActive(fields.transactionId, "add a snapshot to");
    }
    const link = nextLink(before, fields, crypto.randomUUID(), options.clock());
    records.insertSnapshot(link.record);
    const { head } = pruneSnapshots(records, link.head, options);
    records.writeHead(sealed(head));
    return link.record;
  });
}

/**
 * Prunes by retention now, in one write transaction, and reseals the head if any
 * snapshot was pruned.
 *
 * @param records The snapshot tables.
 * @param options The clock and the retention limits.
 * @returns How many snapshots were pruned.
 * @throws {DatabaseError} When the head record is missing.
 */
export function pruneNow(records: SnapshotRecords, options: ChainOptions): number {
  return records.write(() => {
    const { pruned, head } = pruneSnapshots(records, readHead(records), options);
    if (pruned > 0) records.writeHead(sealed(head));
    return pruned;
  });
}

/**
 * Deletes the snapshots retention decides to prune ({@linkcode planPrune}) and moves the
 * anchor. Runs inside the caller's write transaction; the new head is not yet written.
 *
 * @param records The snapshot tables.
 * @param head The head before.
 * @param options The clock and the retention limits.
 * @returns How many snapshots were pruned, and the head after.
 */
export function pruneSnapshots(
  records: SnapshotRecords,
  head: ChainHead,
  options: ChainOptions,
): { pruned: number; head: ChainHead } {
  const now = options.clock();
  const candidates = records.pruneCandidates(
    head.headNumber - options.config.maxSnapshots,
    ageCutoff(now, options.config),
  );
  if (candidates.length === 0) return { pruned: 0, head };
  const last = planPrune({
    oldest: candidates,
    anchorNumber: head.anchorNumber,
    headNumber: head.headNumber,
    now,
    config: options.config,
    activeTransactions: records.activeTransactionIds(),
  });
  if (last === 0) return { pruned: 0, head };
  const lastHash = records.hashOf(last);
  const pruned = records.deleteThrough(last);
  return { pruned, head: movedAnchor(head, last, lastHash) };
}

function readHead(records: SnapshotRecords): ChainHead {
  const head = records.readHead();
  if (!head) throw new DatabaseError("The snapshot chain's head record is missing");
  return head;
}
