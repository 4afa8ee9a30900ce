/**
 * Finding the benchmark files of `bench/`.
 *
 * @module
 */

/** How a benchmark file is named: `<name>_bench.ts`. */
const BENCH_FILE = /^[a-z0-9_]+_bench\.ts$/;

/**
 * Tells whether a file name is a benchmark's.
 *
 * @param name A file name, without folder.
 * @returns `true` for `<name>_bench.ts` (lowercase, digits, `_`).
 *
 * @example
 * ```ts
 * import { isBenchFile } from "./bench_files.ts";
 * if (!isBenchFile("store_bench.ts") || isBenchFile("run.ts")) throw new Error("wrong match");
 * ```
 */
export function isBenchFile(name: string): boolean {
  return BENCH_FILE.test(name);
}

/**
 * Lists the benchmark files of a folder (not its subfolders), sorted by name.
 *
 * @param dir The folder, usually `bench/`.
 * @returns File names such as `cas_bench.ts`.
 * @throws {Deno.errors.NotFound} When `dir` does not exist.
 */
export async function discoverBenches(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isFile && isBenchFile(entry.name)) names.push(entry.name);
  }
  return names.sort();
}
