import type { ChunkManifest } from "./types.ts";
import { isContentHash } from "./content_hash.ts";

/**
 * Checks that a value is a well-formed chunk manifest whose chunks tile its content: the
 * chunks follow each other from offset 0 with no gap or overlap, each is non-empty with a
 * content hash, and their sizes add up to `total_size`. It does not look at any bytes. Pure.
 *
 * @param value A parsed manifest, typically from the network or a file.
 * @returns `null` when the manifest is sound, else a sentence naming the first problem.
 *
 * @example Checking a manifest
 * ```ts
 * import { manifestProblem } from "./manifest_problem.ts";
 * const chunk = { hash: "ab".repeat(32), offset: 0, size: 10 };
 * const ok = manifestProblem({ total_size: 10, chunk_size: 1048576, chunks: [chunk] });
 * if (ok !== null) throw new Error(ok);
 * ```
 */
export function manifestProblem(value: unknown): string | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return "manifest is not an object";
  }
  const m = value as Partial<Record<keyof ChunkManifest, unknown>>;
  if (!isSize(m.total_size)) return `total_size "${String(m.total_size)}" is not a size`;
  if (!isSize(m.chunk_size)) return `chunk_size "${String(m.chunk_size)}" is not a size`;
  if (!Array.isArray(m.chunks)) return "chunks is not a list";
  let offset = 0;
  for (const [i, ref] of (m.chunks as unknown[]).entries()) {
    if (typeof ref !== "object" || ref === null) return `chunk ${i} is not an object`;
    const r = ref as Record<string, unknown>;
    if (typeof r.hash !== "string" || !isContentHash(r.hash)) {
      return `chunk ${i} hash "${String(r.hash).slice(0, 80)}" is not a content hash`;
    }
    if (!isSize(r.size) || r.size === 0) {
      return `chunk ${i} size "${String(r.size)}" is not positive`;
    }
    if (r.offset !== offset) {
      return `chunk ${i} offset "${
        String(r.offset)
      }" does not follow the previous chunk (expected "${offset}")`;
    }
    offset += r.size;
  }
  if (offset !== m.total_size) {
    return `chunks cover "${offset}" bytes but total_size is "${m.total_size}"`;
  }
  return null;
}

function isSize(n: unknown): n is number {
  return typeof n === "number" && Number.isSafeInteger(n) && n >= 0;
}
