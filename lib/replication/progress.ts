import { log } from "../log/mod.ts";

/** Options for {@linkcode SyncProgress}. */
export interface SyncProgressOptions {
  /** What is being done, e.g. `"initial sync"` or `"full resync"`. */
  label: string;
  /** The sequence the work starts from. */
  from: number;
  /** The sequence it reaches when done. */
  to: number;
  /** Draw a bar on a terminal (`true`), log lines (`false`), or decide by stderr. @default {"auto"} */
  tty?: boolean | "auto";
  /** Milliseconds between log lines when not drawing a bar. @default {2000} */
  logEveryMs?: number;
}

/**
 * Reports the progress of a large initial sync or resync: a redrawn bar on stderr when
 * it is a terminal, else a log line every few seconds. Progress is measured in master
 * sequences, which a replay crosses in order.
 */
export class SyncProgress {
  readonly #label: string;
  readonly #from: number;
  readonly #to: number;
  readonly #tty: boolean;
  readonly #logEveryMs: number;
  readonly #started = Date.now();
  #files = 0;
  #bytes = 0;
  #sequence: number;
  #lastOutput = 0;
  #done = false;

  /** @param options See {@linkcode SyncProgressOptions}. */
  constructor(options: SyncProgressOptions) {
    this.#label = options.label;
    this.#from = options.from;
    this.#to = Math.max(options.to, options.from);
    this.#sequence = options.from;
    const tty = options.tty ?? "auto";
    this.#tty = tty === "auto" ? Deno.stderr.isTerminal() : tty;
    this.#logEveryMs = options.logEveryMs ?? 2000;
    log("info", `${this.#label} started`, { from: this.#from, to: this.#to });
  }

  /** The fraction done, 0 to 1. */
  get fraction(): number {
    const span = this.#to - this.#from;
    return span <= 0 ? 1 : Math.min(1, (this.#sequence - this.#from) / span);
  }

  /** Notes one applied notification. */
  update(sequence: number, bytes: number): void {
    if (this.#done) return;
    this.#files++;
    this.#bytes += bytes;
    this.#sequence = Math.max(this.#sequence, sequence);
    const now = Date.now();
    if (now - this.#lastOutput < (this.#tty ? 100 : this.#logEveryMs)) return;
    this.#lastOutput = now;
    if (this.#tty) this.#draw();
    else {
      log("info", `${this.#label} in progress`, {
        percent: Math.floor(this.fraction * 100),
        files: this.#files,
        bytes: this.#bytes,
        sequence: this.#sequence,
        of: this.#to,
      });
    }
  }

  /**
   * Ends the report with a summary line.
   *
   * @param complete Whether the work is done; else it was cut short (a connection ended),
   * and the line says how far it came.
   */
  finish(complete = true): void {
    if (this.#done) return;
    this.#done = true;
    if (this.#tty) {
      if (complete) this.#sequence = this.#to;
      this.#draw();
      Deno.stderr.writeSync(new TextEncoder().encode("\n"));
    }
    const summary = { files: this.#files, bytes: this.#bytes, ms: Date.now() - this.#started };
    if (complete) log("info", `${this.#label} done`, summary);
    else {
      log("info", `${this.#label} cut short; the next connection goes on from where it stopped`, {
        ...summary,
        sequence: this.#sequence,
        of: this.#to,
      });
    }
  }

  #draw(): void {
    const width = 30;
    const filled = Math.round(this.fraction * width);
    const bar = "#".repeat(filled) + "-".repeat(width - filled);
    const mib = (this.#bytes / 1048576).toFixed(1);
    const line = `\r${this.#label} [${bar}] ${
      Math.floor(this.fraction * 100)
    }% ${this.#files} files ${mib} MiB`;
    Deno.stderr.writeSync(new TextEncoder().encode(line));
  }
}
