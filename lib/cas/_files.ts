/**
 * Small file helpers for `lib/cas`: reading whole files and pieces, and stat/remove
 * shortcuts. Internal.
 *
 * @module
 */
import { existsSync } from "node:fs";

/** Pieces read from a file in one go by {@linkcode readPieces}. */
const READ_PIECE = 1024 * 1024;

/**
 * Reads a file to its end, starting with a buffer of the expected size, or with `scratch`
 * when it holds more: the result is then a view of `scratch`, to be used before it is
 * read into again.
 */
export function readRest(file: Deno.FsFile, expected: number, scratch?: Uint8Array): Uint8Array {
  let buf = scratch !== undefined && scratch.length > expected
    ? scratch
    : new Uint8Array(expected + 1);
  let len = 0;
  for (;;) {
    if (len === buf.length) {
      const bigger = new Uint8Array(buf.length * 2);
      bigger.set(buf);
      buf = bigger;
    }
    const n = file.readSync(buf.subarray(len));
    if (n === null) break;
    len += n;
  }
  return buf.subarray(0, len);
}

/**
 * A file's content in pieces of up to {@linkcode READ_PIECE} bytes. The pieces share one
 * buffer: each is valid only until the next is requested.
 */
export async function* readPieces(file: Deno.FsFile): AsyncGenerator<Uint8Array> {
  const buf = new Uint8Array(READ_PIECE);
  for (;;) {
    let len = 0;
    while (len < buf.length) {
      const n = await file.read(buf.subarray(len));
      if (n === null) break;
      len += n;
    }
    if (len > 0) yield buf.subarray(0, len);
    if (len < buf.length) return;
  }
}

/** Removes a file last written before `cutoff` (mtime checked again just before); `true` when removed. */
export async function removeIfOlder(
  path: string,
  info: Deno.FileInfo,
  cutoff: number,
): Promise<boolean> {
  if ((info.mtime?.getTime() ?? 0) >= cutoff) return false;
  const now = await statOrNull(path);
  if (now === null || (now.mtime?.getTime() ?? 0) >= cutoff) return false;
  await Deno.remove(path).catch(ignoreNotFound);
  return true;
}

/** Marks an existing file as just stored; `false` when it vanished meanwhile. */
export function freshen(path: string): Promise<boolean> {
  const now = new Date();
  try {
    Deno.utimeSync(path, now, now);
    return Promise.resolve(true);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return Promise.resolve(false);
    return Promise.reject(error);
  }
}

/** `Deno.stat`, with `null` for a missing file. */
export function statOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return Promise.resolve(Deno.statSync(path));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return Promise.resolve(null);
    return Promise.reject(error);
  }
}

/** Opens `path` for reading; `null` when it does not exist. */
export function openForReadOrNull(path: string): Deno.FsFile | null {
  try {
    return Deno.openSync(path, { read: true });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/**
 * Tells whether a regular file exists at `path`. Asks `existsSync` first: a missing file
 * is the common answer while content is fetched or first stored, and a thrown error
 * costs far more. A file that cannot be looked at (no permission) is then missing too.
 */
export async function isFile(path: string): Promise<boolean> {
  return existsSync(path) && ((await statOrNull(path))?.isFile ?? false);
}

/** Joins pieces into one new array. */
export function concat(pieces: Uint8Array[]): Uint8Array {
  let total = 0;
  for (const p of pieces) total += p.length;
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A `catch` handler that swallows `NotFound` and rethrows anything else. */
export function ignoreNotFound(error: unknown): void {
  if (!(error instanceof Deno.errors.NotFound)) throw error;
}
