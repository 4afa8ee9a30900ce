/**
 * Taking space back: the sweep that removes what nothing references (the garbage
 * collector), the eviction that keeps object files within a size by removing the least
 * recently used ones held safely elsewhere, and the counts of what the store holds.
 * Internal to `lib/cas`.
 *
 * @module
 */
import { existsSync } from "node:fs";
import type { ChunkManifest } from "./types.ts";
import { CorruptContentError } from "./errors.ts";
import type { CasStats, KeptHashes, SweepOptions, SweepResult } from "./options.ts";
import { ignoreNotFound, removeIfOlder } from "./_files.ts";
import { type StoredFile, walkManifests, walkObjects } from "./layout.ts";
import type { LocalStore } from "./_local_store.ts";

/** Deletes every object and manifest not reachable from `keep` (see `Cas.sweep`). */
export async function sweep(
  store: LocalStore,
  keep: KeptHashes,
  options: SweepOptions,
): Promise<SweepResult> {
  const cutoff = options.keepNewerThan ?? Date.now();
  store.forgetRecentObjects(); // what it removes is never read from memory afterwards
  // `keep` is read, never copied (on a large store it holds 100,000 hashes): the chunks
  // that kept manifests keep are a set of their own. An object's name is a content hash,
  // so whatever else `keep` holds never matches one.
  const keptChunks = new Set<string>();
  const kept = (hash: string) => keep.has(hash) || keptChunks.has(hash);
  const result: SweepResult = { removedObjects: 0, removedBytes: 0 };
  const manifestFiles: StoredFile[] = [];
  for await (const file of walkManifests(store.root)) manifestFiles.push(file);
  for (const { hash, path, info } of manifestFiles) {
    // A manifest kept by `keep` or by its age keeps its chunks, which may be older.
    if (keep.has(hash) || !(await removeIfOlder(path, info, cutoff))) {
      let manifest: ChunkManifest | null = null;
      try {
        manifest = await store.readManifest(hash);
      } catch (error) {
        if (!(error instanceof CorruptContentError)) throw error;
        // readManifest() removed the unreadable file; its chunks are reachable no more.
        result.removedObjects++;
        result.removedBytes += info.size;
      }
      for (const ref of manifest?.chunks ?? []) keptChunks.add(ref.hash);
    } else {
      result.removedObjects++;
      result.removedBytes += info.size;
    }
  }
  for await (const { hash, path, info } of walkObjects(store.root)) {
    // RACE: an object re-put after the walk read its mtime and before the removal is
    // lost; removeIfOlder re-reads the mtime just before removing to make this narrow.
    if (kept(hash)) continue;
    if (await removeIfOlder(path, info, cutoff)) {
      result.removedObjects++;
      result.removedBytes += info.size;
    }
  }
  if (store.small?.writable) {
    const small = store.small.sweep(kept, cutoff);
    result.removedObjects += small.removed;
    result.removedBytes += small.bytes;
  }
  return result;
}

/** Removes least recently used evictable object files down to `limitBytes` (see `Cas.evict`). */
export async function evict(
  store: LocalStore,
  limitBytes: number,
  evictable: (hash: string) => boolean,
): Promise<SweepResult> {
  store.forgetRecentObjects(); // what it removes is never read from memory afterwards
  const files: StoredFile[] = [];
  let total = 0;
  for await (const file of walkObjects(store.root)) {
    files.push(file);
    total += file.info.size;
  }
  const result: SweepResult = { removedObjects: 0, removedBytes: 0 };
  const lastUsed = (info: Deno.FileInfo) => info.mtime?.getTime() ?? 0;
  files.sort((a, b) => lastUsed(a.info) - lastUsed(b.info));
  for (const { hash, path, info } of files) {
    if (total <= limitBytes) break;
    if (!evictable(hash)) continue;
    // RACE: a read between the walk and the removal finds the object gone and fetches
    // it again from the tier: slower, never wrong.
    await Deno.remove(path).catch(ignoreNotFound);
    total -= info.size;
    result.removedObjects++;
    result.removedBytes += info.size;
  }
  return result;
}

/**
 * Removes chunked contents and the chunks only they use (see `Cas.dropChunked`): each of
 * `hashes` not in `kept`'s answer loses its manifest, and each of its chunks goes unless
 * another manifest still lists it or `kept` names it (a whole content of its own).
 */
export async function dropChunked(
  store: LocalStore,
  hashes: readonly string[],
  kept: (hashes: string[]) => ReadonlySet<string>,
): Promise<SweepResult> {
  const result: SweepResult = { removedObjects: 0, removedBytes: 0 };
  // Contents stored whole (or not at all) are none of this: only those with a manifest.
  const chunked = [...new Set(hashes)].filter((hash) => existsSync(store.manifestPath(hash)));
  if (chunked.length === 0) return result;
  const keptContents = kept(chunked);
  const dropping = new Set(chunked.filter((hash) => !keptContents.has(hash)));
  if (dropping.size === 0) return result;
  store.forgetRecentObjects(); // what it removes is never read from memory afterwards
  const listed = new Set<string>(); // chunks the manifests that stay list
  const candidates = new Set<string>();
  const manifests: StoredFile[] = [];
  for await (const file of walkManifests(store.root)) {
    let manifest: ChunkManifest | null = null;
    try {
      manifest = await store.readManifest(file.hash);
    } catch (error) {
      if (!(error instanceof CorruptContentError)) throw error; // removed as unreadable
    }
    const chunks = manifest?.chunks.map((ref) => ref.hash) ?? [];
    if (dropping.has(file.hash)) {
      manifests.push(file);
      for (const chunk of chunks) candidates.add(chunk);
    } else for (const chunk of chunks) listed.add(chunk);
  }
  const unlisted = [...candidates].filter((chunk) => !listed.has(chunk));
  const keptChunks = kept(unlisted);
  const remove = async (path: string, size: number) => {
    try {
      await Deno.remove(path);
      result.removedObjects++;
      result.removedBytes += size;
    } catch (error) {
      ignoreNotFound(error);
    }
  };
  for (const chunk of unlisted) {
    if (keptChunks.has(chunk)) continue;
    const path = store.objectPath(chunk);
    const info = await Deno.lstat(path).catch(() => null);
    if (info?.isFile) await remove(path, info.size);
    // A content's last chunk may be small enough for the table of small objects.
    const row = store.small?.writable ? store.small.size(chunk) : null;
    if (row != null) {
      store.small!.remove(chunk);
      result.removedObjects++;
      result.removedBytes += row;
    }
  }
  // The manifest last: a read meanwhile finds its missing chunks through the store's tier.
  for (const { path, info } of manifests) await remove(path, info.size);
  return result;
}

/** Counts object and manifest files (and small-object rows) and their bytes. */
export async function stats(store: LocalStore): Promise<CasStats> {
  const stats: CasStats = { objects: 0, manifests: 0, bytes: 0 };
  for await (const { info } of walkObjects(store.root)) {
    stats.objects++;
    stats.bytes += info.size;
  }
  for await (const { info } of walkManifests(store.root)) {
    stats.manifests++;
    stats.bytes += info.size;
  }
  const small = store.small?.stats();
  if (small) {
    stats.objects += small.objects;
    stats.bytes += small.bytes;
  }
  return stats;
}
