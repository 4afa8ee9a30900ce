/** Options for {@linkcode ConnectionLimits}. */
export interface ConnectionLimitsOptions {
  /** Connections open at once over every listener that shares these limits. */
  maxTotal: number;
}

/** Counts of open connections, for a decision. */
export interface AdmitInput {
  /** Open on this listener. */
  listenerOpen: number;
  /** This listener's maximum. */
  listenerMax: number;
  /** Open on every listener. */
  totalOpen: number;
  /** The maximum over every listener. */
  totalMax: number;
}

/**
 * Whether one more connection may be kept open.
 *
 * @returns `null` to admit it, or the reason to refuse it.
 */
export function admitConnection(input: AdmitInput): string | null {
  if (input.listenerOpen >= input.listenerMax) {
    return `this listener already holds its maximum of ${input.listenerMax} connections`;
  }
  if (input.totalOpen >= input.totalMax) {
    return `Chronicle already holds its maximum of ${input.totalMax} connections`;
  }
  return null;
}

/** One connection slot; release it when the connection closes (twice is harmless). */
export interface ConnectionSlot {
  /** Gives the slot back. */
  release(): void;
}

/**
 * The connections open over every listener of a process, so that a flood on one listener
 * can never exhaust the process's file descriptors (which ends it) and leaves room for
 * the others.
 */
export class ConnectionLimits {
  readonly #maxTotal: number;
  #total = 0;

  /**
   * No connection open yet.
   *
   * @param options See {@linkcode ConnectionLimitsOptions}.
   */
  constructor(options: ConnectionLimitsOptions) {
    this.#maxTotal = options.maxTotal;
  }

  /** Connections open now over every listener. */
  get total(): number {
    return this.#total;
  }

  /** The maximum over every listener. */
  get maxTotal(): number {
    return this.#maxTotal;
  }

  /**
   * A per-listener counter drawing on these limits.
   *
   * @param max The listener's own maximum.
   */
  listener(max: number): ListenerLimit {
    return new ListenerLimit(this, max);
  }

  /** @internal Called by {@linkcode ListenerLimit}. */
  adjust(delta: number): void {
    this.#total += delta;
  }
}

/** The connections open on one listener. */
export class ListenerLimit {
  readonly #limits: ConnectionLimits;
  readonly #max: number;
  #open = 0;

  /**
   * A listener with no connection open yet.
   *
   * @param limits The process-wide limits.
   * @param max This listener's maximum.
   */
  constructor(limits: ConnectionLimits, max: number) {
    this.#limits = limits;
    this.#max = max;
  }

  /** Connections open on this listener. */
  get open(): number {
    return this.#open;
  }

  /**
   * Takes a slot for a new connection.
   *
   * @returns The slot, or the reason the connection must be refused.
   */
  admit(): ConnectionSlot | string {
    const refused = admitConnection({
      listenerOpen: this.#open,
      listenerMax: this.#max,
      totalOpen: this.#limits.total,
      totalMax: this.#limits.maxTotal,
    });
    if (refused) return refused;
    this.#open++;
    this.#limits.adjust(1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.#open--;
        this.#limits.adjust(-1);
      },
    };
  }
}

/** File descriptors kept free of connections, for the database, CAS files and watchers. */
const RESERVED_DESCRIPTORS = 96;
/** Upper bound of the default, whatever the descriptor limit. */
const DEFAULT_MAX_CONNECTIONS = 1024;

/**
 * The soft open-file limit assumed when it cannot be read: the usual Linux default. Deno
 * lets only `--allow-all` read `/proc/self/limits`, and the binaries do not run with it;
 * under a lower limit give `--max-connections` (a failed accept is survived either way).
 */
const ASSUMED_SOFT_LIMIT = 1024;

/**
 * The default maximum of connections over all listeners: at most 1,024, fewer when the
 * process's open-file limit is low, so that connections alone do not exhaust it.
 *
 * @param softLimit The soft `RLIMIT_NOFILE`; read from `/proc/self/limits` when omitted,
 * assumed 1,024 when unreadable (`null`).
 * @returns At least 16.
 */
export function defaultMaxConnections(softLimit: number | null = readOpenFileLimit()): number {
  softLimit ??= ASSUMED_SOFT_LIMIT;
  const room = Math.floor((softLimit - RESERVED_DESCRIPTORS) * 3 / 4);
  return Math.max(16, Math.min(DEFAULT_MAX_CONNECTIONS, room));
}

/** The soft open-file limit from `/proc/self/limits`, or `null` where that is unreadable. */
function readOpenFileLimit(): number | null {
  try {
    const text = Deno.readTextFileSync("/proc/self/limits");
    const line = text.split("\n").find((l) => l.startsWith("Max open files"));
    const soft = line?.slice("Max open files".length).trim().split(/\s+/)[0];
    const value = Number(soft);
    return Number.isFinite(value) && value > 0 ? value : null;
  } catch {
    return null;
  }
}

/**
 * The limit of a listener that shares its connections with no other: one listener of its
 * own {@linkcode ConnectionLimits}, both sized by {@linkcode defaultMaxConnections}.
 *
 * @returns The listener's limit.
 */
export function ownListenerLimit(): ListenerLimit {
  const max = defaultMaxConnections(); // reads the open-file limit once
  return new ConnectionLimits({ maxTotal: max }).listener(max);
}
