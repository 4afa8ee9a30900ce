/** What an ID names. */
export type IdKind = "snapshot" | "transaction";

/** No snapshot or transaction has this ID or ID prefix. */
export class UnknownIdError extends Error {
  /** Whether a snapshot or a transaction was asked for. */
  readonly kind: IdKind;
  /** The ID or prefix as given. */
  readonly id: string;

  /**
   * Makes the error for an ID that matches nothing.
   *
   * @param kind What was looked up.
   * @param id The ID or prefix as given.
   */
  constructor(kind: IdKind, id: string) {
    super(`No ${kind} has the ID "${id}"`);
    this.name = "UnknownIdError";
    this.kind = kind;
    this.id = id;
  }
}

/** An ID prefix that matches more than one snapshot or transaction. */
export class AmbiguousIdError extends Error {
  /** Whether a snapshot or a transaction was asked for. */
  readonly kind: IdKind;
  /** The prefix as given. */
  readonly prefix: string;
  /** Some of the IDs it matches. */
  readonly matches: readonly string[];

  /**
   * Makes the error for a prefix that matches several IDs.
   *
   * @param kind What was looked up.
   * @param prefix The prefix as given.
   * @param matches The IDs it matches (a few are named in the message).
   */
  constructor(kind: IdKind, prefix: string, matches: string[]) {
    const named = matches.slice(0, 3).map((id) => `"${id}"`).join(", ");
    const more = matches.length > 3 ? ", …" : "";
    super(
      `The ${kind} ID prefix "${prefix}" is ambiguous: it matches ${named}${more}; give more characters`,
    );
    this.name = "AmbiguousIdError";
    this.kind = kind;
    this.prefix = prefix;
    this.matches = matches;
  }
}

/** A transaction asked to do what its status does not allow (e.g. commit twice). */
export class TransactionStateError extends Error {
  /** The transaction's ID. */
  readonly id: string;
  /** Its status. */
  readonly status: string;

  /**
   * Makes the error for a transaction in the wrong state.
   *
   * @param id The transaction's ID.
   * @param status Its current status.
   * @param wanted What was asked, e.g. `"commit"`.
   */
  constructor(id: string, status: string, wanted: string) {
    super(`Cannot ${wanted} transaction "${id}": it is ${status.replace("_", " ")}, not active`);
    this.name = "TransactionStateError";
    this.id = id;
    this.status = status;
  }
}

/** A path that could not be captured; no snapshot was recorded. */
export class CaptureError extends Error {
  /** The workspace-relative path that failed. */
  readonly path: string;

  /**
   * Makes the error for a path that cannot be snapshotted or restored.
   *
   * @param path The path that failed.
   * @param reason Why, in a few words.
   */
  constructor(path: string, reason: string, options?: ErrorOptions) {
    super(`Cannot snapshot "${path}": ${reason}`, options);
    this.name = "CaptureError";
    this.path = path;
  }
}

/** A snapshot whose backed-up content is missing or damaged, so it cannot be rolled back. */
export class SnapshotContentError extends Error {
  /** The snapshot's ID. */
  readonly snapshotId: string;
  /** The path whose content is unusable. */
  readonly path: string;
  /** The content hash that is missing or damaged. */
  readonly hash: string;

  /**
   * Makes the error for backed-up content that is missing or corrupt.
   *
   * @param snapshotId The snapshot's ID.
   * @param path The path whose content is unusable.
   * @param hash Its content hash.
   * @param problem `missing` or `damaged`.
   */
  constructor(snapshotId: string, path: string, hash: string, problem: string) {
    super(
      `Snapshot "${snapshotId}" cannot be used: the content "${hash}" of "${path}" is ${problem}`,
    );
    this.name = "SnapshotContentError";
    this.snapshotId = snapshotId;
    this.path = path;
    this.hash = hash;
  }
}
