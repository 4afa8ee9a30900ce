/**
 * The replication soak in CI's bounded size (`_soak.ts`; `bench/soak_bench.ts` runs it
 * longer): both sides change files, links and folders of a realistic tree at once, in
 * their own parts and on the same paths of `shared/` (conflicts), through a relay that
 * cuts connections at random, and once more while the replica is stopped. The trees end
 * identical and equal to the model, and no write is lost: every content written is in the
 * master's history or kept in a conflict.
 *
 * `CHRONICLE_SOAK_SEED=N` repeats a failed run's changes (its message names the seed).
 */
import { assert } from "./_assert.ts";
import { runSoak } from "./_soak.ts";

const SEED = Number(Deno.env.get("CHRONICLE_SOAK_SEED") ?? 17);

Deno.test(`soak: both sides change a realistic tree, the same paths too, through cuts (seed ${SEED})`, async () => {
  const figures = await runSoak({
    seed: SEED,
    files: 250,
    epochs: 3,
    rounds: 4,
    changesPerRound: 15,
    offlineChanges: 30,
    maxCutBytes: 256 * 1024,
  });
  // Every kind of change was made, so none went untested.
  assert(figures.kinds.size === 19, `every kind of change was made: ${[...figures.kinds]}`);
  console.log(
    `soak seed ${SEED}: ${figures.operations} changes, ${figures.cuts} cuts, ` +
      `${figures.masterConflicts} conflicts, converged in ` +
      `${figures.convergeMs.map((ms) => Math.round(ms)).join("/")} ms, ` +
      `${(figures.wallMs / 1000).toFixed(1)} s`,
  );
});
