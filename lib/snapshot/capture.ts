import { join } from "node:path";
import { type Cas, hashFile, sha256Hex, WORKSPACE_TEMP_SUFFIX } from "../cas/mod.ts";
import { forEachLimited } from "../concurrency/mod.ts";
import { isInside } from "../paths/mod.ts";
import { errorMessage } from "../log/mod.ts";
import { isMissing, lstatOrNull } from "../disk/mod.ts";
import type { CaptureTarget } from "./affected_paths.ts";
import { comparePaths } from "./canonical_encoding.ts";
import { CaptureError } from "./errors.ts";
import type { CapturedFile } from "./types.ts";

/** Where captured content goes: into the CAS, or only hashed (to compare with now). */
export interface ContentSink {
  /** Stores (or hashes) a regular file's content, streaming. */
  file(absolutePath: string): Promise<{ hash: string; size: number }>;
  /** Stores (or hashes) bytes (a link's target). */
  bytes(bytes: Uint8Array): Promise<{ hash: string; size: number }>;
}

/** Options for {@linkcode captureTargets}. */
export interface CaptureOptions {
  /** Absolute workspace root. */
  root: string;
  /** Data folder relative to the root (never captured), `undefined` when outside. */
  dataDir?: string | undefined;
  /** Where content goes. */
  sink: ContentSink;
}

/** How many file contents are stored at once while capturing a folder. */
const CONCURRENCY = 8;

/**
 * A sink that stores content in the CAS (deduplicated, large files streamed and chunked).
 *
 * @param cas The content store.
 * @returns The sink.
 */
export function casSink(cas: Cas): ContentSink {
  return {
    file: (path) => cas.putFile(path),
    bytes: (bytes) => cas.putBytes(bytes),
  };
}

/** A sink that only hashes content, storing nothing (for diffs). */
export const HASH_ONLY_SINK: ContentSink = {
  file: (path) => hashFile(path),
  bytes(bytes) {
    return Promise.resolve({ hash: sha256Hex(bytes), size: bytes.length });
  },
};

/**
 * Captures the current state of paths: a file or link with its content, a folder with
 * everything beneath it, a missing path as `absent`. When a path's parent folders are
 * missing, the highest missing one is captured as `absent` instead, so undoing removes the
 * folders a creation made. Symbolic links are captured as links and never followed;
 * a path beyond a linked folder is refused. The data folder and in-flight temp files
 * (`*.chronicle-tmp`) are skipped.
 *
 * @param targets The paths to capture (normalized, relative).
 * @param options The root, the data folder and the content sink.
 * @returns The entries, sorted by path, each path once.
 * @throws {CaptureError} When any path cannot be captured completely (nothing is returned).
 */
export async function captureTargets(
  targets: readonly CaptureTarget[],
  options: CaptureOptions,
): Promise<CapturedFile[]> {
  const found = new Map<string, Found>();
  for (const target of [...targets].sort((a, b) => comparePaths(a.path, b.path))) {
    if (found.has(target.path)) continue;
    for (const item of await locate(target, options)) {
      if (!found.has(item.path)) found.set(item.path, item);
    }
  }
  const items = [...found.values()];
  const files: CapturedFile[] = [];
  await forEachLimited(items, CONCURRENCY, async (item) => {
    files.push(await materialize(item, options));
  });
  return files.sort((a, b) => comparePaths(a.path, b.path));
}

/** A path found during the walk, before its content is read. */
type Found =
  | { path: string; state: "absent"; kind: "file" | "dir" }
  | { path: string; state: "present"; info: Deno.FileInfo };

async function locate(target: CaptureTarget, options: CaptureOptions): Promise<Found[]> {
  const segments = target.path.split("/");
  for (let i = 1; i < segments.length; i++) {
    const ancestor = segments.slice(0, i).join("/");
    const info = await stat(ancestor, ancestor, options);
    if (!info) return [{ path: ancestor, state: "absent", kind: "dir" }];
    if (info.isSymlink) {
      throw new CaptureError(target.path, `it lies beyond the symbolic link "${ancestor}"`);
    }
    if (!info.isDirectory) return [{ path: target.path, state: "absent", kind: target.absentKind }];
  }
  const info = await stat(target.path, target.path, options);
  if (!info) return [{ path: target.path, state: "absent", kind: target.absentKind }];
  const out: Found[] = [];
  await walk(target.path, info, options, out);
  return out;
}

async function walk(path: string, info: Deno.FileInfo, options: CaptureOptions, out: Found[]) {
  if (!info.isFile && !info.isSymlink && !info.isDirectory) {
    throw new CaptureError(path, "it is not a regular file, symbolic link or folder");
  }
  out.push({ path, state: "present", info });
  if (!info.isDirectory) return;
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(join(options.root, path))) names.push(entry.name);
  } catch (error) {
    // RACE: a folder removed after its lstat is captured as an empty folder.
    if (isMissing(error)) return;
    throw new CaptureError(path, errorMessage(error), { cause: error });
  }
  for (const name of names.sort(comparePaths)) {
    const child = `${path}/${name}`;
    if (name.endsWith(WORKSPACE_TEMP_SUFFIX)) continue;
    if (options.dataDir !== undefined && isInside(child, options.dataDir)) continue;
    const childInfo = await stat(child, path, options);
    // RACE: an entry removed between the listing and its lstat did not exist for this capture.
    if (childInfo) await walk(child, childInfo, options, out);
  }
}

async function stat(
  path: string,
  target: string,
  options: CaptureOptions,
): Promise<Deno.FileInfo | null> {
  try {
    return await lstatOrNull(join(options.root, path));
  } catch (error) {
    throw new CaptureError(target, errorMessage(error), { cause: error });
  }
}

async function materialize(item: Found, options: CaptureOptions): Promise<CapturedFile> {
  if (item.state === "absent") {
    return { path: item.path, state: "absent", kind: item.kind, hash: "", size: 0, mode: 0 };
  }
  const { path, info } = item;
  const mode = info.mode ?? 0;
  if (info.isDirectory) return { path, state: "present", kind: "dir", hash: "", size: 0, mode };
  const absolute = join(options.root, path);
  try {
    if (info.isSymlink) {
      const target = await Deno.readLink(absolute);
      const stored = await options.sink.bytes(new TextEncoder().encode(target));
      return { path, state: "present", kind: "symlink", ...stored, mode };
    }
    // RACE: a file swapped for a link between the lstat and this read would be read through
    // the link; the content only lands in the CAS, and the entry still restores as a file.
    const stored = await options.sink.file(absolute);
    return { path, state: "present", kind: "file", hash: stored.hash, size: stored.size, mode };
  } catch (error) {
    // The file changed under the capture (replaced by a link or folder, or removed): the
    // snapshot would not be what was there, so it is refused rather than guessed.
    throw new CaptureError(path, errorMessage(error), { cause: error });
  }
}
