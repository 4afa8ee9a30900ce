import { dirname, join, resolve } from "node:path";
import { forEachLimited } from "../concurrency/mod.ts";
import {
  Cas,
  type ContentTier,
  CorruptContentError,
  EMPTY_HASH,
  isContentHash,
} from "../cas/mod.ts";
import { openDatabase } from "../db/mod.ts";
import { errorMessage } from "../log/mod.ts";
import { normalizeWorkspacePath } from "../paths/mod.ts";
import { isFolderMode, S_IFLNK, S_IFMT, S_IFREG, Store } from "../store/mod.ts";
import type { Iteration } from "../store/mod.ts";
import { CHECKPOINT_DATABASE } from "./checkpoint.ts";
import { copyAtomic, PARALLEL_WRITES, sha256File } from "./_files.ts";
import { checkpointTree, surveyTarget, type TargetSurvey } from "./_target.ts";
import { lstatOrNull } from "../disk/mod.ts";
import { resolveLayout, WorkspaceDisk } from "../workspace/mod.ts";
import {
  CHECKPOINT_FORMAT,
  CHECKPOINT_VERSION,
  CheckpointError,
  type CheckpointInfo,
} from "./types.ts";

/** Options for {@linkcode rehydrate}. */
export interface RehydrateOptions {
  /** The checkpoint folder made by {@linkcode checkpoint}. */
  from: string;
  /** Where to install the database. */
  database: string;
  /** The CAS folder to complete from the checkpoint's objects. */
  casDir: string;
  /** The workspace folder to write the latest tree into (created if needed). */
  workspace: string;
  /**
   * Chronicle's data folder; when it lies inside the workspace, no path inside it is
   * written. @default {the database's folder}
   */
  dataDir?: string;
  /**
   * Replace an existing database, and write into a workspace that is not empty (replacing
   * files the checkpoint has other content for). Only safe when no Chronicle runs on it.
   * @default {false}
   */
  force?: boolean;
  /**
   * Where content neither in the CAS nor in the checkpoint folder is found (an object-store
   * bucket): it is then not an error, and is fetched when read, the latest tree's at once.
   *
   * @default {undefined}
   */
  contentTier?: ContentTier;
}

/** A path that could not be written, and why. */
export interface RehydrateProblem {
  /** The workspace path. */
  path: string;
  /** Why it was not written. */
  reason: string;
}

/** What {@linkcode rehydrate} did. */
export interface RehydrateResult {
  /** The checkpoint's description. */
  checkpoint: CheckpointInfo;
  /** Objects, chunks and manifests copied from the checkpoint into the CAS. */
  objectsCopied: number;
  /** Objects the CAS already held. */
  objectsPresent: number;
  /** Objects left to the content tier, fetched when first read. */
  objectsDeferred: number;
  /** Regular files written. */
  files: number;
  /** Symbolic links made. */
  symlinks: number;
  /** Bytes of the files written. */
  bytes: number;
  /** Checkpoint paths where other content was, now replaced (only with `force`). */
  replaced: string[];
  /** Paths that could not be written; the rest were. */
  problems: RehydrateProblem[];
}

/**
 * Brings a workspace back from a checkpoint: verifies the database copy against its
 * SHA-256, makes sure every object it references is in the CAS (copying them in from the
 * checkpoint, each verified against its hash), installs the database atomically, and
 * writes the latest tree into the workspace, every file from the CAS with its mode and
 * time. A workspace that is not empty (the data folder aside) is refused without `force`,
 * naming the files that would be replaced; files the checkpoint does not have are left
 * alone. The
 * scanner's stat cache is cleared, so the next run re-reads every file once.
 *
 * @param options The checkpoint, where to install it, and the workspace.
 * @returns What was copied and written, and any path that could not be.
 * @throws {CheckpointError} When the checkpoint is malformed or corrupt, content is
 * missing, or the database exists or the workspace is not empty without `force`; nothing
 * is installed then.
 *
 * @example Restoring elsewhere
 * ```ts ignore
 * const result = await rehydrate({
 *   from: "/backups/w-1",
 *   database: "/w2/.chronicle/chronicle.db",
 *   casDir: "/w2/.chronicle/cas",
 *   workspace: "/w2",
 * });
 * console.log(result.files, result.problems);
 * ```
 */
export async function rehydrate(options: RehydrateOptions): Promise<RehydrateResult> {
  const from = resolve(options.from);
  const database = resolve(options.database);
  const workspace = resolve(options.workspace);
  const info = await readInfo(from);
  const copy = join(from, info.database);
  const actual = await sha256File(copy).catch((error) => {
    throw new CheckpointError(`Cannot read "${copy}": ${errorMessage(error)}`);
  });
  if (actual !== info.databaseSha256) {
    throw new CheckpointError(
      `Database copy "${copy}" is damaged: its SHA-256 is ${actual}, checkpoint.json says ${info.databaseSha256}`,
    );
  }
  const hashes = await readObjectList(from, info);
  if ((await lstatOrNull(database)) !== null && !options.force) {
    throw new CheckpointError(
      `Database "${database}" already exists: rehydrate into a new place, or pass --force when no Chronicle runs on it`,
    );
  }

  const { dataDirInside: dataDir } = resolveLayout({
    root: workspace,
    dataDir: options.dataDir ?? dirname(database),
  });

  // The copy's database holds the small objects (see CasOptions.db): read, never written.
  const copyDb = openDatabase(copy, { readOnly: true });
  let completed: { copied: number; present: number; deferred: number };
  let survey: TargetSurvey;
  try {
    survey = await surveyTarget(checkpointTree(copyDb), workspace, dataDir);
    completed = await completeCas(
      await Cas.open(options.casDir, { db: copyDb }),
      from,
      hashes,
      options.contentTier !== undefined,
    );
    // After the content checks (a damaged checkpoint says so first), before anything is
    // installed: the CAS only gained verified objects, harmless to any workspace.
    if (survey.entries.length > 0 && !options.force) throw notEmpty(workspace, survey);
  } finally {
    copyDb.close();
  }
  const { copied, present, deferred } = completed;
  await installDatabase(copy, database);

  const store = Store.open(database);
  try {
    const cas = await Cas.open(options.casDir, {
      db: store.db,
      ...(options.contentTier ? { tier: options.contentTier } : {}),
    });
    store.saveFileStates(
      [...store.fileStates().keys()].map((path) => ({ path, forget: true as const })),
    );
    const written = await materialize(store.list(), cas, workspace, dataDir);
    return {
      checkpoint: info,
      objectsCopied: copied,
      objectsPresent: present,
      objectsDeferred: deferred,
      replaced: survey.replaced,
      ...written,
    };
  } finally {
    store.close();
  }
}

/** The refusal of a non-empty target: what is there, and what would be replaced. */
function notEmpty(workspace: string, survey: TargetSurvey): CheckpointError {
  const some = (paths: string[]) =>
    paths.slice(0, 5).map((path) => `"${path}"`).join(", ") + (paths.length > 5 ? ", …" : "");
  const what = survey.replaced.length > 0
    ? `rehydrate would replace ${survey.replaced.length} file(s) there: ${some(survey.replaced)}`
    : `it holds ${
      some(survey.entries)
    } (none would be replaced; files the checkpoint lacks are left alone)`;
  return new CheckpointError(
    `Workspace "${workspace}" is not empty: ${what}. Rehydrate into an empty folder, or pass --force to write over it`,
  );
}

async function readInfo(from: string): Promise<CheckpointInfo> {
  const path = join(from, "checkpoint.json");
  let value: unknown;
  try {
    value = JSON.parse(await Deno.readTextFile(path));
  } catch (error) {
    const reason = error instanceof Deno.errors.NotFound ? "no such file" : errorMessage(error);
    throw new CheckpointError(`Cannot read checkpoint "${path}": ${reason}`);
  }
  const info = value as Partial<CheckpointInfo>;
  if (typeof info !== "object" || info === null || info.format !== CHECKPOINT_FORMAT) {
    throw new CheckpointError(`"${path}" is not a Chronicle checkpoint`);
  }
  if (info.version !== CHECKPOINT_VERSION) {
    throw new CheckpointError(
      `Checkpoint "${from}" has version ${info.version}; this Chronicle reads version ${CHECKPOINT_VERSION}`,
    );
  }
  if (
    info.database !== CHECKPOINT_DATABASE || typeof info.databaseSha256 !== "string" ||
    typeof info.objects !== "number" || typeof info.sequence !== "number"
  ) {
    throw new CheckpointError(`"${path}" is missing fields or has wrong types`);
  }
  return info as CheckpointInfo;
}

async function readObjectList(from: string, info: CheckpointInfo): Promise<string[]> {
  const path = join(from, "objects.txt");
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    throw new CheckpointError(`Cannot read "${path}": ${errorMessage(error)}`);
  }
  const lines = text.split("\n").filter((line) => line !== "");
  lines.forEach((line, index) => {
    if (!isContentHash(line)) {
      throw new CheckpointError(`Line ${index + 1} of "${path}" is not a content hash: "${line}"`);
    }
  });
  if (lines.length !== info.objects) {
    throw new CheckpointError(
      `"${path}" lists ${lines.length} objects, checkpoint.json says ${info.objects}`,
    );
  }
  return lines;
}

/**
 * Copies in every listed object the CAS lacks: whole objects and chunks first, then
 * manifests. With `deferMissing`, what neither holds is left to the content tier.
 */
async function completeCas(
  cas: Cas,
  from: string,
  hashes: string[],
  deferMissing: boolean,
): Promise<{ copied: number; present: number; deferred: number }> {
  let copied = 0;
  let present = 0;
  const manifests: string[] = [];
  await forEachLimited(hashes, PARALLEL_WRITES, async (hash) => {
    if (await cas.has(hash)) {
      present++;
      return;
    }
    if (await importChecked(cas, from, hash)) {
      copied++;
    } else if (hash === EMPTY_HASH) {
      await cas.putVerified(hash, new Uint8Array());
    } else manifests.push(hash);
  });
  manifests.sort();
  const missing: string[] = [];
  for (const hash of manifests) {
    try {
      if (await cas.importManifest(from, hash)) copied++;
      else missing.push(hash);
    } catch (error) {
      throw new CheckpointError(
        `Manifest of "${hash}" in the checkpoint is unusable: ${errorMessage(error)}`,
      );
    }
  }
  if (missing.length > 0 && deferMissing) return { copied, present, deferred: missing.length };
  if (missing.length > 0) {
    throw new CheckpointError(
      `${missing.length} object(s) are neither in the CAS nor in the checkpoint, e.g. "${
        missing[0]
      }"`,
    );
  }
  return { copied, present, deferred: 0 };
}

/** Stores an object from the checkpoint folder, verified; `false` when the folder lacks it. */
async function importChecked(cas: Cas, from: string, hash: string): Promise<boolean> {
  try {
    return await cas.importObject(from, hash);
  } catch (error) {
    if (error instanceof CorruptContentError) {
      throw new CheckpointError(`Object "${hash}" in the checkpoint is damaged: ${error.message}`);
    }
    throw error;
  }
}

async function installDatabase(copy: string, database: string): Promise<void> {
  await Deno.mkdir(dirname(database), { recursive: true });
  // A stale WAL beside the target would be replayed into the new file: remove it first.
  for (const suffix of ["-wal", "-shm", "-journal"]) {
    await Deno.remove(database + suffix).catch((error) => {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    });
  }
  await copyAtomic(copy, database);
}

async function materialize(
  tree: Iteration[],
  cas: Cas,
  workspace: string,
  dataDir: string | undefined,
): Promise<
  Omit<
    RehydrateResult,
    "checkpoint" | "objectsCopied" | "objectsPresent" | "objectsDeferred" | "replaced"
  >
> {
  await Deno.mkdir(workspace, { recursive: true });
  const disk = new WorkspaceDisk(workspace);
  const result = { files: 0, symlinks: 0, bytes: 0, problems: [] as RehydrateProblem[] };
  const isLink = (entry: Iteration) => (entry.mode & S_IFMT) === S_IFLNK;
  const write = async (entry: Iteration): Promise<void> => {
    try {
      const path = normalizeWorkspacePath(entry.path, { dataDir });
      const type = entry.mode & S_IFMT;
      if (type === S_IFLNK) {
        const target = new TextDecoder().decode(await cas.readBytes(entry.hash));
        await replaceWithSymlink(disk, path, target);
        result.symlinks++;
      } else if (type === S_IFREG || type === 0) {
        const dest = await disk.prepareFile(path);
        if ((await lstatOrNull(dest))?.isDirectory) throw new Error("a folder is in the way");
        await cas.writeTo(entry.hash, dest, { mode: entry.mode & 0o7777 });
        const seconds = entry.timestamp / 1000;
        await Deno.utime(dest, seconds, seconds);
        result.files++;
        result.bytes += entry.size;
      } else {
        throw new Error(`mode ${entry.mode.toString(8)} is neither a file nor a link`);
      }
    } catch (error) {
      result.problems.push({ path: entry.path, reason: errorMessage(error) });
    }
  };
  // Folders (PROTOCOL.md §8) made first; their modes set last, deepest first, so a
  // read-only folder never refuses what goes inside it.
  const folders = tree.filter((entry) => isFolderMode(entry.mode));
  const made: Array<{ entry: Iteration; path: string }> = [];
  for (const entry of folders) {
    try {
      const path = normalizeWorkspacePath(entry.path, { dataDir });
      await disk.mkdir(path); // through the executor: never through a link
      made.push({ entry, path });
    } catch (error) {
      result.problems.push({ path: entry.path, reason: errorMessage(error) });
    }
  }
  const contents = tree.filter((entry) => !isFolderMode(entry.mode));
  // Regular files first, a few at a time; links last, so a link never redirects a write.
  await forEachLimited(contents.filter((entry) => !isLink(entry)), PARALLEL_WRITES, write);
  for (const entry of contents.filter(isLink)) await write(entry);
  for (const { entry, path } of made.reverse()) {
    await disk.chmod(path, entry.mode).catch((error) =>
      result.problems.push({ path: entry.path, reason: errorMessage(error) })
    );
  }
  result.problems.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return result;
}

/** Puts a link at `path` through the workspace's executor (its link rules), unless it is there. */
async function replaceWithSymlink(
  disk: WorkspaceDisk,
  path: string,
  target: string,
): Promise<void> {
  const dest = disk.absolute(path);
  const existing = await lstatOrNull(dest);
  if (existing?.isSymlink && (await Deno.readLink(dest)) === target) return;
  if (existing?.isDirectory) throw new Error("a folder is in the way");
  await disk.writeLink(path, target); // atomic: replaces a file or link there
}
