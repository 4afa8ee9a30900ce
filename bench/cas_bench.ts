/**
 * CAS benchmark: content-defined chunking throughput, `putFile` throughput for one large
 * file and for many small files, each compared in the same run with `sha256sum` over the
 * same bytes (a spawned process, so its figure includes its start-up), and the storage
 * used by many small edits of a large file against full copies.
 * `CHRONICLE_BENCH_QUICK=1` (or `--quick`) runs tiny sizes.
 *
 * Run: `deno run -A bench/cas_bench.ts`
 *
 * @module
 */
import { join } from "node:path";
import { Cas, chunkBoundaries, sha256Hex } from "../lib/cas/mod.ts";
import { openDatabase } from "../lib/db/mod.ts";
import { pseudoRandomBytes } from "../tests/_helpers/random_bytes.ts";
import { discard, MiB, quickMode, timeMs } from "./_lib/mod.ts";

/** The best of `n` timings, to damp noise from other work on the machine. */
async function best(n: number, fn: () => unknown): Promise<number> {
  let min = Infinity;
  for (let i = 0; i < n; i++) min = Math.min(min, await timeMs(fn));
  return min;
}

function mbps(bytes: number, ms: number): number {
  return bytes / MiB / (ms / 1000);
}

function fmt(n: number, digits = 0): string {
  return n.toFixed(digits);
}

/** Milliseconds `sha256sum` takes over `paths`, or `null` when it is not installed. */
async function sha256sumMs(paths: string[]): Promise<number | null> {
  try {
    return await best(3, async () => {
      const out = await new Deno.Command("sha256sum", {
        args: paths,
        stdout: "null",
        stderr: "null",
      })
        .output();
      if (!out.success) throw new Error(`sha256sum exited with ${out.code}`);
    });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

function peer(bytes: number, ours: number, theirs: number | null): string {
  if (theirs === null) return "sha256sum not installed";
  return `sha256sum ${fmt(mbps(bytes, theirs))} MB/s; ratio ${
    fmt(theirs / ours, 2)
  }x sha256sum's speed`;
}

/**
 * Runs the benchmark.
 *
 * @param quick Tiny sizes (a few seconds), for CI.
 * @returns Printable result lines.
 */
export async function run(quick: boolean): Promise<string[]> {
  const lines: string[] = [];
  const dir = await Deno.makeTempDir({ prefix: "chronicle_cas_bench_" });
  try {
    // 1. Chunker alone, in memory.
    const bigSize = quick ? 16 * MiB : 256 * MiB;
    const big = pseudoRandomBytes(bigSize, 1);
    const bigPath = join(dir, "big.bin");
    await Deno.writeFile(bigPath, big);
    let chunks = 0;
    const chunkMs = await best(3, () => (chunks = chunkBoundaries(big).length));
    const hashMs = await best(3, () => sha256Hex(big));
    const sumBigMs = await sha256sumMs([bigPath]);
    lines.push(
      `chunker: ${fmt(mbps(bigSize, chunkMs))} MB/s over ${bigSize / MiB} MiB ` +
        `(${chunks} chunks, avg ${fmt(bigSize / chunks / 1024)} KiB); ` +
        `in-process SHA-256 ${fmt(mbps(bigSize, hashMs))} MB/s; ${
          peer(bigSize, chunkMs, sumBigMs)
        }`,
    );

    // 2. putFile of one large file: read, hash, chunk, write each chunk durably.
    const cas = await Cas.open(join(dir, "cas"));
    const putBigMs = await timeMs(() => cas.putFile(bigPath));
    lines.push(
      `putFile one ${bigSize / MiB} MiB file: ${fmt(mbps(bigSize, putBigMs))} MB/s ` +
        `(${peer(bigSize, putBigMs, sumBigMs)})`,
    );
    const reputBigMs = await timeMs(() => cas.putFile(bigPath));
    lines.push(
      `putFile same file again (all chunks deduplicated): ${fmt(mbps(bigSize, reputBigMs))} MB/s ` +
        `(${peer(bigSize, reputBigMs, sumBigMs)})`,
    );
    await Deno.remove(bigPath);

    // 3. putFile of many small files, each written durably (fsync, rename, fsync folder).
    const count = quick ? 200 : 2000;
    const smallDir = join(dir, "small");
    await Deno.mkdir(smallDir);
    const paths: string[] = [];
    let smallBytes = 0;
    for (let i = 0; i < count; i++) {
      const size = 1024 + ((i * 7919) % (31 * 1024));
      const path = join(smallDir, `f${i}.bin`);
      await Deno.writeFile(path, pseudoRandomBytes(size, 1000 + i));
      paths.push(path);
      smallBytes += size;
    }
    const sumSmallMs = await sha256sumMs(paths);
    // As a workspace opens it: small objects go to its database's table.
    const smallDb = openDatabase(join(dir, "small.db"));
    const smallCas = await Cas.open(join(dir, "cas_small"), { db: smallDb });
    const putSmallMs = await timeMs(async () => {
      for (const path of paths) await smallCas.putFile(path);
    });
    lines.push(
      `putFile ${count} small files (${fmt(smallBytes / MiB, 1)} MiB): ` +
        `${fmt(count / (putSmallMs / 1000))} files/s, ${
          fmt(mbps(smallBytes, putSmallMs), 1)
        } MB/s ` +
        `(${peer(smallBytes, putSmallMs, sumSmallMs)})`,
    );
    const reputSmallMs = await timeMs(async () => {
      for (const path of paths) await smallCas.putFile(path);
    });
    smallDb.close();
    lines.push(
      `putFile same ${count} files again (deduplicated): ${
        fmt(count / (reputSmallMs / 1000))
      } files/s, ` +
        `${fmt(mbps(smallBytes, reputSmallMs), 1)} MB/s (${
          peer(smallBytes, reputSmallMs, sumSmallMs)
        })`,
    );

    // 4. Storage for many one-small-edit versions of a large file, against full copies.
    const edits = quick ? 5 : 100;
    const fileSize = quick ? 5 * MiB : 10 * MiB;
    const editCas = await Cas.open(join(dir, "cas_edits"));
    const content = pseudoRandomBytes(fileSize, 7);
    await editCas.putBytes(content);
    const editsMs = await timeMs(async () => {
      for (let i = 1; i <= edits; i++) {
        const at = (i * 2_654_435_761) % (fileSize - 16);
        content.set(pseudoRandomBytes(16, 50 + i), at);
        await editCas.putBytes(content);
      }
    });
    const { bytes: stored } = await editCas.stats();
    const full = (edits + 1) * fileSize;
    lines.push(
      `${edits} one-edit versions of a ${fileSize / MiB} MiB file (+ the original): ` +
        `${fmt(stored / MiB, 1)} MiB stored vs ${fmt(full / MiB)} MiB as full copies ` +
        `(${fmt((stored / full) * 100, 1)}%); ${fmt(edits / (editsMs / 1000), 1)} versions/s`,
    );
  } finally {
    await discard(dir);
  }
  return lines.map((line) => `cas ${line}`);
}

if (import.meta.main) {
  for (const line of await run(quickMode())) console.log(line);
}
