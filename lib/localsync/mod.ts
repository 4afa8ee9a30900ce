/**
 * Local-sync: a replica that materializes the agent's workspace as real files for a
 * person's editor, and surfaces conflicts to that person instead of resolving them.
 * This module holds its pure decisions; the replica in `lib/replication` runs them.
 *
 * @module
 */
export {
  decideUpstream,
  type Side,
  type UpstreamDecision,
  type UpstreamInput,
} from "./decide_upstream.ts";
export {
  hasConflictMarkers,
  MARKER_LABELS,
  type MergeOutcome,
  threeWayMerge,
} from "./three_way_merge.ts";
