/**
 * Snapshot benchmark: the overhead of `snapshot()` before a `write_file` of a 4 KiB and a
 * 10 MiB file, compared in the same run with the seed design's backup, a plain file copy
 * (`Deno.copyFile`) of the same file; and the storage used by 100 snapshots of small
 * edits to the same 10 MiB file, against 100 full copies.
 * `CHRONICLE_BENCH_QUICK=1` (or `--quick`) runs tiny sizes.
 *
 * Run: `deno run -A bench/snapshot_bench.ts`
 *
 * @module
 */
import { join } from "node:path";
import { Cas } from "../lib/cas/mod.ts";
import { Snapshots } from "../lib/snapshot/mod.ts";
import { Store } from "../lib/store/mod.ts";
import { pseudoRandomBytes } from "../tests/_helpers/random_bytes.ts";
import { discard, KiB, MiB, quickMode } from "./_lib/mod.ts";

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** A workspace in a temp folder with its store, CAS and snapshot engine. */
async function workspace(maxSnapshots: number) {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "chronicle-snapbench-" }));
  await Deno.mkdir(join(root, ".chronicle"));
  const store = Store.open(join(root, ".chronicle", "chronicle.db"));
  const cas = await Cas.open(join(root, ".chronicle", "cas"), { db: store.db }); // as a workspace does
  const snapshots = Snapshots.open({ root, store, cas, config: { maxSnapshots } });
  return {
    root,
    cas,
    snapshots,
    async close() {
      store.close();
      await discard(root);
    },
  };
}

/**
 * Median milliseconds of a snapshot and of a plain copy of a file of `size` bytes, each
 * taken after an edit of the file (so every snapshot stores new content, as before a real
 * write).
 */
async function overhead(
  size: number,
  rounds: number,
): Promise<{ snapshot: number; unchanged: number; casPut: number; copy: number }> {
  const ws = await workspace(100);
  try {
    const file = join(ws.root, "file.bin");
    const backup = join(ws.root, ".chronicle", "copy.bin");
    const bytes = pseudoRandomBytes(size, 7);
    await Deno.writeFile(file, bytes);
    const action = { type: "write_file", payload: { path: "file.bin" } };
    await ws.snapshots.snapshot(action); // warm-up: statements prepared, folders made
    await Deno.copyFile(file, backup);
    const snapshotTimes: number[] = [];
    const unchangedTimes: number[] = [];
    const casTimes: number[] = [];
    const copyTimes: number[] = [];
    const edit = (round: number) => {
      // A small edit at a varying place, like an agent's write.
      const piece = pseudoRandomBytes(64, round + 11);
      bytes.set(piece, (round * 7919) % (size - piece.length));
      return Deno.writeFile(file, bytes);
    };
    for (let round = 0; round < rounds; round++) {
      await edit(2 * round);
      let start = performance.now();
      await ws.snapshots.snapshot(action);
      snapshotTimes.push(performance.now() - start);
      start = performance.now();
      await ws.snapshots.snapshot(action);
      unchangedTimes.push(performance.now() - start);
      start = performance.now();
      await Deno.copyFile(file, backup);
      copyTimes.push(performance.now() - start);
      await edit(2 * round + 1);
      start = performance.now();
      await ws.cas.putFile(file);
      casTimes.push(performance.now() - start);
    }
    return {
      snapshot: median(snapshotTimes),
      unchanged: median(unchangedTimes),
      casPut: median(casTimes),
      copy: median(copyTimes),
    };
  } finally {
    await ws.close();
  }
}

/** Bytes the CAS holds after `count` snapshots of small edits to one file of `size` bytes. */
async function storage(size: number, count: number): Promise<{ bytes: number; ms: number }> {
  const ws = await workspace(count);
  try {
    const file = join(ws.root, "big.bin");
    const bytes = pseudoRandomBytes(size, 3);
    const action = { type: "write_file", payload: { path: "big.bin" } };
    const start = performance.now();
    for (let i = 0; i < count; i++) {
      const edit = pseudoRandomBytes(100, i + 101);
      bytes.set(edit, (i * 104_729) % (size - edit.length));
      await Deno.writeFile(file, bytes);
      await ws.snapshots.snapshot(action);
    }
    const ms = performance.now() - start;
    if (!(await ws.snapshots.verify({ content: false })).ok) throw new Error("chain broken");
    return { bytes: (await ws.cas.stats()).bytes, ms };
  } finally {
    await ws.close();
  }
}

/**
 * Runs the benchmark.
 *
 * @param quick Tiny sizes, finishing in a few seconds.
 * @returns Printable result lines.
 */
export async function run(quick: boolean): Promise<string[]> {
  const lines: string[] = [];
  const describe = (label: string, o: Awaited<ReturnType<typeof overhead>>, digits: number) =>
    `snapshot overhead, ${label}: ${o.snapshot.toFixed(digits)} ms per action with new content ` +
    `(plain copy ${o.copy.toFixed(digits)} ms, ratio ${(o.snapshot / o.copy).toFixed(1)}x; ` +
    `of which CAS put alone ${o.casPut.toFixed(digits)} ms); ` +
    `${o.unchanged.toFixed(digits)} ms when the content is already stored`;
  lines.push(describe("4 KiB file", await overhead(4 * KiB, quick ? 30 : 300), 3));
  const largeSize = quick ? 5 * MiB : 10 * MiB;
  lines.push(describe(`${largeSize / MiB} MiB file`, await overhead(largeSize, quick ? 3 : 15), 1));
  const count = quick ? 5 : 100;
  const stored = await storage(largeSize, count);
  const copies = count * largeSize;
  lines.push(
    `storage, ${count} snapshots of edits to one ${largeSize / MiB} MiB file: ` +
      `${(stored.bytes / MiB).toFixed(1)} MiB in the CAS vs ${(copies / MiB).toFixed(0)} MiB ` +
      `as plain copies (${(copies / stored.bytes).toFixed(1)}x smaller; ` +
      `${(stored.ms / count).toFixed(1)} ms per snapshot)`,
  );
  return lines;
}

if (import.meta.main) {
  for (const line of await run(quickMode())) console.log(line);
}
