import { hashFile } from "../cas/mod.ts";
import { dirname } from "node:path";
import { syncDir } from "../disk/mod.ts";

/** Lowercase hex SHA-256 of a file, read in pieces (see `hashFile` in lib/cas). */
export async function sha256File(path: string): Promise<string> {
  return (await hashFile(path)).hash;
}

/** Fsyncs every folder of a tree, deepest first. */
export async function syncTree(root: string): Promise<void> {
  const dirs: string[] = [];
  const visit = async (dir: string): Promise<void> => {
    for await (const entry of Deno.readDir(dir)) {
      if (entry.isDirectory) await visit(`${dir}/${entry.name}`);
    }
    dirs.push(dir);
  };
  await visit(root);
  for (const dir of dirs) await syncDir(dir);
}

/**
 * Copies a file to `dest` atomically: a temp file beside it, fsync, rename, fsync the
 * folder; the temp file is removed on error.
 */
export async function copyAtomic(source: string, dest: string): Promise<void> {
  const temp = `${dest}.${crypto.randomUUID()}.tmp`;
  try {
    await Deno.copyFile(source, temp);
    {
      using file = await Deno.open(temp, { read: true, write: true });
      await file.sync();
    }
    await Deno.rename(temp, dest);
    await syncDir(dirname(dest));
  } catch (error) {
    await Deno.remove(temp).catch(() => {});
    throw error;
  }
}

/** Files written at once: each is fsynced, and a few at a time let the file system batch them. */
export const PARALLEL_WRITES = 8;
