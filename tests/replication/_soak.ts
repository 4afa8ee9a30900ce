/**
 * The replication soak, used by `soak_test.ts` (CI's bounded run) and
 * `bench/soak_bench.ts` (a longer run with figures): a master and a replica on a realistic
 * tree (`tests/_helpers/realistic_tree.ts`), the replica connected through a relay that
 * cuts connections at random (never blocking). Each epoch: both sides change the tree at
 * once in rounds (`_soak_changes.ts`), each in its own part, and the trees are compared;
 * then both change it while the replica is stopped, their own parts and the same paths of
 * `contested/` (edits, removals, renames, modes, folders: conflicts), and the trees are
 * compared once the replica is back. At the end:
 *
 * - both trees are identical, folders, modes and link targets included;
 * - outside `contested/` they equal the model of every change made: nothing written is lost,
 *   nothing removed comes back;
 * - no write is lost anywhere: every content either side ever wrote is in the master's
 *   history (of any path), or kept in the master's conflicts, or in the replica's;
 * - the same-path writes made conflicts, kept on both sides.
 *
 * `racingShare` also makes changes in `contested/` while both sides run, racing the
 * replication of the other side's changes to the same paths. Known to fail today (the
 * windows between a disk check and the write it guards, among others): see
 * `CHRONICLE_SOAK_RACING` in `soak_test.ts`.
 *
 * A failure names the seed; `CHRONICLE_SOAK_SEED` repeats the same changes.
 *
 * @module
 */
import { makeRealisticTree } from "../_helpers/realistic_tree.ts";
import type { Iteration } from "../../lib/store/mod.ts";
import type { Conflict, MasterConflict, ReplicaStatus } from "../../lib/replication/mod.ts";
import { CuttingProxy } from "./_cutting_proxy.ts";
import {
  describeDifference,
  type Peer,
  startMaster,
  startReplica,
  stopPeers,
  treeState,
  waitForSameTrees,
  withDirs,
  writeBacksAnswered,
} from "./_harness.ts";
import { Captures, Changer, CONTESTED, type Kinds, type Written } from "./_soak_changes.ts";

/** Sizes of one soak run. */
export interface SoakOptions {
  /** Seed of the tree, the changes and the cuts. */
  seed: number;
  /** Regular files of the realistic tree at the start. */
  files: number;
  /**
   * Epochs: rounds of changes on both sides at once, the trees compared; then changes on
   * both sides while the replica is stopped, the trees compared again.
   */
  epochs: number;
  /** Rounds per epoch: both sides make their changes at once. */
  rounds: number;
  /** Changes per side and round. */
  changesPerRound: number;
  /** Changes per side and epoch while the replica is stopped. */
  offlineChanges: number;
  /**
   * The share of the changes (0 to 1) made in `contested/` while both sides run, racing the
   * other side's changes to the same paths and the replication of them (half of the
   * changes made while the replica is stopped are there anyway). @default {0}
   */
  racingShare?: number;
  /**
   * Most bytes a connection through the relay carries before it is cut. The tree's files
   * (up to 512 KiB) and a side's largest writes (up to 720 KB) may be larger: a fetch a cut
   * lost goes on in ranges, and a write-back a cut lost goes on in pieces
   * (docs/PROTOCOL.md §4).
   */
  maxCutBytes: number;
  /** How long the trees may take to match after changes. @default {60000} */
  convergeTimeoutMs?: number;
}

/** What a soak run did. */
export interface SoakFigures {
  /** Changes made, both sides. */
  operations: number;
  /** Changes made of each kind, both sides. */
  kinds: Kinds;
  /** Distinct contents written. */
  writes: number;
  /** Connections the relay cut. */
  cuts: number;
  /** Bytes through the relay. */
  relayBytes: number;
  /** Rejected write-backs the master kept. */
  masterConflicts: number;
  /** Rejected write-backs the replica kept. */
  replicaConflicts: number;
  /** Milliseconds from the end of each batch of changes to identical trees (two per epoch). */
  convergeMs: number[];
  /** Milliseconds the whole run took. */
  wallMs: number;
}

/** Runs a soak; an error names the seed and how to repeat it. */
export async function runSoak(options: SoakOptions): Promise<SoakFigures> {
  try {
    return await withDirs(["m", "r"], (dirs) => soak(dirs, options));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(
      `Soak failed with seed ${options.seed} (repeat it with CHRONICLE_SOAK_SEED=${options.seed}): ${message}`,
      { cause: error },
    );
  }
}

async function soak(
  { base, m, r }: { base: string; m: string; r: string },
  options: SoakOptions,
): Promise<SoakFigures> {
  const started = performance.now();
  const { seed } = options;
  await makeRealisticTree(m, { files: options.files, seed, maxSize: 512 * 1024 });
  const model = await treeState(m, [], true);
  const sock = `${base}/m.sock`;
  const master = await startMaster(m, sock);
  // The replica reaches the master through a relay that cuts, once the initial sync is done.
  const proxy = CuttingProxy.start({
    listen: `${base}/proxy.sock`,
    upstream: sock,
    seed,
    maxBytes: options.maxCutBytes,
  });
  proxy.cutting = false;
  const replicaArgs = ["--sandbox-id", "sb", "--backoff-max", "100"];
  let replica: Peer | null = await startReplica(r, `${base}/proxy.sock`, { args: replicaArgs });
  const written: Written = new Map();
  const sides = [
    new Changer(m, 0, model, written, new Captures(() => master), seed),
    new Changer(r, 1, model, written, new Captures(() => replica), seed + 1),
  ];
  const convergeMs: number[] = [];
  const converge = async () => {
    const from = performance.now();
    const tree = await waitForSameTrees([m, r], {
      peers: [master, replica!],
      folders: true,
      timeoutMs: options.convergeTimeoutMs ?? 60_000,
    }).catch(async (error) => {
      // What each side says of itself then (a side that no longer answers says that).
      const said = await Promise.all(
        [master, replica!].map((peer) =>
          peer.command("status", 5_000).then(
            (status) => `${peer.name} status: ${JSON.stringify(status)}`,
            (why) => `${peer.name} status: ${why}`,
          )
        ),
      );
      throw new Error(`${error.message}\n${said.join("\n")}`, { cause: error });
    });
    convergeMs.push(performance.now() - from);
    const outside = new Map([...tree].filter(([path]) => !inShared(path)));
    const difference = describeDifference(model, outside);
    if (difference !== "identical") {
      const paths = differing(model, outside);
      // Why the write-backs of those paths were rejected, when they were.
      const conflicts = (await replica!.command<Conflict[]>("conflicts"))
        .filter((c) => paths.some((path) => c.path === path || c.path.startsWith(`${path}/`)));
      throw new Error(
        `the trees outside "${CONTESTED}/" differ from the changes made (model vs trees):\n${difference}\n${await histories(
          [master, replica!],
          paths,
        )}\nreplica conflicts there: ${JSON.stringify(conflicts.slice(0, 10))}`,
      );
    }
    for (const [path, state] of tree) {
      const hash = state.split(" ")[1]!;
      const file = /^[0-7]+ /.test(state);
      check(
        !inShared(path) || !file || written.has(hash),
        () => `"${path}" holds content nobody wrote (${state})`,
      );
    }
  };
  try {
    await converge(); // the initial sync
    convergeMs.length = 0;
    proxy.cutting = true;
    for (let epoch = 0; epoch < options.epochs; epoch++) {
      for (let round = 0; round < options.rounds; round++) {
        await Promise.all(
          sides.map((side) => side.steps(options.changesPerRound, options.racingShare ?? 0)),
        );
      }
      await converge();
      // Both sides change the tree, and the same paths of `contested/` (one of them for sure),
      // while the replica is stopped: conflicts, found when it starts again.
      await Promise.all(sides.map((side) => side.captured()));
      await replica.stop();
      replica = null;
      await Promise.all(sides.map((side) => side.writeBoth()));
      await Promise.all(sides.map((side) => side.steps(options.offlineChanges, 0.5)));
      replica = await startReplica(r, `${base}/proxy.sock`, { args: replicaArgs });
      await converge();
    }
    const status = await writeBacksAnswered(replica);
    check(status.problems.length === 0, () => `problems: ${JSON.stringify(status.problems)}`);
    check(status.refused.length === 0, () => `refused: ${JSON.stringify(status.refused)}`);
    const conflicts = await noWriteLost(master, replica, status, written);
    check(proxy.cuts > 0, () => "the relay cut no connection");
    const kinds: Kinds = new Map();
    for (const side of sides) {
      for (const [kind, n] of side.kinds) kinds.set(kind, (kinds.get(kind) ?? 0) + n);
    }
    return {
      operations: [...kinds.values()].reduce((a, b) => a + b, 0),
      kinds,
      writes: written.size,
      cuts: proxy.cuts,
      relayBytes: proxy.bytes,
      ...conflicts,
      convergeMs,
      wallMs: performance.now() - started,
    };
  } finally {
    await stopPeers(...(replica ? [replica] : []), master).finally(() => proxy.close());
  }
}

/**
 * Checks that every content written is in the master's history or kept in a conflict,
 * and that the same-path writes made while the replica was stopped made conflicts.
 */
async function noWriteLost(
  master: Peer,
  replica: Peer,
  status: ReplicaStatus,
  written: Written,
): Promise<{ masterConflicts: number; replicaConflicts: number }> {
  await master.command("settle");
  const hashes = [...written.keys()];
  const notInHistory: string[] = [];
  for (let i = 0; i < hashes.length; i += 200) {
    const batch = hashes.slice(i, i + 200).join(" ");
    notInHistory.push(...await master.command<string[]>(`missing ${batch}`));
  }
  const masterConflicts = await master.command<MasterConflict[]>("conflicts");
  const replicaConflicts = await replica.command<Conflict[]>("conflicts");
  const kept = new Set([...masterConflicts, ...replicaConflicts].map((c) => c.keptHash));
  const lost = notInHistory.filter((hash) => !kept.has(hash));
  if (lost.length > 0) {
    // The histories of the paths written (where the write was, and what came after it).
    const paths = lost.map((hash) => /at "(.*)"$/.exec(written.get(hash) ?? "")?.[1] ?? "");
    const folders = paths.map((path) => path.slice(0, Math.max(0, path.lastIndexOf("/"))));
    const said = await histories(
      [master, replica],
      [...new Set([...paths, ...folders])].filter((path) => path !== ""),
    );
    check(
      false,
      () =>
        `${lost.length} writes lost (in no history and no conflict): ${
          lost.slice(0, 10).map((hash) => `${written.get(hash)} (${hash.slice(0, 12)})`).join(", ")
        }\n${said}\nmaster conflicts: ${
          JSON.stringify(masterConflicts.slice(0, 10))
        }\nreplica status: ${
          JSON.stringify(status)
        }\n--- master ---\n${master.logs()}\n--- replica ---\n${replica.logs()}`,
    );
  }
  const both = (c: { path: string }) => c.path === `${CONTESTED}/both.txt`;
  check(
    masterConflicts.some(both),
    () => `the master kept no conflict for "${CONTESTED}/both.txt"`,
  );
  check(
    replicaConflicts.some(both),
    () => `the replica kept no conflict for "${CONTESTED}/both.txt"`,
  );
  return { masterConflicts: masterConflicts.length, replicaConflicts: replicaConflicts.length };
}

/** The paths whose states differ between two trees. */
function differing(a: Map<string, string>, b: Map<string, string>): string[] {
  const paths = new Set([...a.keys(), ...b.keys()]);
  return [...paths].filter((path) => a.get(path) !== b.get(path));
}

/** The histories of the first few `paths` on each peer, for a failure's message. */
async function histories(peers: Peer[], paths: string[]): Promise<string> {
  const lines: string[] = [];
  for (const path of paths.slice(0, 5)) {
    for (const peer of peers) {
      const history = await peer.command<Iteration[]>(`history ${path}`).catch(() => []);
      lines.push(`${peer.name} history of "${path}":`);
      for (const it of history) {
        lines.push(
          `  #${it.iteration} seq ${it.sequence} ${it.origin} ${
            it.deleted ? "deleted" : `${it.mode.toString(8)} ${it.hash.slice(0, 12)}`
          }`,
        );
      }
    }
  }
  return lines.join("\n");
}

function inShared(path: string): boolean {
  return path === CONTESTED || path.startsWith(`${CONTESTED}/`);
}

function check(ok: boolean, message: () => string): void {
  if (!ok) throw new Error(message());
}
