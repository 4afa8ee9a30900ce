import { isMissing } from "../disk/mod.ts";
import type { PathFilter } from "../filter/mod.ts";
import { normalizeWorkspacePath, PathError } from "../paths/mod.ts";
import { type Observation, observePath } from "./file_observation.ts";
import type { SeenFile } from "./plan_capture.ts";

/**
 * Entries looked at between two yields to the event loop. The walk's calls are
 * synchronous (see `observePath`); yielding now and then keeps timers and sockets served
 * while a large tree is walked.
 */
const ENTRIES_PER_YIELD = 500;

/**
 * Lists every file, link and folder under `start` (a normalized relative folder, `""` for
 * the root; `start` itself is not listed), skipping filtered paths and never descending
 * through links.
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
  let sinceYield = 0;
  while (folders.length > 0) {
    const folder = folders.pop()!;
    const names: string[] = [];
    try {
      for (const entry of Deno.readDirSync(folder === "" ? root : `${root}/${folder}`)) {
        names.push(entry.name);
      }
    } catch (error) {
      if (isMissing(error)) continue;
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
    for (const path of paths) {
      collect(observePath(root, path), filter, files, folders);
      if (++sinceYield >= ENTRIES_PER_YIELD) {
        sinceYield = 0;
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
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
    if (!filter.ignores(observation.path, true)) {
      folders.push(observation.path);
      files.push(observation);
    }
  } else if (observation.kind === "file" || observation.kind === "symlink") {
    if (!filter.ignores(observation.path, false)) files.push(observation);
  }
}
