/**
 * A replication soak on a realistic tree (`tests/_helpers/realistic_tree.ts`): master and
 * replica each make seeded random changes (files written, edited, chmodded, removed and
 * renamed; folders made, chmodded, removed with all they hold and renamed) at the same time,
 * in rounds, through a relay that cuts the connection at random (every ≤ 2 MiB), then once
 * more while the replica is stopped (its changes found at its start).
 * At the end both trees are identical, folders and modes included, and equal to a model of
 * every change made: nothing written is lost, nothing removed comes back.
 *
 * Each side changes only its own part of the tree (the paths under the two-level folders
 * it owns, by a hash of their names), so the model knows the outcome without conflicts.
 */
import { sha256Hex } from "../../lib/cas/mod.ts";
import { Prng } from "../_helpers/prng.ts";
import { makeRealisticTree } from "../_helpers/realistic_tree.ts";
import { assert, assertEquals } from "./_assert.ts";
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

/** Which side changes the paths under a two-level folder: its name's hash decides. */
function ownerOf(path: string): 0 | 1 {
  const unit = path.split("/").slice(0, 2).join("/");
  let hash = 7;
  for (let i = 0; i < unit.length; i++) hash = (hash * 31 + unit.charCodeAt(i)) >>> 0;
  return (hash % 2) as 0 | 1;
}

/**
 * One side's random changes to its part of `root`, each mirrored in `model` (the tree's
 * state as `treeState` gives it, folders included).
 */
class Changer {
  readonly #root: string;
  readonly #side: 0 | 1;
  readonly #model: Map<string, string>;
  readonly #prng: Prng;
  #made = 0;
  /** How many changes of each kind were made. */
  readonly kinds = new Map<string, number>();

  constructor(root: string, side: 0 | 1, model: Map<string, string>, seed: number) {
    this.#root = root;
    this.#side = side;
    this.#model = model;
    this.#prng = new Prng(seed);
  }

  /** Paths of this side's part, at least three levels deep, of one kind. */
  #mine(kind: "file" | "dir"): string[] {
    return [...this.#model].filter(([path, state]) =>
      path.split("/").length >= 3 && ownerOf(path) === this.#side &&
      (kind === "dir" ? state.startsWith("dir ") : /^[0-7]+ /.test(state))
    ).map(([path]) => path);
  }

  /** A folder of this side's part to put something new in (two levels deep or more). */
  #folder(): string {
    const folders = [...this.#model].filter(([path, state]) =>
      state.startsWith("dir ") && path.split("/").length >= 2 && ownerOf(path) === this.#side
    ).map(([path]) => path);
    return this.#pick(folders)!;
  }

  #pick<T>(items: T[]): T | undefined {
    return items.length === 0 ? undefined : items[this.#prng.int(items.length)];
  }

  #name(stem: string): string {
    return `${stem}-${this.#side}-${this.#made++}-${this.#prng.int(1000)}${
      this.#prng.next() < 0.2 ? "-ü" : ""
    }`;
  }

  async #write(path: string, mode: number): Promise<void> {
    const size = this.#prng.next() < 0.1 ? 20_000 + this.#prng.int(100_000) : this.#prng.int(3000);
    const bytes = this.#prng.bytes(size);
    await Deno.writeFile(`${this.#root}/${path}`, bytes, { mode });
    await Deno.chmod(`${this.#root}/${path}`, mode);
    this.#model.set(path, `${mode.toString(8)} ${sha256Hex(bytes)}`);
  }

  /** Moves `from` (and all it holds) to `to` on disk and in the model. */
  async #rename(from: string, to: string): Promise<void> {
    await Deno.rename(`${this.#root}/${from}`, `${this.#root}/${to}`);
    for (const [path, state] of [...this.#model]) {
      if (path !== from && !path.startsWith(`${from}/`)) continue;
      this.#model.delete(path);
      this.#model.set(to + path.slice(from.length), state);
    }
  }

  /** Makes one random change; `false` when the one drawn had nothing to act on. */
  async step(): Promise<boolean> {
    const roll = this.#prng.int(10);
    const files = this.#mine("file");
    const dirs = this.#mine("dir");
    const file = this.#pick(files);
    const dir = this.#pick(dirs);
    switch (roll) {
      case 0:
      case 1: // a new file
        await this.#write(`${this.#folder()}/${this.#name("new")}.txt`, 0o644);
        return this.#did("new file");
      case 2: // an edit, sometimes making it executable
        if (!file) return false;
        await this.#write(file, this.#prng.next() < 0.2 ? 0o755 : 0o644);
        return this.#did("edit");
      case 3: // a removed file
        if (!file) return false;
        await Deno.remove(`${this.#root}/${file}`);
        this.#model.delete(file);
        return this.#did("remove file");
      case 4: { // a renamed file, into another folder of this side's part
        if (!file) return false;
        await this.#rename(file, `${this.#folder()}/${this.#name("moved")}.txt`);
        return this.#did("rename file");
      }
      case 5: { // a new folder, empty or with one level in it
        const path = `${this.#folder()}/${this.#name("dir")}`;
        const nested = this.#prng.next() < 0.5;
        await Deno.mkdir(nested ? `${this.#root}/${path}/inner` : `${this.#root}/${path}`, {
          recursive: true,
        });
        await Deno.chmod(`${this.#root}/${path}`, 0o755);
        this.#model.set(path, "dir 755");
        if (nested) {
          await Deno.chmod(`${this.#root}/${path}/inner`, 0o755);
          this.#model.set(`${path}/inner`, "dir 755");
        }
        return this.#did("new folder");
      }
      case 6: { // a folder's mode
        if (!dir) return false;
        const mode = this.#prng.next() < 0.5 ? 0o750 : 0o755;
        await Deno.chmod(`${this.#root}/${dir}`, mode);
        this.#model.set(dir, `dir ${mode.toString(8)}`);
        return this.#did("folder mode");
      }
      case 7: { // a folder removed with everything in it
        if (!dir) return false;
        await Deno.remove(`${this.#root}/${dir}`, { recursive: true });
        for (const path of [...this.#model.keys()]) {
          if (path === dir || path.startsWith(`${dir}/`)) this.#model.delete(path);
        }
        return this.#did("remove folder");
      }
      case 8: { // a folder renamed (moved under a folder that is not inside it)
        if (!dir) return false;
        const target = this.#folder();
        if (target === dir || target.startsWith(`${dir}/`)) return false;
        await this.#rename(dir, `${target}/${this.#name("renamed")}`);
        return this.#did("rename folder");
      }
      default: { // a file replaced by a folder, or a folder by a file
        if (this.#prng.next() < 0.5 && file) {
          await Deno.remove(`${this.#root}/${file}`);
          this.#model.delete(file);
          await Deno.mkdir(`${this.#root}/${file}`);
          await Deno.chmod(`${this.#root}/${file}`, 0o755);
          this.#model.set(file, "dir 755");
          return this.#did("file to folder");
        }
        if (!dir) return false;
        await Deno.remove(`${this.#root}/${dir}`, { recursive: true });
        for (const path of [...this.#model.keys()]) {
          if (path === dir || path.startsWith(`${dir}/`)) this.#model.delete(path);
        }
        await this.#write(dir, 0o644);
        return this.#did("folder to file");
      }
    }
  }

  /** Makes `count` changes. */
  async steps(count: number): Promise<void> {
    for (let made = 0; made < count;) if (await this.step()) made++;
  }

  /** Counts a change of `kind`; `true`, for `step` to return. */
  #did(kind: string): true {
    this.kinds.set(kind, (this.kinds.get(kind) ?? 0) + 1);
    return true;
  }
}

/** Trees identical with their folders and modes. */
function sameTrees(roots: string[], peers: Peer[]): Promise<Map<string, string>> {
  return waitForSameTrees(roots, { peers, folders: true, timeoutMs: 40_000 });
}

const SEED = Number(Deno.env.get("CHRONICLE_SOAK_SEED") ?? 17);
const ROUNDS = 6;
const CHANGES_PER_ROUND = 15;

Deno.test(`soak: both sides change files and folders of a realistic tree (seed ${SEED})`, async (t) => {
  await withDirs(["m", "r"], async ({ base, m, r }) => {
    await makeRealisticTree(m, { files: 250, seed: SEED, maxSize: 512 * 1024 });
    const model = await treeState(m, [], true);
    const sock = `${base}/m.sock`;
    const master = await startMaster(m, sock);
    // The replica reaches the master through a relay that cuts, once the initial sync is done.
    const proxy = CuttingProxy.start({
      listen: `${base}/proxy.sock`,
      upstream: sock,
      seed: SEED,
      maxBytes: 2 * 1024 * 1024,
    });
    proxy.cutting = false;
    const replicaArgs = ["--sandbox-id", "sb", "--backoff-max", "100"];
    let replica = await startReplica(r, `${base}/proxy.sock`, { args: replicaArgs });
    const sides = [new Changer(m, 0, model, SEED), new Changer(r, 1, model, SEED + 1)];
    const expect = (tree: Map<string, string>) => {
      assertEquals(describeDifference(model, tree), "identical", "the trees hold every change");
    };
    try {
      await t.step("initial sync", async () => {
        expect(await sameTrees([m, r], [master, replica]));
      });
      await t.step(`${ROUNDS} rounds of changes on both sides at once, with cuts`, async () => {
        proxy.cutting = true;
        for (let round = 0; round < ROUNDS; round++) {
          await Promise.all(sides.map((side) => side.steps(CHANGES_PER_ROUND)));
        }
        expect(await sameTrees([m, r], [master, replica]));
      });
      await t.step("changes on both sides while the replica is stopped", async () => {
        await replica.stop();
        await Promise.all(sides.map((side) => side.steps(2 * CHANGES_PER_ROUND)));
        replica = await startReplica(r, `${base}/proxy.sock`, { args: replicaArgs });
        expect(await sameTrees([m, r], [master, replica]));
      });
      for (const [i, side] of sides.entries()) {
        assertEquals(
          side.kinds.size,
          10,
          `side ${i} made every kind of change: ${[...side.kinds]}`,
        );
      }
      assert(proxy.cuts > 0, "the relay cut connections");
      const status = await writeBacksAnswered(replica);
      assertEquals(status.conflicts, [], "no conflict: each side changed only its own part");
      assertEquals(status.problems, []);
      assertEquals(status.refused, []);
    } finally {
      await stopPeers(replica, master).finally(() => proxy.close());
    }
  });
});
