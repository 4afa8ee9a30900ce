/**
 * Removing benchmark trees at the end of the process, not in the middle of the run.
 *
 * Deleting tens of thousands of files right before a measurement slows whatever creates
 * files next: ext4 without a journal (as on the machine these benchmarks were recorded on)
 * skips recently freed inodes when it allocates, for up to five minutes, looking at each one
 * it skips (a `perf` profile of file creation then shows most of its time in the kernel's
 * `recently_deleted`, and creating a file takes 5 to 15 times as long). So a benchmark
 * hands its trees to {@linkcode discard}, which only renames them aside; they are deleted
 * when the process exits.
 *
 * @module
 */
import { join } from "node:path";

let trash: string | null = null;

/** Moves `path` out of the way (same file system), to be deleted when the process exits. */
export async function discard(path: string): Promise<void> {
  if (trash === null) {
    trash = await Deno.makeTempDir({ prefix: "chronicle-bench-trash-" });
    const folder = trash;
    globalThis.addEventListener("unload", () => Deno.removeSync(folder, { recursive: true }));
  }
  await Deno.rename(path, join(trash, crypto.randomUUID())).catch(async (error) => {
    if (error instanceof Deno.errors.NotFound) return;
    await Deno.remove(path, { recursive: true }); // another file system: delete now
  });
}
