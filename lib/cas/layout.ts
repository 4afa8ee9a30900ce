/**
 * Where a content-addressed store keeps things on disk, in one place. A store's folder
 * holds `objects/ab/<hash>` (raw bytes of whole contents and chunks, every file hashing
 * to its name), `manifests/ab/<hash>.json` (how a chunked content is assembled) and
 * `tmp/` (temp files), where `ab` is the hash's first two characters. Checkpoints made
 * with objects and object-store buckets (under their prefix) use the same relative paths.
 *
 * @module
 */
import { join } from "node:path";
import { isContentHash } from "./content_hash.ts";
import { statOrNull } from "./_files.ts";

/** The folder of object files inside a store. */
const OBJECTS = "objects";
/** The folder of manifest files inside a store. */
const MANIFESTS = "manifests";
/** The name ending of a manifest file. */
const MANIFEST_SUFFIX = ".json";

/**
 * The path of an object (a whole content or a chunk) relative to a store's folder, with
 * `/` separators: `objects/ab/<hash>`. Also its key under an object-store prefix and its
 * place in a checkpoint made with objects.
 *
 * @param hash The object's hash (not checked here).
 * @returns The relative path.
 *
 * @example
 * ```ts
 * import { casObjectPath } from "./layout.ts";
 * const path = casObjectPath("ab".padEnd(64, "0"));
 * if (path !== `objects/ab/${"ab".padEnd(64, "0")}`) throw new Error(path);
 * ```
 */
export function casObjectPath(hash: string): string {
  return `${OBJECTS}/${hash.slice(0, 2)}/${hash}`;
}

/**
 * The path of a chunked content's manifest relative to a store's folder, with `/`
 * separators: `manifests/ab/<hash>.json`.
 *
 * @param hash The whole content's hash (not checked here).
 * @returns The relative path.
 */
export function casManifestPath(hash: string): string {
  return `${MANIFESTS}/${hash.slice(0, 2)}/${hash}${MANIFEST_SUFFIX}`;
}

/** One stored file found by {@linkcode walkObjects} or {@linkcode walkManifests}. Internal. */
export interface StoredFile {
  /** The hash it is stored under. */
  hash: string;
  /** Its absolute path. */
  path: string;
  /** Its status when found. */
  info: Deno.FileInfo;
}

/** The store's folders under `root`: objects, manifests and temp files. Internal. */
export function storeFolders(root: string): { objects: string; manifests: string; tmp: string } {
  return { objects: join(root, OBJECTS), manifests: join(root, MANIFESTS), tmp: join(root, "tmp") };
}

/** Every object file of the store at `root`, with its hash and status. Internal. */
export function walkObjects(root: string): AsyncGenerator<StoredFile> {
  return walkFanOut(join(root, OBJECTS), "");
}

/** Every manifest file of the store at `root`, with its content's hash and status. Internal. */
export function walkManifests(root: string): AsyncGenerator<StoredFile> {
  return walkFanOut(join(root, MANIFESTS), MANIFEST_SUFFIX);
}

/** Every valid content file in a fan-out tree; files not named as the layout says are skipped. */
async function* walkFanOut(top: string, suffix: string): AsyncGenerator<StoredFile> {
  for await (const dir of Deno.readDir(top)) {
    if (!dir.isDirectory) continue;
    for await (const entry of Deno.readDir(join(top, dir.name))) {
      if (!entry.isFile || !entry.name.endsWith(suffix)) continue;
      const hash = entry.name.slice(0, entry.name.length - suffix.length);
      if (!isContentHash(hash) || hash.slice(0, 2) !== dir.name) continue;
      const path = join(top, dir.name, entry.name);
      const info = await statOrNull(path);
      if (info !== null) yield { hash, path, info };
    }
  }
}
