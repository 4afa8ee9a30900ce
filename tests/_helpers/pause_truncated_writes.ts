/**
 * An audit aid, imported by no test: loaded with `--preload`, it makes every
 * `Deno.writeFile` and `Deno.writeTextFile` of the test process into a Chronicle workspace
 * (a folder with `.chronicle` above the file) pause between the truncate and the write, as
 * a loaded machine may. A watcher's quiet time then passes in between, and the empty file
 * is captured as a version of its own: a test that counts versions after such a write
 * fails, where `putAtomic` (`temp_dir.ts`, one step) would not.
 *
 * ```sh
 * deno test -A --preload tests/_helpers/pause_truncated_writes.ts tests/e2e/
 * ```
 *
 * `CHRONICLE_PAUSE_MS` sets the pause (default 400). `CHRONICLE_PAUSE_MATCH`, a regular
 * expression, pauses the paths it matches instead, in a workspace or not (a data folder
 * kept outside it, `--data-dir`, leaves no `.chronicle` to find). Appends, streams and
 * `*.chronicle-tmp` files are never paused.
 *
 * @module
 */
const pauseMs = Number(Deno.env.get("CHRONICLE_PAUSE_MS") ?? "400");
const match = Deno.env.get("CHRONICLE_PAUSE_MATCH");
const only = match ? new RegExp(match) : undefined;
const writeFile = Deno.writeFile;
const writeTextFile = Deno.writeTextFile;

/** Whether a folder above `path` holds `.chronicle` (a workspace Chronicle opened). */
function insideWorkspace(path: string): boolean {
  for (let dir = path.slice(0, path.lastIndexOf("/")); dir.length > 1;) {
    try {
      if (Deno.statSync(`${dir}/.chronicle`).isDirectory) return true;
    } catch {
      // none here
    }
    dir = dir.slice(0, dir.lastIndexOf("/"));
  }
  return false;
}

function paused(path: string | URL, options: Deno.WriteFileOptions): boolean {
  const name = typeof path === "string" ? path : path.pathname;
  return !options.append && !options.createNew && !name.endsWith(".chronicle-tmp") &&
    (only ? only.test(name) : insideWorkspace(name));
}

/** Truncates, pauses, writes: what a writer the scheduler holds back does. */
async function writeSlowly(path: string | URL, bytes: Uint8Array, options: Deno.WriteFileOptions) {
  const file = await Deno.open(path, {
    write: true,
    create: options.create ?? true,
    truncate: true,
    ...(options.mode === undefined ? {} : { mode: options.mode }),
  });
  try {
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
    for (let done = 0; done < bytes.length;) done += await file.write(bytes.subarray(done));
  } finally {
    file.close();
  }
}

/**
 * Puts in place of `Deno[name]` a writer that writes slowly what is paused (see `paused`),
 * when `bytesOf` can take its data whole; everything else goes to `original`.
 */
function slowDown<Data>(
  name: "writeFile" | "writeTextFile",
  original: (path: string | URL, data: Data, options?: Deno.WriteFileOptions) => Promise<void>,
  bytesOf: (data: Data) => Uint8Array | null,
): void {
  Object.defineProperty(Deno, name, {
    configurable: true,
    writable: true,
    value: (path: string | URL, data: Data, options: Deno.WriteFileOptions = {}) => {
      const bytes = paused(path, options) ? bytesOf(data) : null;
      return bytes ? writeSlowly(path, bytes, options) : original(path, data, options);
    },
  });
}

slowDown(
  "writeFile",
  writeFile,
  (data: Uint8Array | ReadableStream<Uint8Array>) => data instanceof Uint8Array ? data : null,
);
slowDown(
  "writeTextFile",
  writeTextFile,
  (data: string | ReadableStream<string>) =>
    typeof data === "string" ? new TextEncoder().encode(data) : null,
);
