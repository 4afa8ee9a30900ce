import { isFolderMode, type Iteration } from "../store/mod.ts";
import { iterationJson } from "./inputs.ts";

/** One `list_files` entry: a file, or a folder standing for the files deeper than `depth`. */
export type ListingEntry =
  | {
    path: string;
    type: "file";
    iteration: number;
    sequence: number;
    time: string;
    size: number;
    origin: string;
  }
  | { path: string; type: "folder"; files: number };

/**
 * Files up to `depth` levels below `dir`, each deeper file counted in its folder at that
 * depth (listed where its first file falls, in the input's order). A recorded folder
 * (PROTOCOL.md §8) is shown only when empty (as a folder of no files) and within `depth`:
 * one that holds files is already shown by them. Pure.
 *
 * @param live The live files under `dir`, as the store lists them.
 * @param dir The folder listed (`""` for the root).
 * @param depth Levels to show; `undefined` for every file.
 * @returns The entries, files and folders.
 */
export function summarizeListing(
  live: readonly Iteration[],
  dir: string,
  depth: number | undefined,
): ListingEntry[] {
  const base = dir === "" ? 0 : dir.split("/").length;
  const folders = new Map<string, { path: string; type: "folder"; files: number }>();
  const entries: ListingEntry[] = [];
  const holdingFiles = new Set<string>();
  for (const { path, mode } of live) {
    if (isFolderMode(mode)) continue;
    for (let slash = path.indexOf("/"); slash > 0; slash = path.indexOf("/", slash + 1)) {
      holdingFiles.add(path.slice(0, slash));
    }
  }
  for (const iteration of live) {
    const segments = iteration.path.split("/");
    if (isFolderMode(iteration.mode)) {
      const within = depth === undefined || segments.length - base <= depth;
      if (iteration.path !== dir && within && !holdingFiles.has(iteration.path)) {
        entries.push({ path: iteration.path, type: "folder", files: 0 });
      }
      continue;
    }
    if (depth !== undefined && segments.length - base > depth) {
      const folder = segments.slice(0, base + depth).join("/");
      let entry = folders.get(folder);
      if (!entry) {
        entry = { path: folder, type: "folder", files: 0 };
        folders.set(folder, entry);
        entries.push(entry);
      }
      entry.files++;
      continue;
    }
    const json = iterationJson(iteration);
    entries.push({
      path: iteration.path,
      type: "file",
      iteration: iteration.iteration,
      sequence: iteration.sequence,
      time: json.time as string,
      size: iteration.size,
      origin: iteration.origin,
    });
  }
  return entries;
}

/**
 * Paging fields for a page of `shown` entries from `offset` out of `total`: `truncated` and
 * `next_offset` while more remain, nothing on the last page. Pure.
 */
export function nextPage(offset: number, shown: number, total: number): Record<string, unknown> {
  return offset + shown < total ? { truncated: true, next_offset: offset + shown } : {};
}
