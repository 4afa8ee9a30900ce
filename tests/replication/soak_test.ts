/**
 * The replication soak in CI's bounded size (`_soak.ts`; `bench/soak_bench.ts` runs it
 * longer): both sides change files, links and folders of a realistic tree at once through
 * a relay that cuts connections at random, and the same paths of `shared/` while the
 * replica is stopped (conflicts). The trees end identical and equal to the model, and no
 * write is lost: every content written is in the master's history or kept in a conflict.
 *
 * - `CHRONICLE_SOAK_SEED=N` repeats a failed run's changes (its message names the seed).
 * - `CHRONICLE_SOAK_RACING=0.33` also makes that share of the changes in `shared/` while
 *   both sides run, racing the replication of the same paths. It stays out of CI: with
 *   this round's fixes seeds 1 to 22 and 99 passed, but not every run (seed 7 once left a
 *   folder's mode differing, not explained yet). Fixed, each with a test: a sandbox's
 *   conflict answered on a connection that ended before its release kept the rejected
 *   version; a folder the master removed stayed, empty, when what it held was released
 *   after it; an accepted rename's source kept a stale master version, so that a later
 *   conflict at that path kept the sandbox's version (all in `replica_apply_test.ts`); a
 *   file replacing a folder was written back before a rename out of it
 *   (`decisions_test.ts`). Left: a side's own write can still be replaced before its
 *   capture in the window between a disk check and the write it guards (the master's
 *   write-back applier writes and moves without `createOnly`; the replica writes over a
 *   recorded file), seen as a capture that never comes.
 */
import { assert } from "./_assert.ts";
import { runSoak } from "./_soak.ts";

const SEED = Number(Deno.env.get("CHRONICLE_SOAK_SEED") ?? 17);
const RACING = Number(Deno.env.get("CHRONICLE_SOAK_RACING") ?? 0);

Deno.test(`soak: both sides change a realistic tree through cuts, and the same paths while apart (seed ${SEED})`, async () => {
  const figures = await runSoak({
    seed: SEED,
    files: 300,
    epochs: 5,
    rounds: 4,
    changesPerRound: 15,
    offlineChanges: 20,
    maxCutBytes: 512 * 1024,
    // Generous: a loaded machine once took 60 s to converge (through 500 cuts).
    convergeTimeoutMs: 180_000,
    racingShare: RACING,
  });
  // Every kind of change in a side's own part was made, so none went untested; in
  // `shared/`, where the other side's changes decide what there is to change, most.
  const kinds = [...figures.kinds.keys()];
  const shared = kinds.filter((kind) => kind.startsWith("shared: "));
  assert(kinds.length - shared.length === 11, `every kind of change was made: ${kinds}`);
  assert(shared.length >= 5, `most kinds of change in "shared/" were made: ${shared}`);
  console.log(
    `soak seed ${SEED}: ${figures.operations} changes, ${figures.cuts} cuts, ` +
      `${figures.masterConflicts} conflicts, converged in ` +
      `${figures.convergeMs.map((ms) => Math.round(ms)).join("/")} ms, ` +
      `${(figures.wallMs / 1000).toFixed(1)} s`,
  );
});
