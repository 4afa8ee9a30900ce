import type { WriteBackEntry } from "../wire/mod.ts";
import { wirePathProblem } from "../paths/mod.ts";
import { ORIGINS, S_IFLNK, S_IFMT } from "../store/mod.ts";
import { isControlFile, linkTargetProblem } from "../workspace/mod.ts";
import { bytesForPeople } from "../log/mod.ts";

/** The reasons a write-back entry is rejected, as the first word of the wire reason. */
export type RejectReason =
  | "conflict"
  | "invalid path"
  | "forbidden"
  | "filtered"
  | "too large"
  | "invalid content"
  | "failed";

/** An iteration of a path that the master recorded after the entry's `master_rowid_seen`. */
export interface LaterIteration {
  /** Its master sequence. */
  sequence: number;
  /** Who made it: a sandbox id, `"local"`, `"master"`. */
  origin: string;
}

/** What the master knows about one path of an entry. */
export interface WriteBackPathFacts {
  /** Whether the master's replica-to-master filter excludes the path. */
  filtered: boolean;
  /** The path's iterations newer than the entry's `master_rowid_seen`, oldest first. */
  later: LaterIteration[];
  /**
   * Whether the master holds live paths beneath this one (a folder with something in
   * it): a `Delete` of it, or a `Write` of a file or link over it (the caller looks only
   * for those), is then a conflict, since the replica removes a folder only after what
   * it held (PROTOCOL.md §8). @default {false}
   */
  holdsLive?: boolean;
  /**
   * Whether the master's latest record of the path is already the state a `Write` or
   * `Delete` leaves there (the same content and mode, or no file): the change makes nothing
   * new, so it conflicts with nothing and is accepted without being made. A replica started
   * on a folder that already held the master's files sends each as a local write. @default {false}
   */
  alreadyHeld?: boolean;
}

/** Everything {@linkcode decideWriteBack} needs, gathered by the caller. */
export interface WriteBackFacts {
  /** The sending replica. */
  sandboxId: string;
  /** Chronicle's data folder inside the workspace, if it is inside. */
  dataDir?: string | undefined;
  /** Largest content a write-back may carry, in bytes. */
  maxContentBytes: number;
  /**
   * The state of a `Write`'s content: its bytes hash to `content_hash` (`verified`), they
   * do not (`mismatch`), no bytes came but the master holds the hash (`stored`), or
   * neither (`missing`). Ignored for other operations.
   */
  content: "verified" | "mismatch" | "stored" | "missing";
  /** Facts per normalized path (both paths of a `Rename`). */
  paths: Record<string, WriteBackPathFacts>;
}

/** The outcome for one entry. */
export type WriteBackVerdict =
  | {
    accept: true;
    paths: string[];
    /** The master already holds what the entry leaves: nothing to make (see `alreadyHeld`). */
    unchanged?: true;
  }
  | {
    accept: false;
    reason: RejectReason;
    /** The wire reason: the reason word, then a colon and the details. */
    message: string;
    /** A path that tries to leave the workspace: the sender is hostile or broken. */
    disconnect: boolean;
  };

/**
 * The normalized paths an entry touches (one, or two for a `Rename`), or why they are
 * unacceptable (PROTOCOL.md §7). A path must arrive already normalized. Pure.
 *
 * @param entry The entry.
 * @param dataDir The data folder inside the workspace, if any.
 * @returns The paths, or a problem; `escapes` marks an absolute path or a `..` segment.
 */
export function entryPaths(
  entry: WriteBackEntry,
  dataDir?: string,
): { paths: string[] } | { problem: string; escapes: boolean } {
  const raw = entry.operation.type === "Rename"
    ? [entry.filepath, entry.operation.new_path]
    : [entry.filepath];
  const paths: string[] = [];
  for (const path of raw) {
    const problem = wirePathProblem(path, dataDir);
    if (problem) return problem;
    paths.push(path);
  }
  if (paths.length === 2 && paths[0] === paths[1]) {
    return { problem: `rename of "${paths[0]}" onto itself`, escapes: false };
  }
  return { paths };
}

/**
 * Decides one write-back entry by the causal rule of PROTOCOL.md §6: it is accepted when
 * no iteration of its path (both paths for a `Rename`) newer than `master_rowid_seen`
 * came from another origin; the replica's own earlier writes never conflict, and neither
 * does a write or removal whose result the master already holds. Before that,
 * paths must be valid and unfiltered and a `Write` must carry (or name stored) content
 * within the size limit. Pure: no I/O, never throws.
 *
 * @param entry The entry as received.
 * @param facts What the master knows (see {@linkcode WriteBackFacts}).
 * @returns Accept with the normalized paths, or reject with a reason.
 *
 * @example An agent edit after the replica's view makes a conflict
 * ```ts
 * import { decideWriteBack } from "./write_back_decision.ts";
 * const verdict = decideWriteBack({
 *   local_seq: 1n, filepath: "a.txt", operation: { type: "Delete" }, content_hash: null,
 *   content_bytes: null, size: 0n, permissions: 0n, is_deletion: true, master_rowid_seen: 3n,
 * }, {
 *   sandboxId: "sb", maxContentBytes: 1024, content: "missing",
 *   paths: { "a.txt": { filtered: false, later: [{ sequence: 4, origin: "local" }] } },
 * });
 * if (verdict.accept || verdict.reason !== "conflict") throw new Error("expected a conflict");
 * ```
 */
export function decideWriteBack(entry: WriteBackEntry, facts: WriteBackFacts): WriteBackVerdict {
  const located = entryPaths(entry, facts.dataDir);
  if ("problem" in located) return reject("invalid path", located.problem, located.escapes);
  const { paths } = located;
  for (const path of paths) {
    // Chronicle's own control files set the master's recording policy: only the agent
    // host changes them (SECURITY.md).
    if (isControlFile(path)) {
      return reject(
        "forbidden",
        `"${path}" is Chronicle's control file; a sandbox cannot change the master's recording policy (edit it on the agent host)`,
      );
    }
    if (facts.paths[path]?.filtered) {
      return reject("filtered", `"${path}" is excluded from replica-to-master replication`);
    }
  }
  if (entry.operation.type === "Write") {
    const declared = entry.content_bytes?.length ?? Number(entry.size);
    if (declared > facts.maxContentBytes) {
      return reject(
        "too large",
        `${bytesForPeople(declared)}, over the master's write-back limit of ${
          bytesForPeople(facts.maxContentBytes)
        } (--max-writeback-bytes on the agent host)`,
      );
    }
    if (entry.content_hash === null) return reject("invalid content", "a write without a hash");
    if (facts.content === "mismatch") {
      return reject("invalid content", `bytes do not hash to "${entry.content_hash}"`);
    }
    if (facts.content === "missing") {
      return reject("invalid content", `no bytes sent and "${entry.content_hash}" is not stored`);
    }
    if (entry.content_bytes !== null && BigInt(entry.content_bytes.length) !== entry.size) {
      return reject(
        "invalid content",
        `${entry.content_bytes.length} bytes sent for a declared size of ${entry.size}`,
      );
    }
  }
  const op = entry.operation.type;
  const only = facts.paths[paths[0]!];
  // Before the link's target is judged: a link the master records already (one of its own
  // with a target outside, in a copy a replica started on) is written nowhere.
  if ((op === "Write" || op === "Delete") && only?.alreadyHeld && !only.holdsLive) {
    return { accept: true, paths, unchanged: true };
  }
  // A link's target is its content: judged here when it came along (the workspace's
  // executor judges stored content when it writes the link).
  if (
    op === "Write" && (Number(entry.permissions) & S_IFMT) === S_IFLNK &&
    entry.content_bytes !== null
  ) {
    const problem = linkTargetProblem(paths[0]!, new TextDecoder().decode(entry.content_bytes));
    if (problem !== null) {
      return reject("forbidden", `"${paths[0]}" is a symbolic link: ${problem}`);
    }
  }
  const seen = Number(entry.master_rowid_seen);
  for (const path of paths) {
    const foreign = (facts.paths[path]?.later ?? []).find((it) =>
      it.sequence > seen && it.origin !== facts.sandboxId
    );
    if (foreign) return reject("conflict", conflictDetail(path, foreign, seen));
  }
  if (entry.operation.type !== "Rename" && facts.paths[paths[0]!]?.holdsLive) {
    // A write's facts hold this only for a file over a folder (see WriteBackPathFacts).
    return reject("conflict", `folder "${paths[0]}" holds paths the replica did not remove`);
  }
  return { accept: true, paths };
}

/**
 * Why a write-back conflicts, for a person: the first change of the path on the master
 * after the version of it the sandbox's own change was made over, and who made it (pure).
 *
 * @param path The path changed on both sides.
 * @param foreign The master's change the sandbox had not seen: its sequence and origin.
 * @param seen The master sequence of the path's version the sandbox held when it made its
 * change (`master_rowid_seen`; 0: it held none).
 * @returns The detail after `conflict: `.
 * @example
 * ```ts
 * import { equal } from "node:assert/strict";
 * equal(
 *   conflictDetail("a.txt", { sequence: 30, origin: "local" }, 12),
 *   '"a.txt" changed on the master at sequence 30 (an edit on its disk), after the ' +
 *     "version of it this sandbox had (sequence 12)",
 * );
 * ```
 */
export function conflictDetail(
  path: string,
  foreign: { sequence: number; origin: string },
  seen: number,
): string {
  const since = seen === 0
    ? "while this sandbox had no version of it"
    : `after the version of it this sandbox had (sequence ${seen})`;
  return `"${path}" changed on the master at sequence ${foreign.sequence} (${
    madeBy(foreign.origin)
  }), ${since}`;
}

/** Who made a master change, for a person (see `Origin`). */
function madeBy(origin: string): string {
  switch (origin) {
    case ORIGINS.local:
      return "an edit on its disk";
    case ORIGINS.api:
      return "a write through its API";
    case ORIGINS.restore:
      return "a restore";
    case ORIGINS.rollback:
      return "a rollback";
    default:
      return `a write-back from sandbox "${origin}"`;
  }
}

/** The reason word of a wire reason (`"conflict: …"` → `"conflict"`). */
export function reasonWord(message: string): string {
  const colon = message.indexOf(":");
  return colon === -1 ? message : message.slice(0, colon);
}

function reject(reason: RejectReason, detail: string, disconnect = false): WriteBackVerdict {
  return { accept: false, reason, message: `${reason}: ${detail}`, disconnect };
}
