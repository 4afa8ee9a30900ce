import { isContentHash } from "../cas/mod.ts";
import { type ChainHead, comparePaths, headSeal, snapshotHash } from "./canonical_encoding.ts";
import type { SnapshotRecord } from "./types.ts";

/** What kind of integrity problem was found. */
export type IntegrityProblemKind =
  | "head_missing"
  | "seal_mismatch"
  | "malformed"
  | "hash_mismatch"
  | "broken_link"
  | "missing_snapshot"
  | "unexpected_snapshot"
  | "head_mismatch"
  | "orphan_files"
  | "content_missing"
  | "content_corrupt";

/** One integrity problem, with a sentence for people. */
export interface IntegrityProblem {
  /** What kind of problem it is. */
  kind: IntegrityProblemKind;
  /** The snapshot number concerned, when there is one. */
  number?: number;
  /** What is wrong, for a person. */
  message: string;
}

/** The head record as stored: its fields and the seal over them. */
export interface StoredHead extends ChainHead {
  /** The chain's seal: a hash over every snapshot hash, to compare later. */
  seal: string;
}

/**
 * Checks the snapshot chain: the head record's seal, every snapshot's hash against its
 * fields, every link, that numbers run without gaps from the anchor to the head, and that
 * the newest snapshot is the one the head names. Pure; content is checked elsewhere.
 *
 * Detects an edited field (hash mismatch), a deleted snapshot (missing number, or the
 * anchor not matching the oldest), an inserted or reordered one (unexpected number,
 * broken link), and a truncated or extended tail (head mismatch).
 *
 * @param records Every stored snapshot, in any order.
 * @param head The head record, `undefined` when it is missing.
 * @returns The problems found, empty when the chain is intact.
 *
 * @example An empty chain is intact
 * ```ts
 * import { headSeal } from "./canonical_encoding.ts";
 * import { verifyChain } from "./verify_chain.ts";
 * const fields = { headNumber: 0, headHash: "", anchorNumber: 1, anchorHash: "" };
 * if (verifyChain([], { ...fields, seal: headSeal(fields) }).length !== 0) throw new Error();
 * ```
 */
export function verifyChain(
  records: readonly SnapshotRecord[],
  head: StoredHead | undefined,
): IntegrityProblem[] {
  const problems: IntegrityProblem[] = [];
  const sorted = [...records].sort((a, b) => a.number - b.number);
  for (const record of sorted) checkRecord(record, problems);
  if (!head) {
    problems.push({ kind: "head_missing", message: "The chain's head record is missing" });
    return problems;
  }
  let seal: string | undefined;
  try {
    seal = headSeal(head);
  } catch { /* a malformed field: reported as a seal mismatch below */ }
  if (seal !== head.seal) {
    problems.push({
      kind: "seal_mismatch",
      message: "The chain's head record does not match its seal (edited head or anchor)",
    });
  }
  let expected = head.anchorNumber;
  let previousHash: string | undefined = head.anchorHash;
  for (const record of sorted) {
    if (record.number < expected) {
      problems.push({
        kind: "unexpected_snapshot",
        number: record.number,
        message: record.number < head.anchorNumber
          ? `Snapshot ${record.number} ("${record.id}") is older than the chain's anchor ${head.anchorNumber}`
          : `Snapshot number ${record.number} appears twice`,
      });
      continue;
    }
    if (record.number > expected) {
      problems.push({
        kind: "missing_snapshot",
        number: expected,
        message: gapMessage(expected, record.number - 1),
      });
      previousHash = undefined;
    }
    if (previousHash !== undefined && record.previousHash !== previousHash) {
      problems.push({
        kind: "broken_link",
        number: record.number,
        message: record.number === head.anchorNumber
          ? `Snapshot ${record.number} ("${record.id}") does not link to the chain's anchor`
          : `Snapshot ${record.number} ("${record.id}") does not link to snapshot ${
            record.number - 1
          }`,
      });
    }
    previousHash = record.hash;
    expected = record.number + 1;
  }
  const newest = expected - 1;
  if (newest < head.headNumber) {
    problems.push({
      kind: "missing_snapshot",
      number: expected,
      message: `${gapMessage(expected, head.headNumber)} (the chain's tail is truncated)`,
    });
  } else if (newest > head.headNumber) {
    problems.push({
      kind: "head_mismatch",
      number: newest,
      message: `Snapshot ${newest} is newer than the chain's head ${head.headNumber}`,
    });
  } else if (previousHash !== head.headHash) {
    problems.push({
      kind: "head_mismatch",
      number: newest,
      message: newest === 0 || sorted.length === 0
        ? "The chain's head does not match its anchor"
        : `Snapshot ${newest} is not the snapshot the chain's head names`,
    });
  }
  return problems;
}

function checkRecord(record: SnapshotRecord, problems: IntegrityProblem[]): void {
  const malformed = malformation(record);
  if (malformed) {
    problems.push({
      kind: "malformed",
      number: record.number,
      message: `Snapshot ${record.number} ("${record.id}") ${malformed}`,
    });
    return;
  }
  if (snapshotHash(record) !== record.hash) {
    problems.push({
      kind: "hash_mismatch",
      number: record.number,
      message: `Snapshot ${record.number} ("${record.id}") does not match its hash (edited)`,
    });
  }
}

function malformation(record: SnapshotRecord): string | undefined {
  for (const name of ["id", "actionType", "summary", "previousHash", "hash"] as const) {
    if (typeof record[name] !== "string") return `has a bad ${name}`;
  }
  if (record.transactionId !== null) {
    if (typeof record.transactionId !== "string" || record.transactionId === "") {
      return "has a bad transaction ID";
    }
  }
  for (const name of ["number", "timestamp"] as const) {
    if (!Number.isSafeInteger(record[name]) || record[name] < 0) return `has a bad ${name}`;
  }
  if (!isContentHash(record.hash)) return "has a malformed hash";
  if (record.previousHash !== "" && !isContentHash(record.previousHash)) {
    return "has a malformed previous hash";
  }
  let last: string | undefined;
  for (const file of record.files) {
    if (typeof file.path !== "string" || file.path === "") return "lists a bad path";
    if (last !== undefined && comparePaths(last, file.path) >= 0) {
      return `lists "${file.path}" out of order or twice`;
    }
    last = file.path;
    if (file.state !== "present" && file.state !== "absent") {
      return `has an unknown state "${file.state}" for "${file.path}"`;
    }
    if (file.kind !== "file" && file.kind !== "symlink" && file.kind !== "dir") {
      return `has an unknown kind "${file.kind}" for "${file.path}"`;
    }
    const needsHash = file.state === "present" && file.kind !== "dir";
    if (needsHash ? !isContentHash(file.hash) : file.hash !== "") {
      return `has a malformed content hash for "${file.path}"`;
    }
    if (!Number.isSafeInteger(file.size) || file.size < 0) {
      return `has a bad size for "${file.path}"`;
    }
    if (!Number.isSafeInteger(file.mode) || file.mode < 0) {
      return `has a bad mode for "${file.path}"`;
    }
  }
  return undefined;
}

function gapMessage(from: number, to: number): string {
  return from === to ? `Snapshot ${from} is missing` : `Snapshots ${from} to ${to} are missing`;
}
