/**
 * Scale-to-zero support: `checkpoint` takes a consistent copy of a workspace's
 * database with SQLite's online backup and lists (optionally copies) the CAS objects it
 * needs; `rehydrate` verifies such a copy, completes the CAS, installs the database and
 * writes the latest tree back, so an idle instance can stop and resume elsewhere with
 * nothing lost.
 *
 * @module
 */
export {
  checkpoint,
  CHECKPOINT_DATABASE,
  type CheckpointOptions,
  type CheckpointResult,
} from "./checkpoint.ts";
export {
  rehydrate,
  type RehydrateOptions,
  type RehydrateProblem,
  type RehydrateResult,
} from "./rehydrate.ts";
export {
  CONTENT_REFERENCES,
  type ContentReference,
  referencedHashes,
} from "./content_references.ts";
export {
  CHECKPOINT_FORMAT,
  CHECKPOINT_VERSION,
  CheckpointError,
  type CheckpointInfo,
} from "./types.ts";
