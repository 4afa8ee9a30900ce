/**
 * Local-sync: a replica that materializes the agent's workspace as real files for a
 * person's editor, and surfaces conflicts to that person instead of resolving them. The
 * replica in `lib/replication` runs in `local-sync` mode; this module holds what is
 * particular to a person's folder: editor noise, the debounce, and three-way merging.
 *
 * @module
 */
export { EDITOR_NOISE_PATTERNS, LOCAL_SYNC_DEBOUNCE_MS } from "./editor_noise.ts";
export {
  hasConflictMarkers,
  MARKER_LABELS,
  type MergeOutcome,
  threeWayMerge,
} from "./three_way_merge.ts";
