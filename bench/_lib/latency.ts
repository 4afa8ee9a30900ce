/**
 * Propagation latency between two folders kept in sync, and its result line.
 *
 * @module
 */
import { isMissing } from "../../lib/disk/mod.ts";
import { formatNumber } from "./format.ts";
import { type LatencySummary, summarize } from "./timing.ts";

/** How long one write may take to arrive before the measurement fails. */
const ARRIVAL_TIMEOUT_MS = 20_000;

/** Counts file events under a folder, waking whoever waits for the next one. */
class EventCounter {
  count = 0;
  #wake: (() => void) | null = null;

  /** Resolves at the next event, or after `ms` should the OS drop one. */
  next(ms: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    return new Promise<void>((resolve) => {
      this.#wake = resolve;
      timer = setTimeout(resolve, ms);
    }).finally(() => clearTimeout(timer));
  }

  /** Records one event. */
  seen(): void {
    this.count++;
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }
}

/** Reads a text file, `null` while it is missing (or its folder is). */
function readTextOrNull(path: string): Promise<string | null> {
  return Deno.readTextFile(path).catch((error) => {
    if (isMissing(error)) return null;
    throw error;
  });
}

/** Waits until `path` holds `content`, woken by file events rather than a fixed sleep. */
async function waitForContent(path: string, content: string, events: EventCounter, what: string) {
  const deadline = performance.now() + ARRIVAL_TIMEOUT_MS;
  while (true) {
    const seen = events.count;
    if (await readTextOrNull(path) === content) return;
    if (performance.now() > deadline) {
      throw new Error(`${what} did not arrive in ${ARRIVAL_TIMEOUT_MS / 1000} s`);
    }
    if (events.count !== seen) continue; // something changed while we read: look again
    await events.next(50);
  }
}

/**
 * Latency from writing `count` small files under `writeRoot` to each appearing, whole,
 * under `readRoot`, one write at a time.
 *
 * @param writeRoot Where the files are written.
 * @param readRoot Where they must appear.
 * @param count How many writes.
 * @returns The latency summary in milliseconds.
 */
export async function propagationLatency(
  writeRoot: string,
  readRoot: string,
  count: number,
): Promise<LatencySummary> {
  await Deno.mkdir(`${writeRoot}/latency`, { recursive: true });
  const watcher = Deno.watchFs(readRoot, { recursive: true });
  // Events are counted, so that one arriving while we read is never waited for.
  const events = new EventCounter();
  const watching = (async () => {
    for await (const _event of watcher) events.seen();
  })();
  const samples: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const path = `latency/f${i}.txt`;
      const content = `write ${i} ${crypto.randomUUID()}\n`;
      const start = performance.now();
      await Deno.writeTextFile(`${writeRoot}/${path}`, content);
      await waitForContent(`${readRoot}/${path}`, content, events, `write ${i}`);
      samples.push(performance.now() - start);
    }
  } finally {
    watcher.close();
    await watching;
  }
  return summarize(samples);
}

/**
 * Formats a propagation latency result.
 *
 * @param label What was measured, e.g. `"propagation latency, master disk → replica disk, unix"`.
 * @param summary The latency summary in milliseconds.
 * @returns E.g. `"<label>: p50 1.20 ms, p99 3.40 ms (30 writes, mean 1.50 ms)"`.
 */
export function latencyLine(label: string, summary: LatencySummary): string {
  return `${label}: p50 ${formatNumber(summary.p50, 2)} ms, p99 ${
    formatNumber(summary.p99, 2)
  } ms (${summary.count} writes, mean ${formatNumber(summary.mean, 2)} ms)`;
}
