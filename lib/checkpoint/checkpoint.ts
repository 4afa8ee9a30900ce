import { backup, DatabaseSync } from "node:sqlite";
import { basename, dirname, join, resolve } from "node:path";
import { forEachLimited } from "../concurrency/mod.ts";
import {
  Cas,
  casManifestPath,
  type ChunkManifest,
  CorruptContentError,
  EMPTY_HASH,
} from "../cas/mod.ts";
import { columns, openDatabase } from "../db/mod.ts";
import { errorMessage } from "../log/mod.ts";
import { referencedHashes } from "./content_references.ts";
import { PARALLEL_WRITES, sha256File, syncTree } from "./_files.ts";
import { lstatOrNull, syncDir, writeNewSynced } from "../disk/mod.ts";
import { ORIGINS } from "../store/mod.ts";
import {
  CHECKPOINT_FORMAT,
  CHECKPOINT_VERSION,
  CheckpointError,
  type CheckpointInfo,
} from "./types.ts";

/** The database copy's name inside a checkpoint folder. */
export const CHECKPOINT_DATABASE = "chronicle.db";

/** Options for {@linkcode checkpoint}. */
export interface CheckpointOptions {
  /** The live database (it may be in use by a running Chronicle). */
  database: string;
  /** The CAS folder holding the content the database references. */
  casDir: string;
  /** The checkpoint folder to create; it must not exist, or be empty. */
  output: string;
  /** Also copy every needed object, chunk and manifest into the folder. @default {false} */
  withObjects?: boolean;
}

/** What {@linkcode checkpoint} wrote. */
export interface CheckpointResult extends CheckpointInfo {
  /** The checkpoint folder (absolute). */
  output: string;
  /** Object and manifest files copied (0 without objects). */
  copiedFiles: number;
  /** Bytes of those files. */
  copiedBytes: number;
}

const encoder = new TextEncoder();

/**
 * Writes a consistent copy of a workspace's database with SQLite's online backup (safe
 * while Chronicle writes), `objects.txt` listing every content and chunk hash the copy
 * references, and `checkpoint.json` describing it; with `withObjects`, the objects too.
 * The folder is built beside `output` and renamed into place once complete and synced,
 * so `output` either holds a whole checkpoint or does not exist.
 *
 * @param options The database, CAS and output folder.
 * @returns What was written.
 * @throws {CheckpointError} When the database is missing or not Chronicle's, the output is
 * not empty, or content the copy references is missing from the CAS (the checkpoint would
 * lose it).
 *
 * @example Checkpointing a workspace's store
 * ```ts ignore
 * const result = await checkpoint({
 *   database: "/w/.chronicle/chronicle.db",
 *   casDir: "/w/.chronicle/cas",
 *   output: "/backups/w-1",
 * });
 * console.log(result.sequence, result.objects);
 * ```
 */
export async function checkpoint(options: CheckpointOptions): Promise<CheckpointResult> {
  const database = resolve(options.database);
  const output = resolve(options.output);
  const withObjects = options.withObjects ?? false;
  if (!(await lstatOrNull(database))?.isFile) {
    throw new CheckpointError(`No database at "${database}"`);
  }
  await prepareOutput(output);
  const staging = join(dirname(output), `.${basename(output)}.${crypto.randomUUID()}.partial`);
  await Deno.mkdir(staging);
  try {
    const copy = join(staging, CHECKPOINT_DATABASE);
    await backupDatabase(database, copy);
    const facts = readCopy(copy);
    const { objects, copiedFiles, copiedBytes } = await gatherObjects(
      options.casDir,
      copy,
      facts.hashes,
      withObjects ? staging : null,
    );
    const listed = [...new Set([...facts.hashes, ...objects])].sort();
    await writeNewSynced(
      join(staging, "objects.txt"),
      encoder.encode(listed.map((h) => `${h}\n`).join("")),
    );
    const info: CheckpointInfo = {
      format: CHECKPOINT_FORMAT,
      version: CHECKPOINT_VERSION,
      created: new Date().toISOString(),
      sequence: facts.sequence,
      paths: facts.paths,
      iterations: facts.iterations,
      objects: listed.length,
      database: CHECKPOINT_DATABASE,
      databaseSha256: await sha256File(copy),
      databaseBytes: (await Deno.stat(copy)).size,
      withObjects,
    };
    await writeNewSynced(
      join(staging, "checkpoint.json"),
      encoder.encode(JSON.stringify(info, null, 2) + "\n"),
    );
    await syncTree(staging);
    await Deno.remove(output).catch((error) => {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    });
    await Deno.rename(staging, output);
    await syncDir(dirname(output));
    return { ...info, output, copiedFiles, copiedBytes };
  } catch (error) {
    await Deno.remove(staging, { recursive: true }).catch(() => {});
    throw error;
  }
}

/**
 * Finds every object the copy's hashes need and, given a folder, copies each into it.
 * The CAS is read with the copy's database, which holds the small objects (see
 * `CasOptions.db`) as they were when the copy was taken.
 */
async function gatherObjects(
  casDir: string,
  copy: string,
  hashes: string[],
  into: string | null,
): Promise<{ objects: string[]; copiedFiles: number; copiedBytes: number }> {
  const copyDb = openDatabase(copy, { readOnly: true });
  try {
    const cas = await Cas.open(casDir, { db: copyDb });
    const { objects, manifests } = await neededObjects(
      cas,
      hashes,
      (hash) => whyMissing(copyDb, hash),
    );
    let copiedFiles = 0;
    let copiedBytes = 0;
    if (into === null) return { objects, copiedFiles, copiedBytes };
    // Each file is fsynced; a few at a time lets the file system batch the syncs.
    await forEachLimited(objects, PARALLEL_WRITES, async (hash) => {
      if (hash === EMPTY_HASH && !(await cas.has(hash))) return;
      const written = await cas.exportObject(hash, into);
      copiedBytes += written; // not `+= await`: that would read the total before waiting
      copiedFiles++;
    });
    // Written from the manifests read above, not read again (as `Cas.exportManifest` would).
    await forEachLimited([...manifests], PARALLEL_WRITES, async ([hash, manifest]) => {
      const json = new TextEncoder().encode(JSON.stringify(manifest));
      const path = join(into, casManifestPath(hash));
      await Deno.mkdir(dirname(path), { recursive: true });
      await writeNewSynced(path, json);
      copiedBytes += json.length;
      copiedFiles++;
    });
    return { objects, copiedFiles, copiedBytes };
  } finally {
    copyDb.close();
  }
}

async function prepareOutput(output: string): Promise<void> {
  const info = await lstatOrNull(output);
  if (info === null) {
    await Deno.mkdir(dirname(output), { recursive: true });
    return;
  }
  if (!info.isDirectory) {
    throw new CheckpointError(`Checkpoint output "${output}" exists and is not a folder`);
  }
  for await (const _ of Deno.readDir(output)) {
    throw new CheckpointError(`Checkpoint output "${output}" is not empty`);
  }
}

async function backupDatabase(database: string, copy: string): Promise<void> {
  let source: DatabaseSync;
  try {
    source = openDatabase(database, { readOnly: true });
  } catch (error) {
    throw new CheckpointError(errorMessage(error), { cause: error });
  }
  try {
    // rate -1 copies every page in one step under one read transaction: a consistent
    // snapshot that concurrent writers can neither tear nor force to restart.
    await backup(source, copy, { rate: -1 });
  } catch (error) {
    throw new CheckpointError(`Cannot copy database "${database}": ${errorMessage(error)}`, {
      cause: error,
    });
  } finally {
    source.close();
  }
  // One self-contained file: leave WAL mode so no -wal or -shm belongs to the copy.
  const db = new DatabaseSync(copy);
  try {
    db.exec("PRAGMA journal_mode = DELETE");
  } finally {
    db.close();
  }
}

interface CopyFacts {
  hashes: string[];
  sequence: number;
  paths: number;
  iterations: number;
}

function readCopy(copy: string): CopyFacts {
  const db = new DatabaseSync(copy, { readOnly: true });
  try {
    const check = columns(db.prepare("PRAGMA quick_check").get()!).text("quick_check");
    if (check !== "ok") {
      throw new CheckpointError(`The database copy failed its check: ${check}`);
    }
    const hasIterations = db.prepare(
      "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'iterations'",
    ).get();
    if (!hasIterations) {
      throw new CheckpointError("The database is not a Chronicle store: it has no iterations");
    }
    const totals = columns(
      db.prepare(
        "SELECT COALESCE(MAX(sequence), 0) AS sequence, COUNT(*) AS iterations FROM iterations",
      ).get()!,
    );
    const live = columns(
      db.prepare(
        "SELECT COUNT(*) AS n FROM (SELECT path, MAX(sequence) AS s FROM iterations GROUP BY path) latest JOIN iterations i ON i.sequence = latest.s WHERE i.deleted = 0",
      ).get()!,
    );
    return {
      hashes: referencedHashes(db),
      sequence: totals.integer("sequence"),
      iterations: totals.integer("iterations"),
      paths: live.integer("n"),
    };
  } finally {
    db.close();
  }
}

/**
 * Resolves each content hash to the files that hold it: a whole object, or a manifest (as
 * read, by hash) and its chunks; fails listing what the CAS lacks.
 */
async function neededObjects(
  cas: Cas,
  hashes: string[],
  whyMissing: (hash: string) => string,
): Promise<{ objects: string[]; manifests: Map<string, ChunkManifest> }> {
  const objects = new Set<string>();
  const manifests = new Map<string, ChunkManifest>();
  const missing: string[] = [];
  for (const hash of hashes) {
    const stored = await storedForm(cas, hash);
    if (stored === null) {
      if (hash !== EMPTY_HASH) missing.push(hash); // empty content is always to be had
    } else if (stored === "whole") {
      objects.add(hash);
    } else {
      manifests.set(hash, stored);
      for (const chunk of stored.chunks) objects.add(chunk.hash);
    }
  }
  if (missing.length > 0) {
    throw new CheckpointError(
      `${missing.length} content(s) the database references are missing from the CAS, e.g. "${
        missing[0]
      }"${whyMissing(missing[0]!)}`,
    );
  }
  const sorted = [...manifests].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0);
  return { objects: [...objects].sort(), manifests: new Map(sorted) };
}

/**
 * Why content a database references can be missing, when that is known: a sandbox
 * replica records its master's versions (origin `master`) and keeps no copy of their
 * content (PROTOCOL.md §2).
 */
function whyMissing(db: DatabaseSync, hash: string): string {
  const fromMaster = db.prepare("SELECT 1 FROM iterations WHERE hash = ? AND origin = ? LIMIT 1")
    .get(hash, ORIGINS.master);
  return fromMaster
    ? ": it is a master's version, which a sandbox replica keeps no copy of (its master holds " +
      "every version): checkpoint the master"
    : "";
}

/**
 * How the CAS holds a content, its manifest read once: the manifest when it is chunked,
 * `"whole"` when it is one object, `null` when the CAS lacks it.
 *
 * @throws {CorruptContentError} When the content is stored whole beside a damaged manifest.
 */
async function storedForm(cas: Cas, hash: string): Promise<ChunkManifest | "whole" | null> {
  let manifest: ChunkManifest | null;
  try {
    manifest = await cas.manifest(hash);
  } catch (error) {
    // Reading removed the damaged manifest: the content is missing unless stored whole.
    if (!(error instanceof CorruptContentError) || (await cas.hasObject(hash))) throw error;
    return null;
  }
  // A manifest with missing chunks does not count: the content is then whole, or missing.
  if (manifest !== null && (await cas.missingChunks(manifest)).length === 0) return manifest;
  return (await cas.hasObject(hash)) ? "whole" : null;
}
