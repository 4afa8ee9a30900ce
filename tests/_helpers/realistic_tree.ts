/**
 * A seeded generator of trees shaped like real source checkouts, for tests and
 * benchmarks: many tiny files and a long tail up to several MiB, deep and long paths
 * (`node_modules/@scope/pkg/dist/esm/…`), non-ASCII names, empty files, empty folders,
 * relative symlinks (as `node_modules/.bin` holds) and executables. One seed always
 * builds the same tree, byte for byte.
 *
 * @module
 */
import { Prng } from "./prng.ts";

/** Options for {@linkcode makeRealisticTree}. */
export interface RealisticTreeOptions {
  /** How many regular files (links and empty folders come on top). */
  files: number;
  /** PRNG seed; the same seed builds the same tree. */
  seed: number;
  /**
   * Largest file in bytes: the long tail's end.
   *
   * @default {6291456}
   */
  maxSize?: number;
}

/** One entry of a built tree. */
export interface RealisticEntry {
  /** Path relative to the tree's root, `/`-separated. */
  path: string;
  /** What it is. */
  kind: "file" | "dir" | "symlink";
  /** Bytes of a file, 0 for the others. */
  size: number;
  /** Permission bits (files and folders). */
  mode: number;
  /** A link's target, relative to the link's folder. */
  target?: string;
}

const PACKAGES = [
  "react",
  "lodash",
  "@babel/core",
  "@types/node",
  "typescript",
  "eslint-plugin-import",
  "webpack",
  "@smithy/util-stream",
  "zod",
  "über-utils",
  "日本語-i18n",
];
const PACKAGE_DIRS = ["dist", "dist/esm", "dist/cjs", "lib", "src", "types", "build/internal"];
const SOURCE_DIRS = ["src", "src/components", "src/server/routes", "tests/unit", "docs", "assets"];
const STEMS = ["index", "utils", "parse_options", "client", "résumé", "naïve-cache", "ファイル"];
const TEXT_EXTENSIONS = [".js", ".js", ".ts", ".d.ts", ".map", ".json", ".md", ".css", ".mjs"];
const BINARY_EXTENSIONS = [".png", ".woff2", ".wasm", ".gz"];
const WORDS = ("const let function return import export from await async if else for of new " +
  "this value path module exports require default props state error result options " +
  "= => { } ( ) ; // 0 1 true false null undefined string number").split(" ");

/**
 * How big a file is: most real files are tiny, a few are huge. The bands and their shares
 * follow what a `node_modules` plus a source repository holds.
 */
function pickSize(prng: Prng, maxSize: number): number {
  const roll = prng.next();
  const logUniform = (low: number, high: number) =>
    Math.round(low * Math.pow(high / low, prng.next()));
  if (roll < 0.015) return 0;
  if (roll < 0.42) return logUniform(16, 1024);
  if (roll < 0.83) return logUniform(1024, 8 * 1024);
  if (roll < 0.979) return logUniform(8 * 1024, 64 * 1024);
  if (roll < 0.999) return logUniform(64 * 1024, Math.min(512 * 1024, maxSize));
  return logUniform(Math.min(512 * 1024, maxSize), maxSize);
}

/** A folder for the next file: inside a package (deep), or in the project's own sources. */
function pickFolder(prng: Prng): string {
  if (prng.next() < 0.7) {
    const pkg = PACKAGES[prng.int(PACKAGES.length)]!;
    const nested = prng.next() < 0.2 ? `/node_modules/${PACKAGES[prng.int(PACKAGES.length)]!}` : "";
    const inner = PACKAGE_DIRS[prng.int(PACKAGE_DIRS.length)]!;
    const deeper = prng.next() < 0.3
      ? `/very-long-module-folder-name-${prng.int(6)}/another-level-${prng.int(3)}`
      : "";
    return `node_modules/${pkg}${nested}/${inner}${deeper}`;
  }
  const dir = SOURCE_DIRS[prng.int(SOURCE_DIRS.length)]!;
  return prng.next() < 0.3 ? `${dir}/feature_${prng.int(12)}` : dir;
}

/** Code-like text of exactly `size` bytes, starting with a line naming the file. */
function textOf(prng: Prng, path: string, size: number): Uint8Array {
  const out = new Uint8Array(size);
  const encoder = new TextEncoder();
  let at = encoder.encodeInto(`// ${path}\n`, out).written;
  while (at < size) {
    const words: string[] = [];
    for (let n = 1 + prng.int(10); n > 0; n--) words.push(WORDS[prng.int(WORDS.length)]!);
    at += encoder.encodeInto(`${"  ".repeat(prng.int(4))}${words.join(" ")}\n`, out.subarray(at))
      .written;
  }
  return out;
}

/**
 * Writes a realistic tree under `root` (which must exist; the names it makes must not).
 *
 * @param root The folder to fill.
 * @param options Count, seed and largest size.
 * @returns Every entry written: folders first (parents before children), then files and
 *   links in the order written.
 * @throws {RangeError} When `files` is not a positive integer.
 * @example A small tree
 * ```ts
 * import { ok } from "node:assert/strict";
 * import { makeRealisticTree } from "./realistic_tree.ts";
 *
 * const root = await Deno.makeTempDir();
 * const entries = await makeRealisticTree(root, { files: 50, seed: 1, maxSize: 65536 });
 * ok(entries.some((entry) => entry.kind === "symlink"));
 * await Deno.remove(root, { recursive: true });
 * ```
 */
export async function makeRealisticTree(
  root: string,
  options: RealisticTreeOptions,
): Promise<RealisticEntry[]> {
  if (!Number.isInteger(options.files) || options.files < 1) {
    throw new RangeError(`File count "${options.files}" must be a positive integer`);
  }
  const prng = new Prng(options.seed);
  const maxSize = options.maxSize ?? 6 * 1024 * 1024;
  const folders = new Set<string>();
  const entries: RealisticEntry[] = [];
  const files: RealisticEntry[] = [];
  const ensureFolder = async (folder: string) => {
    const parts = folder.split("/");
    for (let i = 1; i <= parts.length; i++) {
      const path = parts.slice(0, i).join("/");
      if (folders.has(path)) continue;
      folders.add(path);
      await Deno.mkdir(`${root}/${path}`);
      entries.push({ path, kind: "dir", size: 0, mode: 0o755 });
    }
  };
  for (let i = 0; i < options.files; i++) {
    const folder = pickFolder(prng);
    await ensureFolder(folder);
    const size = pickSize(prng, maxSize);
    const binary = size > 0 && prng.next() < 0.12;
    const extensions = binary ? BINARY_EXTENSIONS : TEXT_EXTENSIONS;
    const stem = STEMS[prng.int(STEMS.length)]!;
    const path = `${folder}/${stem}_${i}${extensions[prng.int(extensions.length)]!}`;
    const executable = !binary && prng.next() < 0.02;
    const mode = executable ? 0o755 : 0o644;
    const bytes = binary ? prng.bytes(size) : textOf(prng, path, size);
    await Deno.writeFile(`${root}/${path}`, bytes, { mode, createNew: true });
    await Deno.chmod(`${root}/${path}`, mode); // the umask may have taken bits away
    const entry: RealisticEntry = { path, kind: "file", size: bytes.length, mode };
    entries.push(entry);
    files.push(entry);
  }
  // Links as `node_modules/.bin` holds them: relative, to a file inside the tree.
  const links = Math.max(1, Math.round(options.files / 200));
  await ensureFolder("node_modules/.bin");
  for (let i = 0; i < links; i++) {
    const file = files[prng.int(files.length)]!;
    const path = `node_modules/.bin/tool-${i}`;
    const target = `../${file.path.slice("node_modules/".length)}`;
    const linked = file.path.startsWith("node_modules/") ? target : `../../${file.path}`;
    await Deno.symlink(linked, `${root}/${path}`);
    entries.push({ path, kind: "symlink", size: 0, mode: 0o777, target: linked });
  }
  // Empty folders, as build outputs and caches leave them.
  const empty = Math.max(1, Math.round(options.files / 100));
  for (let i = 0; i < empty; i++) await ensureFolder(`${pickFolder(prng)}/empty-${i}`);
  return entries;
}
