/**
 * Builds realistic source-like trees for benchmarks: nested folders, mostly text files
 * with some binary ones, sizes spread from a few bytes to ~64 KiB, all from a seed so that
 * two trees built with one seed are byte-for-byte identical.
 *
 * @module
 */
import { Prng } from "./prng.ts";

/** Options for {@linkcode makeTree}. */
export interface TreeOptions {
  /** How many files. */
  files: number;
  /** PRNG seed; the same seed builds the same tree. */
  seed: number;
  /** Largest file size in bytes. @default {65536} */
  maxSize?: number;
  /** Smallest file size in bytes. @default {8} */
  minSize?: number;
  /**
   * How sizes spread between `minSize` and `maxSize`: `log` (log-uniform: most files
   * small, a few large, as in a source tree) or `uniform` (every size as likely, as the
   * issue's "100,000 files of 200 B–6 KB" measured).
   * @default {"log"}
   */
  sizes?: "log" | "uniform";
}

/** One file of a built tree. */
export interface TreeFile {
  /** Path relative to the tree's root, `/`-separated. */
  path: string;
  /** Size in bytes. */
  size: number;
}

const TOP = ["src", "lib", "tests", "docs", "assets", "scripts", "packages", "tools"];
const WORDS = [
  "const",
  "let",
  "function",
  "return",
  "import",
  "export",
  "from",
  "await",
  "async",
  "if",
  "else",
  "for",
  "of",
  "new",
  "this",
  "value",
  "path",
  "store",
  "hash",
  "size",
  "error",
  "result",
  "options",
  "config",
  "=",
  "=>",
  "{",
  "}",
  "(",
  ")",
  ";",
  "//",
  "0",
  "1",
  "true",
  "false",
  "null",
  "string",
  "number",
];
const EXTENSIONS = [".ts", ".ts", ".ts", ".md", ".json", ".tsx", ".css", ".txt"];
/** Share of files holding incompressible bytes (images, archives) instead of text. */
const BINARY_SHARE = 0.1;

/**
 * Writes a tree under `root` (which must exist and be empty of the names it makes).
 * Sizes are log-uniform (or uniform, see {@linkcode TreeOptions.sizes}) between `minSize`
 * and `maxSize`, so by default most files are small and a few are large, as in a source
 * tree; about one file in ten is incompressible bytes.
 *
 * @param root The folder to fill.
 * @param options Count, seed and largest size.
 * @returns The files written, in the order written.
 * @throws {RangeError} When `files` is not a positive integer, or `minSize` exceeds `maxSize`.
 */
export async function makeTree(root: string, options: TreeOptions): Promise<TreeFile[]> {
  if (!Number.isInteger(options.files) || options.files < 1) {
    throw new RangeError(`File count "${options.files}" must be a positive integer`);
  }
  const prng = new Prng(options.seed);
  const maxSize = options.maxSize ?? 65536;
  const minSize = options.minSize ?? 8;
  if (!(minSize >= 1 && minSize <= maxSize)) {
    throw new RangeError(`Smallest size "${minSize}" must be between 1 and "${maxSize}"`);
  }
  const sizeOf = options.sizes === "uniform"
    ? () => minSize + prng.int(maxSize - minSize + 1)
    : () => Math.round(minSize * Math.pow(maxSize / minSize, prng.next()));
  const corpus = textCorpus(prng, Math.max(maxSize * 4, 256 * 1024));
  const folders = makeFolders(prng, Math.max(1, Math.round(options.files / 16)));
  for (const folder of folders) await Deno.mkdir(`${root}/${folder}`, { recursive: true });
  const files: TreeFile[] = [];
  for (let i = 0; i < options.files; i++) {
    const folder = folders[prng.int(folders.length)]!;
    const binary = prng.next() < BINARY_SHARE;
    const ext = binary ? ".bin" : EXTENSIONS[prng.int(EXTENSIONS.length)]!;
    const path = `${folder}/file_${i}${ext}`;
    const size = sizeOf();
    const bytes = binary ? prng.bytes(size) : textOf(prng, corpus, path, size);
    await Deno.writeFile(`${root}/${path}`, bytes);
    files.push({ path, size: bytes.length });
  }
  return files;
}

/** Folders one to four levels deep under a few top-level names. */
function makeFolders(prng: Prng, count: number): string[] {
  const folders: string[] = [];
  for (let i = 0; i < count; i++) {
    const parent = folders.length > 0 && prng.next() < 0.7
      ? folders[prng.int(folders.length)]!
      : TOP[prng.int(TOP.length)]!;
    const depth = parent.split("/").length;
    folders.push(depth >= 4 ? `${TOP[prng.int(TOP.length)]!}/d${i}` : `${parent}/d${i}`);
  }
  return folders;
}

/** Lines of code-like words, to slice file contents from. */
function textCorpus(prng: Prng, length: number): Uint8Array {
  const parts: string[] = [];
  let total = 0;
  while (total < length) {
    const words: string[] = [];
    const indent = "  ".repeat(prng.int(4));
    for (let n = 1 + prng.int(10); n > 0; n--) words.push(WORDS[prng.int(WORDS.length)]!);
    const line = `${indent}${words.join(" ")}\n`;
    parts.push(line);
    total += line.length;
  }
  return new TextEncoder().encode(parts.join(""));
}

/** A file's text: a header naming it (so no two files are equal), then corpus lines. */
function textOf(prng: Prng, corpus: Uint8Array, path: string, size: number): Uint8Array {
  const header = new TextEncoder().encode(`// ${path}\n`);
  const out = new Uint8Array(Math.max(size, header.length));
  out.set(header.subarray(0, out.length));
  const rest = out.length - header.length;
  if (rest > 0) {
    const from = prng.int(corpus.length - rest);
    out.set(corpus.subarray(from, from + rest), header.length);
  }
  return out;
}
