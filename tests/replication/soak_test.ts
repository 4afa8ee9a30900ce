/**
 * The replication soak in CI's bounded size (`_soak.ts`; `bench/soak_bench.ts` runs it
 * longer): both sides change files, links and folders of a realistic tree at once through
 * a relay that cuts connections at random, and the same paths of `contested/` while the
 * replica is stopped (conflicts). The trees end identical and equal to the model, and no
 * write is lost: every content written is in the master's history or kept in a conflict.
 *
 * - `CHRONICLE_SOAK_SEED=N` repeats a failed run's changes (its message names the seed).
 * - `CHRONICLE_SOAK_RACING=0.33` also makes that share of the changes in `contested/` while
 *   both sides run, racing the replication of the same paths (the first test then races,
 *   and the second is left out).
 *
 * The second test is that racing soak with a fixed seed, in CI since seeds 1 to 30 passed
 * three runs each on one commit (90 of 90; before the last three fixes below 89 of 90, and on
 * the commit before them 89 of 90). Fixed, each with a test: a sandbox's conflict answered on
 * a connection that ended before its release kept the rejected version; a folder the master
 * removed stayed, empty, when what it held was released after it; an accepted rename's source
 * kept a stale master version (all in `replica_apply_test.ts`); a file replacing a folder was
 * written back before a rename out of it; a rename from a path holding a deferred version to a
 * new path was journaled as seen at 0, so rejected (`decisions_test.ts`); a side's own write
 * landing between the disk check and the write, removal or rename it guards was replaced
 * unseen; a side's own change right after an apply (a file where one was removed, a folder's
 * mode) was recorded as the other side's, so never written back; a rename whose source the
 * agent removed, a write whose folder it removed, a folder deletion whose folder it filled
 * after the decision failed, and a failure is not undone by the sandbox (all in
 * `apply_races_test.ts`); a master version whose path kept changing on the replica's disk was
 * left unapplied (`apply_unsettled_test.ts`); a deferral decided before a write-back answer
 * moved the path past it stood in for the version applied, so a rejected rename's destination
 * stayed (`state_test.ts`); a file the sandbox put where the replica removed one, right before
 * the removal was recorded, was recorded as the master's, so lost (`apply_races_test.ts`).
 * Left (documented `RACE`s): microseconds between the executor's last look and the call it
 * guards, and a same-size rewrite in place within the millisecond of the look.
 */
import { assert } from "./_assert.ts";
import { runSoak } from "./_soak.ts";

const SEED = Number(Deno.env.get("CHRONICLE_SOAK_SEED") ?? 17);
const RACING = Number(Deno.env.get("CHRONICLE_SOAK_RACING") ?? 0);
/** The racing soak CI runs: the seed that once left a version unapplied. */
const RACING_SEED = 30;
const RACING_SHARE = 0.33;

/** One soak of CI's size, `racingShare` of the changes in `contested/` racing. */
async function soak(seed: number, racingShare: number): Promise<void> {
  const figures = await runSoak({
    seed,
    files: 300,
    epochs: 5,
    rounds: 4,
    changesPerRound: 15,
    offlineChanges: 20,
    maxCutBytes: 512 * 1024,
    // Generous: a loaded machine once took 60 s to converge (through 500 cuts).
    convergeTimeoutMs: 180_000,
    racingShare,
  });
  // Every kind of change in a side's own part was made, so none went untested; in
  // `contested/`, where the other side's changes decide what there is to change, most.
  const kinds = [...figures.kinds.keys()];
  const contested = kinds.filter((kind) => kind.startsWith("contested: "));
  assert(kinds.length - contested.length === 11, `every kind of change was made: ${kinds}`);
  assert(contested.length >= 5, `most kinds of change in "contested/" were made: ${contested}`);
  console.log(
    `soak seed ${seed}${racingShare > 0 ? ` racing ${racingShare}` : ""}: ` +
      `${figures.operations} changes, ${figures.cuts} cuts, ` +
      `${figures.masterConflicts} conflicts, converged in ` +
      `${figures.convergeMs.map((ms) => Math.round(ms)).join("/")} ms, ` +
      `${(figures.wallMs / 1000).toFixed(1)} s`,
  );
}

Deno.test(`soak: both sides change a realistic tree through cuts, and the same paths while apart (seed ${SEED})`, async () => {
  await soak(SEED, RACING);
});

Deno.test({
  name:
    `soak, racing: both sides also change the same paths at the same time (seed ${RACING_SEED})`,
  // A run racing by the environment is the first test's already.
  ignore: RACING > 0,
  fn: () => soak(RACING_SEED, RACING_SHARE),
});
