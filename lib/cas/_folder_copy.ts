/**
 * Copying objects and manifests between the store and another folder laid out like one
 * (`layout.ts`), such as a checkpoint made with objects: out verified, in verified.
 * Internal to `lib/cas`.
 *
 * @module
 */
import { dirname, join } from "node:path";
import type { ChunkManifest } from "./types.ts";
import { assertBytesHash } from "./content_hash.ts";
import { ContentNotFoundError, CorruptContentError } from "./errors.ts";
import { casManifestPath, casObjectPath } from "./layout.ts";
import type { LocalStore } from "./_local_store.ts";
import { contentPieces, recordManifest } from "./_verified_reads.ts";
import { concat } from "./_files.ts";
import { writeNewSynced } from "../disk/mod.ts";

/** Writes one object (whole content or chunk), verified, into `folder` (see `Cas.exportObject`). */
export async function exportObject(
  store: LocalStore,
  hash: string,
  folder: string,
): Promise<number> {
  const pieces: Uint8Array[] = [];
  for await (const piece of contentPieces(store, hash)) pieces.push(piece);
  return await writeNew(join(folder, casObjectPath(hash)), concat(pieces));
}

/** Writes a stored manifest into `folder` (see `Cas.exportManifest`). */
export async function exportManifest(
  store: LocalStore,
  hash: string,
  folder: string,
): Promise<number> {
  const manifest = await store.readManifest(hash);
  if (manifest === null) throw new ContentNotFoundError(hash, "Manifest");
  const json = new TextEncoder().encode(JSON.stringify(manifest));
  return await writeNew(join(folder, casManifestPath(hash)), json);
}

/** Stores one object found in `folder`, verified; `false` when it has none (see `Cas.importObject`). */
export async function importObject(
  store: LocalStore,
  folder: string,
  hash: string,
): Promise<boolean> {
  const bytes = await readOptional(join(folder, casObjectPath(hash)));
  if (bytes === null) return false;
  assertBytesHash(hash, bytes);
  await store.writeObject(hash, bytes);
  return true;
}

/** Records a manifest found in `folder`, verified; `false` when it has none (see `Cas.importManifest`). */
export async function importManifest(
  store: LocalStore,
  folder: string,
  hash: string,
): Promise<boolean> {
  const bytes = await readOptional(join(folder, casManifestPath(hash)));
  if (bytes === null) return false;
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytes));
  } catch (error) {
    throw new CorruptContentError(hash, null, `manifest is not JSON (${(error as Error).message})`);
  }
  // recordManifest checks its shape before anything else.
  await recordManifest(store, hash, value as ChunkManifest);
  return true;
}

/** Writes a new file (never over one) and fsyncs it; the folders are the caller's to flush. */
async function writeNew(path: string, bytes: Uint8Array): Promise<number> {
  await Deno.mkdir(dirname(path), { recursive: true });
  await writeNewSynced(path, bytes);
  return bytes.length;
}

async function readOptional(path: string): Promise<Uint8Array | null> {
  try {
    return await Deno.readFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}
