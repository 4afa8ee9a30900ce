import { type Cas, ContentNotFoundError, CorruptContentError } from "../cas/mod.ts";
import { DatabaseError } from "../db/mod.ts";
import { errorMessage } from "../log/mod.ts";
import type { ChainHead } from "./canonical_encoding.ts";
import { needsContent } from "./change_plan.ts";
import type { SnapshotRecords } from "./snapshot_records.ts";
import type { SnapshotRecord } from "./types.ts";
import { type IntegrityProblem, type StoredHead, verifyChain } from "./verify_chain.ts";

/** What {@linkcode Snapshots.verify} found. */
export interface VerifyReport {
  /** True when no problem was found. */
  ok: boolean;
  /** Snapshots checked. */
  snapshots: number;
  /** Distinct content objects read back and verified (0 when content was not checked). */
  contentChecked: number;
  /** The head record's fields. */
  head: ChainHead;
  /** What is wrong with the chain or its content; empty when it verified. */
  problems: IntegrityProblem[];
}

/** Options for {@linkcode verifySnapshots}. */
export interface VerifySnapshotsOptions {
  /** Read back and check every content object too. @default {true} */
  content?: boolean | undefined;
}

/**
 * Verifies the stored chain ({@linkcode verifyChain}), counts file rows left without
 * their snapshot and, unless `content` is false, reads back every content object the
 * snapshots reference and checks it against its hash.
 *
 * @param records The snapshot tables.
 * @param cas Where the captured content is.
 * @param options Whether to check content.
 * @returns The report; `ok` is false when anything is wrong.
 * @throws {DatabaseError} When the snapshot tables cannot be read (never a pass).
 */
export async function verifySnapshots(
  records: SnapshotRecords,
  cas: Cas,
  options: VerifySnapshotsOptions = {},
): Promise<VerifyReport> {
  let snapshots: SnapshotRecord[];
  let head: StoredHead | undefined;
  let orphans: number;
  try {
    snapshots = records.snapshots();
    head = records.readHead();
    orphans = records.orphanFileCount();
  } catch (error) {
    throw new DatabaseError(`Cannot read the snapshot chain: ${errorMessage(error)}`, {
      cause: error,
    });
  }
  const problems = verifyChain(snapshots, head);
  const orphaned = orphanProblem(orphans);
  if (orphaned) problems.push(orphaned);
  let contentChecked = 0;
  if (options.content !== false) {
    for (const [hash, user] of contentUsers(snapshots)) {
      contentChecked++;
      const problem = contentProblem(hash, user, await checkContent(cas, hash));
      if (problem) problems.push(problem);
    }
  }
  return {
    ok: problems.length === 0,
    snapshots: snapshots.length,
    contentChecked,
    head: reportHead(head),
    problems,
  };
}

/**
 * Every content hash the snapshots reference, once, with its first user for messages
 * (`"a.txt" in snapshot 3`), in the order first referenced. Pure.
 *
 * @param snapshots The snapshots, oldest first.
 * @returns Hash to its first user.
 */
export function contentUsers(snapshots: readonly SnapshotRecord[]): Map<string, string> {
  const users = new Map<string, string>();
  for (const record of snapshots) {
    for (const file of record.files) {
      if (needsContent(file) && !users.has(file.hash)) {
        users.set(file.hash, `"${file.path}" in snapshot ${record.number}`);
      }
    }
  }
  return users;
}

/**
 * The problem a content check found, if any. Pure.
 *
 * @param hash The content's hash.
 * @param user Who references it, for the message.
 * @param found What reading it back gave: `undefined` when intact, `"missing"`, or why
 *   it does not match.
 * @returns The problem, or `undefined` when the content is intact.
 */
export function contentProblem(
  hash: string,
  user: string,
  found: string | undefined,
): IntegrityProblem | undefined {
  if (found === undefined || found === "") return undefined;
  if (found === "missing") {
    return {
      kind: "content_missing",
      message: `Content "${hash}" of ${user} is missing from the CAS`,
    };
  }
  return {
    kind: "content_corrupt",
    message: `Content "${hash}" of ${user} does not match its hash: ${found}`,
  };
}

/**
 * The problem of file rows left without their snapshot, if there are any. Pure.
 *
 * @param count How many file rows belong to no snapshot.
 * @returns The problem, or `undefined` when there are none.
 */
export function orphanProblem(count: number): IntegrityProblem | undefined {
  if (count <= 0) return undefined;
  return {
    kind: "orphan_files",
    message: `${count} captured file rows belong to no snapshot (a snapshot was deleted)`,
  };
}

/** The head fields a report shows: zeros when the head record is missing. */
function reportHead(head: StoredHead | undefined): ChainHead {
  const fields = head ?? { headNumber: 0, headHash: "", anchorNumber: 0, anchorHash: "" };
  return {
    headNumber: fields.headNumber,
    headHash: fields.headHash,
    anchorNumber: fields.anchorNumber,
    anchorHash: fields.anchorHash,
  };
}

/** Reads content back in full (the CAS verifies it as it reads): why it failed, if it did. */
async function checkContent(cas: Cas, hash: string): Promise<string | undefined> {
  try {
    for await (const _piece of cas.readStream(hash)) { /* verified as read */ }
    return undefined;
  } catch (error) {
    if (error instanceof ContentNotFoundError) return "missing";
    if (error instanceof CorruptContentError) return error.message;
    return errorMessage(error);
  }
}
