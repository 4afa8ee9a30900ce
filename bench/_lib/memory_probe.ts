/**
 * Runs `chronicle` (`main.ts`) like `deno run main.ts ARGS` does, and every 200 ms writes
 * the process's `Deno.memoryUsage()` (RSS, V8 heap used and total, external memory) as one
 * JSON line over the file named by `CHRONICLE_MEMORY_PROBE`: a benchmark then tells the
 * V8 heap from native memory (SQLite's page cache, buffers, the allocator) in the RSS it
 * reads from `/proc`. Touching the file named by `CHRONICLE_HEAP_SNAPSHOT` (then removed)
 * writes a V8 heap snapshot beside it, for a person looking for where the heap goes.
 *
 * For benchmarks only: `spawnChronicle(args, { script })` with this file.
 *
 * @module
 */
import { writeHeapSnapshot } from "node:v8";
import { main } from "../../main.ts";

/** How often the figures are written. */
const PROBE_MS = 200;

/** One sample of a process's memory, as the probe writes it. */
export interface MemorySample {
  /** Resident set size, bytes. */
  rss: number;
  /** V8 heap in use, bytes. */
  heapUsed: number;
  /** V8 heap reserved, bytes. */
  heapTotal: number;
  /** Memory of JavaScript objects held outside the V8 heap (array buffers), bytes. */
  external: number;
  /**
   * glibc malloc's figures (`mallinfo2`, every arena), when `CHRONICLE_MEMORY_PROBE_MALLINFO`
   * is set (it needs FFI: the benchmarks run the probe with `-A`): bytes the allocator took
   * from the OS (`arena`), of them allocated (`inUse`) and free but kept (`free`), and held
   * in mappings of their own (`mmapped`).
   */
  malloc?: { arena: number; inUse: number; free: number; mmapped: number };
}

/** `mallinfo2()` from glibc, through FFI, or `null` where it cannot be called. */
function mallinfoReader(): (() => MemorySample["malloc"]) | null {
  try {
    const libc = Deno.dlopen(
      "libc.so.6",
      {
        mallinfo2: { parameters: [], result: { struct: Array(10).fill("usize") } },
      } as const,
    );
    return () => {
      const fields = new BigUint64Array((libc.symbols.mallinfo2() as Uint8Array).buffer);
      const at = (i: number) => Number(fields[i]);
      // struct mallinfo2: arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks,
      // uordblks, fordblks, keepcost
      return { arena: at(0), inUse: at(7), free: at(8), mmapped: at(4) };
    };
  } catch {
    return null;
  }
}

/**
 * The last sample the probe wrote to `file`, or `null` when there is none yet.
 *
 * @param file The file named by `CHRONICLE_MEMORY_PROBE`.
 * @returns The sample.
 */
export function readMemorySample(file: string): MemorySample | null {
  try {
    return JSON.parse(Deno.readTextFileSync(file)) as MemorySample;
  } catch {
    return null; // not written yet, or caught mid-write
  }
}

if (import.meta.main) {
  const probe = Deno.env.get("CHRONICLE_MEMORY_PROBE");
  const snapshot = Deno.env.get("CHRONICLE_HEAP_SNAPSHOT");
  if (probe) {
    const mallinfo = Deno.env.get("CHRONICLE_MEMORY_PROBE_MALLINFO") ? mallinfoReader() : null;
    const timer = setInterval(() => {
      const { rss, heapUsed, heapTotal, external } = Deno.memoryUsage();
      const malloc = mallinfo?.();
      try {
        Deno.writeTextFileSync(
          `${probe}.tmp`,
          JSON.stringify({ rss, heapUsed, heapTotal, external, malloc }),
        );
        Deno.renameSync(`${probe}.tmp`, probe);
        if (snapshot && Deno.statSync(snapshot)) {
          Deno.removeSync(snapshot);
          writeHeapSnapshot(`${snapshot}.${Date.now()}.heapsnapshot`);
        }
      } catch { /* the snapshot trigger is absent: the usual case */ }
    }, PROBE_MS);
    Deno.unrefTimer(timer);
  }
  Deno.exit(await main(Deno.args));
}
