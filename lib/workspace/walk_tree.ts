import type { PathFilter } from "../filter/mod.ts";
import { normalizeWorkspacePath, PathError } from "../paths/mod.ts";
import { type Observation, observePath } from "./file_observation.ts";
import type { SeenFile } from "./plan_capture.ts";

/** How many `lstat` calls run at once while walking. */
const STAT_CONCURRENCY = 64;

/**
 * Lists every file and link under `start` (a normalized relative folder, `""` for the
 * root), skipping filtered paths and never descending through links.
 *
 * @returns The files found, and paths that could not be recorded (with the reason).
 */
export async function walkTree(
  root: string,
  start: string,
  filter: PathFilter,
): Promise<{ files: SeenFile[]; skipped: Array<{ path: string; reason: string }> }> {
  const files: SeenFile[] = [];
  const skipped: Array<{ path: string; reason: string }> = [];
  const folders = [start];
  while (folders.length > 0) {
    const folder = folders.pop()!;
    const names: string[] = [];
    try {
      for await (const entry of Deno.readDir(folder === "" ? root : `${root}/${folder}`)) {
        names.push(entry.name);
      }
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) continue;
      throw error;
    }
    const paths = names.flatMap((name) => {
      const path = folder === "" ? name : `${folder}/${name}`;
      try {
        return [normalizeWorkspacePath(path)];
      } catch (error) {
        if (error instanceof PathError) skipped.push({ path, reason: error.message });
        return [];
      }
    });
    for (let index = 0; index < paths.length; index += STAT_CONCURRENCY) {
      const batch = paths.slice(index, index + STAT_CONCURRENCY);
      const seen = await Promise.all(batch.map((path) => observePath(root, path)));
      for (const observation of seen) collect(observation, filter, files, folders);
    }
  }
  return { files, skipped };
}

function collect(
  observation: Observation,
  filter: PathFilter,
  files: SeenFile[],
  folders: string[],
): void {
  if (observation.kind === "dir") {
    if (!filter.ignores(observation.path, true)) folders.push(observation.path);
  } else if (observation.kind === "file" || observation.kind === "symlink") {
    if (!filter.ignores(observation.path, false)) files.push(observation);
  }
}
