/**
 * Shared helpers for the benchmarks in `bench/`: timing and percentiles, a seeded PRNG,
 * realistic temp trees and their removal at exit, running peer tools that may be missing, number and ratio
 * formatting, propagation latency between synced folders, and the description of the machine for `bench/RESULTS.md`.
 *
 * @module
 */
export { discoverBenches, isBenchFile } from "./bench_files.ts";
export {
  benchCorpora,
  type Corpus,
  type CorpusEntry,
  endedChildrenCpuMs,
  listTree,
  processCpuMs,
  processRssBytes,
  processWrittenBytes,
} from "./corpora.ts";
export { startBinaryPeer } from "./binary_peer.ts";
export { discard } from "./discard.ts";
export { durableCopy, durableWriteFloor } from "./durable_copy.ts";
export { formatMiB, formatNumber, KiB, MiB, rateRatio, sizeRatio } from "./format.ts";
export { latencyLine, propagationLatency } from "./latency.ts";
export {
  describeMachine,
  type MachineInfo,
  machineLine,
  parseCpuModel,
  parseMemTotal,
} from "./machine.ts";
export {
  peerAvailable,
  peerUnavailable,
  runPeer,
  type RunPeerOptions,
  syncDisks,
} from "./peer_tool.ts";
export { Prng } from "./prng.ts";
export { quickMode } from "./quick_mode.ts";
export { type BenchOutcome, renderResults, writeTextAtomic } from "./results_file.ts";
export { makeTree, type TreeFile, type TreeOptions } from "./temp_tree.ts";
export { type LatencySummary, percentile, summarize, timeMs } from "./timing.ts";
