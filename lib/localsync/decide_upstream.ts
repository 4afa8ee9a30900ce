/** A path's content as one side sees it: a content hash, or `null` when absent. */
export type Side = string | null;

/** What local-sync does with a change that arrives from upstream. */
export type UpstreamDecision =
  | { action: "apply" } // the person has not touched the file: take upstream
  | { action: "agree" } // the file already holds upstream's content: nothing to write
  | { action: "conflict" }; // both changed it: leave the file, record the conflict

/** What local-sync knows about one path when an upstream change arrives. */
export interface UpstreamInput {
  /** The content both sides last agreed on (the last upstream version applied or accepted). */
  base: Side;
  /** What the local file holds now. */
  local: Side;
  /** What upstream now has. */
  upstream: Side;
  /** Whether a local edit is still waiting (debounce window, unsent or unanswered write-back). */
  localPending: boolean;
}

/**
 * Decides whether an upstream change may be written over the local file (seed 004,
 * Local-Sync "Conflict Resolution"; PROTOCOL.md §6). Upstream never clobbers a local edit:
 * if the person changed the file since the version both agreed on, or an edit of theirs
 * is still pending, it is a conflict. Pure.
 */
export function decideUpstream(input: UpstreamInput): UpstreamDecision {
  if (input.local === input.upstream) return { action: "agree" };
  if (input.local === input.base && !input.localPending) return { action: "apply" };
  return { action: "conflict" };
}
