/**
 * Wire codec throughput: bincode encode and decode of small Notifications and 1 MiB
 * ContentFetchResponses, next to a plain `Uint8Array.set` copy of the same bytes (the
 * physical reference). `CHRONICLE_BENCH_QUICK=1` (or `--quick`) runs tiny sizes.
 *
 * Run: `deno run -A bench/wire_bench.ts`
 *
 * @module
 */
import { decodeMessage, encodeFrame, encodeMessage, type WireMessage } from "../lib/wire/mod.ts";
import { MiB, quickMode } from "./_lib/mod.ts";

/** Best of `rounds` timings of `fn`, in milliseconds. */
function best(rounds: number, fn: () => void): number {
  let min = Infinity;
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    fn();
    min = Math.min(min, performance.now() - t0);
  }
  return min;
}

function line(
  label: string,
  ms: number,
  bytes: number,
  count: number,
  copyMs: number,
): string {
  const mbps = bytes / MiB / (ms / 1000);
  const perSec = count / (ms / 1000);
  const ratio = ms / copyMs;
  return `${label.padEnd(34)} ${mbps.toFixed(0).padStart(7)} MB/s ${
    perSec.toFixed(0).padStart(10)
  } msg/s  ${ratio.toFixed(2).padStart(6)}x the copy`;
}

function copyAll(payloads: Uint8Array[], total: number): () => void {
  const dest = new Uint8Array(total);
  return () => {
    let at = 0;
    for (const p of payloads) {
      dest.set(p, at);
      at += p.length;
    }
  };
}

function measure(label: string, msgs: WireMessage[], rounds: number): string[] {
  const payloads = msgs.map(encodeMessage);
  const total = payloads.reduce((n, p) => n + p.length, 0);
  const copyMs = best(rounds, copyAll(payloads, total));
  let sink = 0;
  const encodeMs = best(rounds, () => {
    for (const m of msgs) sink += encodeFrame(m).length;
  });
  const decodeMs = best(rounds, () => {
    for (const p of payloads) sink += decodeMessage(p).type.length;
  });
  if (sink === 0) throw new Error("Benchmark produced nothing");
  const mbps = total / MiB / (copyMs / 1000);
  return [
    `${label}: ${msgs.length} messages, ${total} payload bytes (${
      (total / msgs.length).toFixed(0)
    } per message)`,
    `${"  copy (Uint8Array.set)".padEnd(34)} ${mbps.toFixed(0).padStart(7)} MB/s`,
    line("  encodeFrame", encodeMs, total, msgs.length, copyMs),
    line("  decodeMessage", decodeMs, total, msgs.length, copyMs),
  ];
}

/**
 * Runs the benchmark.
 *
 * @param quick Tiny sizes, a few seconds at most.
 * @returns Printable result lines.
 */
export function run(quick: boolean): Promise<string[]> {
  const smallCount = quick ? 2_000 : 200_000;
  const largeCount = quick ? 4 : 64;
  const rounds = quick ? 3 : 7;

  const small: WireMessage[] = [];
  for (let i = 0; i < smallCount; i++) {
    small.push({
      type: "Notification",
      sequence: BigInt(i + 1),
      filepath: `src/components/button_${i % 1000}.tsx`,
      content_hash: "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
      size: 1234n,
      permissions: 0o100644n,
      is_deletion: false,
      inline_content: null,
    });
  }
  const content = new Uint8Array(MiB);
  for (let i = 0; i < content.length; i++) content[i] = (i * 31 + 7) & 0xff;
  const large: WireMessage[] = [];
  for (let i = 0; i < largeCount; i++) {
    large.push({
      type: "ContentFetchResponse",
      content_hash: "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
      content,
      size: BigInt(content.length),
      chunk_manifest: null,
    });
  }
  return Promise.resolve([
    ...measure("Notification (small)", small, rounds),
    ...measure("ContentFetchResponse (1 MiB)", large, rounds),
  ]);
}

if (import.meta.main) {
  for (const line of await run(quickMode())) console.log(line);
}
