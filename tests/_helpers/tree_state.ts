/**
 * Trees compared by content hash and mode: what two folders hold, how they differ, and a
 * poll until they match.
 *
 * @module
 */
import { sha256Hex } from "../../lib/cas/mod.ts";
import { isMissing } from "../../lib/disk/mod.ts";
import { waitFor } from "./wait_for.ts";

/** Something whose recent logs explain a failure (a peer process). */
export interface LogSource {
  readonly name: string;
  logs(): string;
}

/** Whether a file-system error means the tree changed while it was read. */
function changedWhileRead(error: unknown): boolean {
  return isMissing(error) || error instanceof Deno.errors.IsADirectory;
}

/** The state of a file or link (`"<mode> <hash>"` or `"link <hash>"`), `undefined` for anything else. */
async function entryState(absolute: string, entry: Deno.DirEntry): Promise<string | undefined> {
  if (entry.isSymlink) {
    return `link ${sha256Hex(new TextEncoder().encode(await Deno.readLink(absolute)))}`;
  }
  if (!entry.isFile) return undefined;
  const info = await Deno.lstat(absolute);
  const mode = ((info.mode ?? 0) & 0o7777).toString(8);
  return `${mode} ${sha256Hex(await Deno.readFile(absolute))}`;
}

/**
 * Every file and link under `root` (Chronicle's data folder and temp files left out), as
 * `path → "mode hash"`; with `folders`, every folder too, as `path → "dir mode"`.
 */
export async function treeState(
  root: string,
  exclude: string[] = [],
  folders = false,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (dir: string, prefix: string) => {
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(dir));
    } catch (error) {
      // Changed while we looked (a folder turned into a file): the next look sees it.
      if (changedWhileRead(error)) return;
      throw error;
    }
    for (const entry of entries) {
      const path = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
      if (path === ".chronicle" || entry.name.endsWith(".chronicle-tmp")) continue;
      if (exclude.some((e) => path === e || path.startsWith(e + "/"))) continue;
      const absolute = `${dir}/${entry.name}`;
      try {
        if (entry.isDirectory) {
          if (folders) {
            const mode = ((await Deno.lstat(absolute)).mode ?? 0) & 0o7777;
            out.set(path, `dir ${mode.toString(8)}`);
          }
          await walk(absolute, path);
          continue;
        }
        const state = await entryState(absolute, entry);
        if (state !== undefined) out.set(path, state);
      } catch (error) {
        if (!changedWhileRead(error)) throw error;
      }
    }
  };
  await walk(root, "");
  return out;
}

/** Whether two trees hold the same paths in the same states. */
function sameTree(a: Map<string, string>, b: Map<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [path, state] of a) if (b.get(path) !== state) return false;
  return true;
}

/** A readable account of how two trees differ (at most 20 paths). */
export function describeDifference(a: Map<string, string>, b: Map<string, string>): string {
  const lines: string[] = [];
  for (const [path, state] of a) {
    if (b.get(path) !== state) lines.push(`${path}: ${state} vs ${b.get(path) ?? "absent"}`);
  }
  for (const path of b.keys()) if (!a.has(path)) lines.push(`${path}: absent vs ${b.get(path)}`);
  return lines.length === 0
    ? "identical"
    : lines.slice(0, 20).join("\n") + (lines.length > 20 ? `\n… ${lines.length - 20} more` : "");
}

/** Options for {@linkcode waitForSameTrees}. */
export interface SameTreesOptions {
  /** Give up after this long. @default {20000} */
  timeoutMs?: number;
  /** Whose logs to add to the failure. */
  peers?: LogSource[];
  /** Paths (and everything under them) left out of the comparison. */
  exclude?: string[];
  /** Compare folders too (each one's presence and mode). @default {false} */
  folders?: boolean;
}

/**
 * Polls until every tree equals the first (by content hash and mode), failing with the
 * difference and the peers' logs after `timeoutMs`.
 */
export async function waitForSameTrees(
  roots: string[],
  options: SameTreesOptions = {},
): Promise<Map<string, string>> {
  let states: Map<string, string>[] = [];
  let different = -1;
  try {
    return await waitFor("the trees to match", async () => {
      states = await Promise.all(
        roots.map((root) => treeState(root, options.exclude, options.folders ?? false)),
      );
      different = states.findIndex((state) => !sameTree(states[0]!, state));
      return different === -1 ? states[0] : undefined;
    }, { timeoutMs: options.timeoutMs ?? 20_000, intervalMs: 50 });
  } catch (error) {
    if (different === -1) throw error; // no tree could be read
    const logs = (options.peers ?? []).map((p) => `--- ${p.name} ---\n${p.logs()}`).join("\n");
    // The wait's own error last: a tree that could no longer be read says so there.
    throw new Error(
      `Trees ${roots[0]} and ${roots[different]} still differ:\n${
        describeDifference(states[0]!, states[different]!)
      }\n${logs}\n${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
