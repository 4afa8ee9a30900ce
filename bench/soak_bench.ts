/**
 * Replication soak, longer than CI's (`tests/replication/soak_test.ts` runs the same soak,
 * `tests/replication/_soak.ts`, bounded): master and replica processes on a realistic
 * tree change it at once, each in its own part, through a relay that cuts connections at
 * random, then the same paths too while the replica is stopped (conflicts), epoch after
 * epoch; the run fails unless the trees end identical, equal to the model, and no write is
 * lost. Prints the seed, the changes made, the cuts, the conflicts kept and the time the
 * trees took to match after the changes.
 *
 * `CHRONICLE_SOAK_SEED=N` repeats a run (the default seed is random, printed first, except in
 * quick mode); `CHRONICLE_SOAK_RACING=0.33` also races same-path changes against their
 * replication while both sides run (see `tests/replication/soak_test.ts`, whose second test
 * runs such a soak in CI);
 * `CHRONICLE_BENCH_QUICK=1` (or `--quick`) runs a short soak in seconds.
 *
 * Run: `deno run -A bench/soak_bench.ts`
 *
 * @module
 */
import { formatMiB, formatNumber, percentile, quickMode } from "./_lib/mod.ts";
import { runSoak, type SoakOptions } from "../tests/replication/_soak.ts";

type Sizes = Omit<SoakOptions, "seed">;

const FULL: Sizes = {
  files: 1000,
  epochs: 8,
  rounds: 6,
  changesPerRound: 25,
  offlineChanges: 60,
  maxCutBytes: 256 * 1024,
  convergeTimeoutMs: 180_000,
};
const QUICK: Sizes = {
  files: 100,
  epochs: 1,
  rounds: 2,
  changesPerRound: 10,
  offlineChanges: 15,
  maxCutBytes: 256 * 1024,
};

/**
 * Runs the benchmark.
 *
 * @param quick Tiny sizes.
 * @returns Printable result lines.
 */
export async function run(quick: boolean): Promise<string[]> {
  const sizes = quick ? QUICK : FULL;
  // CI's quick run repeats one seed; a full run tries a new one each time (printed).
  const given = Deno.env.get("CHRONICLE_SOAK_SEED");
  const seed = given !== undefined
    ? Number(given)
    : quick
    ? 17
    : Math.floor(Math.random() * 0x7fff_ffff);
  const racingShare = Number(Deno.env.get("CHRONICLE_SOAK_RACING") ?? 0);
  const figures = await runSoak({ seed, ...sizes, racingShare });
  const converge = [...figures.convergeMs].sort((a, b) => a - b);
  const kinds = [...figures.kinds].sort(([a], [b]) => a.localeCompare(b))
    .map(([kind, n]) => `${kind} ${n}`).join(", ");
  return [
    `soak seed ${seed} (CHRONICLE_SOAK_SEED repeats it): ${formatNumber(sizes.files)} files at ` +
    `the start, ${sizes.epochs} epochs of ${sizes.rounds} rounds of ${sizes.changesPerRound} ` +
    `changes per side (${racingShare * 100}% racing on contested paths), then ` +
    `${sizes.offlineChanges} per side while the replica is stopped (half on contested paths)`,
    `soak changes: ${formatNumber(figures.operations)} (${kinds}); ` +
    `${formatNumber(figures.writes)} contents written`,
    `soak relay: ${formatNumber(figures.cuts)} connections cut, ${
      formatMiB(figures.relayBytes)
    } carried (a cut every ≤ ${formatMiB(sizes.maxCutBytes)})`,
    `soak conflicts kept: ${formatNumber(figures.masterConflicts)} by the master, ` +
    `${formatNumber(figures.replicaConflicts)} by the replica; no write lost`,
    `soak time to identical trees after changes: median ${
      formatNumber(percentile(converge, 50))
    } ms, max ${formatNumber(converge.at(-1) ?? 0)} ms over ${converge.length} convergences ` +
    `(each epoch: after the live rounds, then after the replica's restart)`,
    `soak wall time: ${formatNumber(figures.wallMs / 1000, 1)} s`,
  ];
}

if (import.meta.main) {
  for (const line of await run(quickMode())) console.log(line);
}
