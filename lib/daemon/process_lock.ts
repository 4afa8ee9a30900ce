import { join } from "node:path";

/**
 * The file a running Chronicle holds locked (`flock`) on its data folder for as long as it
 * runs: the system drops the lock when the process ends, however it ends (`kill -9`
 * included), and only then. So a second Chronicle on the same workspace is refused at
 * start, and `chronicle stop` knows when the process is gone. A process's liveness cannot
 * be asked otherwise under the binaries' permissions (Deno gives `/proc` to `--allow-all`
 * only, and signals to `--allow-run`).
 */
export const PROCESS_LOCK_FILE = "process.lock";

/** Another Chronicle holds the data folder's process lock. */
export class WorkspaceBusyError extends Error {
  /**
   * Makes the error naming the data folder and, when known, the holder's pid.
   *
   * @param dataDir The data folder.
   * @param holder What the lock file says of its holder (its pid), when readable.
   */
  constructor(dataDir: string, holder: string) {
    super(
      `Another Chronicle${holder === "" ? "" : ` (pid ${holder})`} runs on the data folder ` +
        `"${dataDir}": stop it first (chronicle stop), or give this one another --data-dir`,
    );
    this.name = "WorkspaceBusyError";
  }
}

/** A held process lock: released by {@linkcode ProcessLock.release}, or by the process's end. */
export class ProcessLock {
  readonly #file: Deno.FsFile;

  private constructor(file: Deno.FsFile) {
    this.#file = file;
  }

  /**
   * Takes the process lock of `dataDir` (an existing folder), and writes this process's pid
   * into the file.
   *
   * @throws {WorkspaceBusyError} When another process holds it.
   */
  static acquire(dataDir: string): ProcessLock {
    const file = Deno.openSync(join(dataDir, PROCESS_LOCK_FILE), {
      read: true,
      write: true,
      create: true,
      mode: 0o600,
    });
    try {
      if (!file.tryLockSync(true)) throw new WorkspaceBusyError(dataDir, holderOf(dataDir));
      file.truncateSync(0);
      file.writeSync(new TextEncoder().encode(`${Deno.pid}\n`));
    } catch (error) {
      file.close();
      throw error;
    }
    return new ProcessLock(file);
  }

  /** Releases the lock (the file stays, for the next holder). */
  release(): void {
    try {
      this.#file.unlockSync();
    } finally {
      this.#file.close();
    }
  }
}

/**
 * Whether a process holds `dataDir`'s process lock now: a Chronicle running there, or one
 * that has not finished exiting.
 */
export function processLockHeld(dataDir: string): boolean {
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(join(dataDir, PROCESS_LOCK_FILE), { read: true, write: true });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
  try {
    if (!file.tryLockSync(true)) return true;
    file.unlockSync();
    return false;
  } finally {
    file.close();
  }
}

/** The pid the lock file names, or `""` when unreadable. */
function holderOf(dataDir: string): string {
  try {
    const text = Deno.readTextFileSync(join(dataDir, PROCESS_LOCK_FILE)).trim();
    return /^\d{1,10}$/.test(text) ? text : "";
  } catch {
    return "";
  }
}
