/** The `format` field of every `checkpoint.json`. */
export const CHECKPOINT_FORMAT = "chronicle-checkpoint";
/** The version of the checkpoint layout this code writes and reads. */
export const CHECKPOINT_VERSION = 1;

/**
 * `checkpoint.json`: what a checkpoint folder holds. Beside it: `chronicle.db` (the
 * database copy), `objects.txt` (one content or chunk hash per line, sorted) and, when
 * made with objects, `objects/ab/<hash>` and `manifests/ab/<hash>.json` as in the CAS.
 */
export interface CheckpointInfo {
  /** Always {@linkcode CHECKPOINT_FORMAT}: what makes the folder a checkpoint. */
  format: typeof CHECKPOINT_FORMAT;
  /** The layout's version, {@linkcode CHECKPOINT_VERSION} when written by this Chronicle. */
  version: number;
  /** ISO 8601 time the copy was taken. */
  created: string;
  /** The highest sequence in the copy (0 when empty). */
  sequence: number;
  /** Live paths in the copy's latest tree. */
  paths: number;
  /** Iterations in the copy, deletions included. */
  iterations: number;
  /** Lines of `objects.txt`: every content and chunk hash the copy references. */
  objects: number;
  /** The database copy's file name in the folder. */
  database: string;
  /** Lowercase hex SHA-256 of the database copy. */
  databaseSha256: string;
  /** Byte size of the database copy. */
  databaseBytes: number;
  /** True when the objects were copied into the folder. */
  withObjects: boolean;
}

/** A checkpoint or rehydrate that could not be done, with a one-line reason. */
export class CheckpointError extends Error {
  /**
   * Makes the error.
   *
   * @param message The reason, in sentence case, values quoted.
   * @param options The cause, if any.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "CheckpointError";
  }
}
