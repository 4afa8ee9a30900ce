/**
 * Where an initial sync's CPU time goes: the replication benchmark's initial sync of the
 * realistic corpus (`replication_bench.ts --profile --corpus realistic`), master and
 * replicas under Deno's `--cpu-prof`, and the functions that took most of it, by their own
 * time and with what they call. Only the profiles are printed: profiling slows the syncs,
 * whose times `replication_bench.ts` measures without it.
 *
 * `CHRONICLE_BENCH_QUICK=1` (or `--quick`) profiles the quick sizes.
 *
 * Run: `deno run -A bench/sync_profile_bench.ts`
 *
 * @module
 */
import { quickMode } from "./_lib/mod.ts";
import { run as replication } from "./replication_bench.ts";

/** Functions listed per ranking. */
const TOP = 10;

/**
 * Runs the benchmark.
 *
 * @param quick The quick sizes.
 * @returns Printable result lines.
 */
export async function run(quick: boolean): Promise<string[]> {
  const lines = await replication(quick, {
    profile: true,
    corpus: "realistic",
    profileTop: TOP,
  });
  const profiles = lines.findIndex((line) => line.startsWith("  profile of"));
  if (profiles < 0) throw new Error(`No profile in the replication benchmark's lines:\n${lines}`);
  const sync = lines.find((line) => line.startsWith("initial sync")) ?? "";
  const corpus = /\((realistic[^)]*)\)/.exec(sync)?.[1] ?? "realistic";
  return [
    `where an initial sync's CPU time goes (${corpus}; every round of the replication ` +
    `benchmark's under --cpu-prof, the master and each replica sampled):`,
    ...lines.slice(profiles),
  ];
}

if (import.meta.main) {
  for (const line of await run(quickMode())) console.log(line);
}
