/**
 * The random changes of the replication soak (`_soak.ts`), one {@linkcode Changer} per side:
 *
 * - in the side's own part of the tree (the paths under the two-level folders it owns, by
 *   a hash of their names), files written, edited, chmodded, removed and renamed, links
 *   made, folders made, chmodded, removed with all they hold and renamed, each mirrored in
 *   a model of the tree, so the outcome there is known;
 * - in `contested/`, which both sides change, the same kinds of changes on the same few
 *   paths, read from the disk as it is (the other side's changes arrive there), so that
 *   both sides write, remove and rename the same path between syncs: conflicts.
 *
 * Every content written is recorded ({@linkcode Written}) for the rule that no write is
 * lost. A side never destroys its own write before its store has captured it (the
 * capture's debounce would lose it, and no replication could bring it back): before an
 * overwrite, a removal or a rename of a path holding such a write, it waits for the
 * capture ({@linkcode Captures}).
 *
 * @module
 */
import { sha256Hex } from "../../lib/cas/mod.ts";
import type { Iteration } from "../../lib/store/mod.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import type { Peer } from "./_harness.ts";
import { Prng } from "../_helpers/prng.ts";

/** The folder both sides change. */
export const CONTESTED = "contested";
/** One write in ten is this large at least (the rest under 3,000 bytes)... */
const LARGE_WRITE_MIN = 20_000;
/** ...and at most this much larger... */
const LARGE_WRITE_SPREAD = 100_000;
/**
 * ...and one of those in five this many times as large (120 KB to 720 KB): more than some
 * connections through the relay carry, so a sandbox's write goes back in pieces.
 */
const HUGE_WRITE_FACTOR = 6;
const CONTESTED_FOLDERS = [`${CONTESTED}/d0`, `${CONTESTED}/d1`, `${CONTESTED}/d2`];
const CONTESTED_FILES = [
  ...[0, 1, 2, 3, 4].map((i) => `${CONTESTED}/f${i}.txt`),
  ...CONTESTED_FOLDERS.flatMap((folder) => [`${folder}/a.txt`, `${folder}/b-ü.txt`]),
];

/** Every content either side wrote: its hash → who wrote it where. */
export type Written = Map<string, string>;

/** Which side changes the paths under a two-level folder: its name's hash decides. */
export function ownerOf(path: string): 0 | 1 {
  const unit = path.split("/").slice(0, 2).join("/");
  let hash = 7;
  for (let i = 0; i < unit.length; i++) hash = (hash * 31 + unit.charCodeAt(i)) >>> 0;
  return (hash % 2) as 0 | 1;
}

/** Whether `path` is `folder` or inside it. */
function within(path: string, folder: string): boolean {
  return path === folder || path.startsWith(`${folder}/`);
}

/** A side's writes its own store has not captured yet, and the wait for their capture. */
export class Captures {
  readonly #peer: () => Peer | null;
  readonly #pending = new Map<string, string>();

  /** @param peer The side's running peer, `null` while it is stopped. */
  constructor(peer: () => Peer | null) {
    this.#peer = peer;
  }

  /** Notes a write of `hash` at `path`. */
  add(path: string, hash: string): void {
    this.#pending.set(hash, path);
  }

  /**
   * Makes it safe to destroy `path` (and what it holds): waits until the side's store
   * holds every pending write when one is there.
   *
   * @returns `false` when one is there and the side is stopped (leave `path` alone).
   */
  async clear(path: string): Promise<boolean> {
    if (![...this.#pending.values()].some((pending) => within(pending, path))) return true;
    return await this.flush();
  }

  /**
   * Waits until the side's store holds every pending write.
   *
   * @returns `false` when some are pending and the side is stopped.
   */
  async flush(): Promise<boolean> {
    if (this.#pending.size === 0) return true;
    const peer = this.#peer();
    if (peer === null) return false;
    let missing: string[] = [];
    await waitFor(`${peer.name} to capture its own writes`, async () => {
      missing = await peer.command<string[]>(`missing ${[...this.#pending.keys()].join(" ")}`);
      return missing.length === 0;
    }, { timeoutMs: 60_000 }).catch(async (error) => {
      const lost = missing.map((hash) => `"${this.#pending.get(hash)}" (${hash.slice(0, 12)})`);
      // What the side recorded at those paths instead.
      const histories: string[] = [];
      for (const path of new Set(missing.map((hash) => this.#pending.get(hash)!))) {
        const history = await peer.command<Iteration[]>(`history ${path}`).catch(() => []);
        histories.push(`${peer.name} history of "${path}":`);
        for (const it of history) {
          histories.push(
            `  #${it.iteration} seq ${it.sequence} ${it.origin} ${
              it.deleted ? "deleted" : `${it.mode.toString(8)} ${it.hash.slice(0, 12)}`
            }`,
          );
        }
      }
      throw new Error(
        `${error.message}: ${lost.join(", ")}\n${
          histories.join("\n")
        }\n--- ${peer.name} ---\n${peer.logs()}`,
      );
    });
    this.#pending.clear();
    return true;
  }
}

/** Counts of what a side did. */
export type Kinds = Map<string, number>;

/** One side's random changes (see the module documentation). */
export class Changer {
  readonly #root: string;
  readonly #side: 0 | 1;
  readonly #model: Map<string, string>;
  readonly #prng: Prng;
  readonly #written: Written;
  readonly #captures: Captures;
  #made = 0;
  /** How many changes of each kind were made. */
  readonly kinds: Kinds = new Map();

  /**
   * @param root The side's workspace.
   * @param side 0 for the master, 1 for the replica.
   * @param model The expected state of the tree outside `contested/` (`treeState`'s form).
   * @param written Where every content written is recorded.
   * @param captures The side's pending captures.
   * @param seed This side's seed.
   */
  constructor(
    root: string,
    side: 0 | 1,
    model: Map<string, string>,
    written: Written,
    captures: Captures,
    seed: number,
  ) {
    this.#root = root;
    this.#side = side;
    this.#model = model;
    this.#written = written;
    this.#captures = captures;
    this.#prng = new Prng(seed);
  }

  /** Makes `count` changes, the share `contested` of them (0 to 1) in `contested/`. */
  async steps(count: number, contested: number): Promise<void> {
    for (let made = 0; made < count;) {
      const step = this.#prng.next() < contested ? this.#contested() : this.#own();
      if (await step) made++;
    }
  }

  /** Waits until this side's store holds every content it wrote (see {@linkcode Captures}). */
  async captured(): Promise<void> {
    await this.#captures.flush();
  }

  /** Writes a conflicting version of `contested/both.txt` (both sides do, between syncs). */
  async writeBoth(): Promise<void> {
    await this.#writeShared(`${CONTESTED}/both.txt`, 0o644);
    this.#did("contested: same write on both");
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

  /** New content, never written before by anyone (a unique first line). */
  #content(): Uint8Array {
    const roll = this.#prng.next();
    const size = roll < 0.1
      ? (LARGE_WRITE_MIN + this.#prng.int(LARGE_WRITE_SPREAD)) *
        (roll < 0.02 ? HUGE_WRITE_FACTOR : 1)
      : this.#prng.int(3000);
    const head = new TextEncoder().encode(`side ${this.#side} write ${this.#made++}\n`);
    const bytes = new Uint8Array(head.length + size);
    bytes.set(head);
    bytes.set(this.#prng.bytes(size), head.length);
    return bytes;
  }

  /** Writes new content at `path`, records it; `false` when the write could not be made. */
  async #writeFile(path: string, mode: number): Promise<boolean> {
    const bytes = this.#content();
    const hash = sha256Hex(bytes);
    try {
      await Deno.writeFile(`${this.#root}/${path}`, bytes, { mode });
    } catch (error) {
      if (path.startsWith(`${CONTESTED}/`) && raced(error)) return false;
      throw error;
    }
    this.#written.set(hash, `side ${this.#side} at "${path}"`);
    this.#captures.add(path, hash);
    try {
      await Deno.chmod(`${this.#root}/${path}`, mode);
    } catch (error) {
      if (!path.startsWith(`${CONTESTED}/`) || !raced(error)) throw error;
    }
    if (!path.startsWith(`${CONTESTED}/`)) this.#model.set(path, `${mode.toString(8)} ${hash}`);
    return true;
  }

  /** Moves `from` (and all it holds) to `to` on disk and in the model. */
  async #rename(from: string, to: string): Promise<void> {
    await Deno.rename(`${this.#root}/${from}`, `${this.#root}/${to}`);
    for (const [path, state] of [...this.#model]) {
      if (!within(path, from)) continue;
      this.#model.delete(path);
      this.#model.set(to + path.slice(from.length), state);
    }
  }

  /** Removes `path` and all it holds, on disk and in the model. */
  async #remove(path: string): Promise<void> {
    await Deno.remove(`${this.#root}/${path}`, { recursive: true });
    for (const known of [...this.#model.keys()]) if (within(known, path)) this.#model.delete(known);
  }

  /** Makes one random change in this side's part; `false` when there was nothing to do. */
  async #own(): Promise<boolean> {
    const roll = this.#prng.int(11);
    const file = this.#pick(this.#mine("file"));
    const dir = this.#pick(this.#mine("dir"));
    const clear = (path: string | undefined) =>
      path === undefined ? Promise.resolve(false) : this.#captures.clear(path);
    switch (roll) {
      case 0:
      case 1: // a new file
        await this.#writeFile(`${this.#folder()}/${this.#name("new")}.txt`, 0o644);
        return this.#did("new file");
      case 2: // an edit, sometimes making it executable
        if (!await clear(file)) return false;
        await this.#writeFile(file!, this.#prng.next() < 0.2 ? 0o755 : 0o644);
        return this.#did("edit");
      case 3: // a removed file
        if (!await clear(file)) return false;
        await this.#remove(file!);
        return this.#did("remove file");
      case 4: // a renamed file, into another folder of this side's part
        if (!await clear(file)) return false;
        await this.#rename(file!, `${this.#folder()}/${this.#name("moved")}.txt`);
        return this.#did("rename file");
      case 5: { // a new folder, empty or with one level in it
        const path = `${this.#folder()}/${this.#name("dir")}`;
        const folders = this.#prng.next() < 0.5 ? [path, `${path}/inner`] : [path];
        for (const folder of folders) {
          await Deno.mkdir(`${this.#root}/${folder}`);
          await Deno.chmod(`${this.#root}/${folder}`, 0o755);
          this.#model.set(folder, "dir 755");
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
      case 7: // a folder removed with everything in it
        if (!await clear(dir)) return false;
        await this.#remove(dir!);
        return this.#did("remove folder");
      case 8: { // a folder renamed (moved under a folder that is not inside it)
        const target = this.#folder();
        if (!dir || within(target, dir) || !await clear(dir)) return false;
        await this.#rename(dir, `${target}/${this.#name("renamed")}`);
        return this.#did("rename folder");
      }
      case 9: { // a relative link to a sibling (existing or not), never out of the workspace
        const folder = this.#folder();
        const path = `${folder}/${this.#name("link")}`;
        const target = this.#prng.next() < 0.7
          ? this.#pick(this.#mine("file").filter((f) => f.startsWith(`${folder}/`)))
            ?.slice(folder.length + 1) ?? "dangling"
          : "dangling";
        await Deno.symlink(target, `${this.#root}/${path}`);
        const hash = sha256Hex(new TextEncoder().encode(target));
        this.#model.set(path, `link ${hash}`);
        return this.#did("new link");
      }
      default: { // a file replaced by a folder, or a folder by a file
        if (this.#prng.next() < 0.5 && file) {
          if (!await clear(file)) return false;
          await this.#remove(file);
          await Deno.mkdir(`${this.#root}/${file}`);
          await Deno.chmod(`${this.#root}/${file}`, 0o755);
          this.#model.set(file, "dir 755");
          return this.#did("file to folder");
        }
        if (!await clear(dir)) return false;
        await this.#remove(dir!);
        await this.#writeFile(dir!, 0o644);
        return this.#did("folder to file");
      }
    }
  }

  /** Writes `path` in `contested/`, its folder made when missing. */
  async #writeShared(path: string, mode: number): Promise<boolean> {
    if (!await this.#captures.clear(path)) return false;
    try {
      await Deno.mkdir(`${this.#root}/${path.slice(0, path.lastIndexOf("/"))}`, {
        recursive: true,
      });
    } catch (error) {
      if (raced(error)) return false;
      throw error;
    }
    return await this.#writeFile(path, mode);
  }

  /**
   * Makes one random change to a path of `contested/` as the disk holds it now; `false` when
   * there was nothing to do or the other side's change got there first.
   */
  async #contested(): Promise<boolean> {
    const file = this.#pick(CONTESTED_FILES)!;
    const other = this.#pick(CONTESTED_FILES)!;
    const folder = this.#pick(CONTESTED_FOLDERS)!;
    const otherFolder = this.#pick(CONTESTED_FOLDERS)!;
    const at = (path: string) => `${this.#root}/${path}`;
    try {
      switch (this.#prng.int(8)) {
        case 0:
        case 1: // the same files written by both sides
          if (!await this.#writeShared(file, this.#prng.next() < 0.2 ? 0o755 : 0o644)) return false;
          return this.#did("contested: write");
        case 2: // removed
          if (!await this.#captures.clear(file)) return false;
          await Deno.remove(at(file));
          return this.#did("contested: remove file");
        case 3: // renamed over another (or to a free name)
          if (file === other || !await this.#captures.clear(file)) return false;
          if (!await this.#captures.clear(other)) return false;
          await Deno.mkdir(at(other.slice(0, other.lastIndexOf("/"))), { recursive: true });
          await Deno.rename(at(file), at(other));
          return this.#did("contested: rename file");
        case 4: // chmodded
          await Deno.chmod(at(file), this.#prng.next() < 0.5 ? 0o755 : 0o600);
          return this.#did("contested: chmod file");
        case 5: // a folder removed with all it holds
          if (!await this.#captures.clear(folder)) return false;
          await Deno.remove(at(folder), { recursive: true });
          return this.#did("contested: remove folder");
        case 6: // a folder renamed onto a free name
          if (folder === otherFolder || !await this.#captures.clear(folder)) return false;
          if (!await this.#captures.clear(otherFolder)) return false;
          await Deno.rename(at(folder), at(otherFolder));
          return this.#did("contested: rename folder");
        default: // a folder made, or its mode
          await Deno.mkdir(at(folder), { recursive: true });
          await Deno.chmod(at(folder), this.#prng.next() < 0.5 ? 0o750 : 0o755);
          return this.#did("contested: folder mode");
      }
    } catch (error) {
      if (raced(error)) return false;
      throw error;
    }
  }

  /** Counts a change of `kind`; `true`, for a step to return. */
  #did(kind: string): true {
    this.kinds.set(kind, (this.kinds.get(kind) ?? 0) + 1);
    return true;
  }
}

/**
 * Whether a failed change in `contested/` met the other side's change (the path gone, a
 * folder there now, a file where a folder was, a folder not empty): a race, not a failure.
 */
function raced(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: string }).code;
  return error instanceof Deno.errors.NotFound || error instanceof Deno.errors.AlreadyExists ||
    error instanceof Deno.errors.NotADirectory || error instanceof Deno.errors.IsADirectory ||
    code === "ENOTEMPTY" || code === "ENOTDIR" || code === "EISDIR" || code === "EEXIST";
}
