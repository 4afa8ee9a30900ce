import { structuredPatch } from "diff";

/** Options for {@linkcode unifiedDiff}. */
export interface UnifiedDiffOptions {
  /** Name shown for the old side, e.g. `a/notes.md@1`. */
  oldLabel: string;
  /** Name shown for the new side, e.g. `b/notes.md@2`. */
  newLabel: string;
  /**
   * Unchanged lines shown around each change.
   *
   * @default {3}
   */
  context?: number;
}

/** One line of a hunk: `" "` kept, `"-"` removed, `"+"` added, `"\\"` a no-newline marker. */
export interface DiffLine {
  /** What happened to the line. */
  kind: " " | "-" | "+" | "\\";
  /** The line's text without its newline. */
  text: string;
}

/** A run of changes with its context, numbered from 1 as in a unified diff. */
export interface DiffHunk {
  /** First old line of the hunk. */
  oldStart: number;
  /** Old lines the hunk spans. */
  oldLines: number;
  /** First new line of the hunk. */
  newStart: number;
  /** New lines the hunk spans. */
  newLines: number;
  /** The hunk's lines, in order. */
  lines: DiffLine[];
}

/** What {@linkcode unifiedDiff} found. */
export interface TextDiff {
  /** Either side is not text (a NUL byte or invalid UTF-8): no hunks, `text` says so. */
  binary: boolean;
  /** Both sides hold the same bytes. */
  identical: boolean;
  /** Lines added, over every hunk. */
  added: number;
  /** Lines removed, over every hunk. */
  removed: number;
  /** The hunks, for a side-by-side view. */
  hunks: DiffHunk[];
  /** The unified diff as `diff -u` and git print it (empty when identical). */
  text: string;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Decodes `bytes` as text, or returns `null` when they are not text: a NUL byte in the
 * first 8,000 bytes (git's rule) or bytes that are not valid UTF-8.
 *
 * @param bytes The content.
 * @returns The text, or `null` for binary content.
 * @example Text and binary
 * ```ts
 * import { strictEqual } from "node:assert/strict";
 * import { decodeText } from "./unified_diff.ts";
 *
 * strictEqual(decodeText(new TextEncoder().encode("hi\n")), "hi\n");
 * strictEqual(decodeText(new Uint8Array([0, 1, 2])), null);
 * ```
 */
export function decodeText(bytes: Uint8Array): string | null {
  if (bytes.subarray(0, 8000).includes(0)) return null;
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function range(start: number, lines: number): string {
  // A unified diff numbers an empty range by the line before it.
  return lines === 1 ? `${start}` : `${lines === 0 ? start - 1 : start},${lines}`;
}

/**
 * Compares two versions of a file line by line, as `diff -u` does.
 *
 * @param oldBytes The old content.
 * @param newBytes The new content.
 * @param options Labels and context.
 * @returns The hunks and the unified diff text; binary content gives a one-line note.
 * @example A changed line
 * ```ts
 * import { strictEqual } from "node:assert/strict";
 * import { unifiedDiff } from "./unified_diff.ts";
 *
 * const bytes = (s: string) => new TextEncoder().encode(s);
 * const diff = unifiedDiff(bytes("a\nb\n"), bytes("a\nc\n"), { oldLabel: "a/f", newLabel: "b/f" });
 * strictEqual(diff.text, "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n");
 * ```
 */
export function unifiedDiff(
  oldBytes: Uint8Array,
  newBytes: Uint8Array,
  options: UnifiedDiffOptions,
): TextDiff {
  const { oldLabel, newLabel, context = 3 } = options;
  if (sameBytes(oldBytes, newBytes)) {
    return { binary: false, identical: true, added: 0, removed: 0, hunks: [], text: "" };
  }
  const oldText = decodeText(oldBytes);
  const newText = decodeText(newBytes);
  if (oldText === null || newText === null) {
    return {
      binary: true,
      identical: false,
      added: 0,
      removed: 0,
      hunks: [],
      text: `Binary files ${oldLabel} and ${newLabel} differ\n`,
    };
  }
  const patch = structuredPatch(oldLabel, newLabel, oldText, newText, "", "", { context });
  let added = 0;
  let removed = 0;
  const out = [`--- ${oldLabel}`, `+++ ${newLabel}`];
  const hunks = patch.hunks.map((hunk): DiffHunk => {
    out.push(
      `@@ -${range(hunk.oldStart, hunk.oldLines)} +${range(hunk.newStart, hunk.newLines)} @@`,
    );
    const lines = hunk.lines.map((line): DiffLine => {
      out.push(line);
      const kind = line[0] as DiffLine["kind"];
      if (kind === "+") added++;
      if (kind === "-") removed++;
      return { kind, text: line.slice(1) };
    });
    return { ...hunk, lines };
  });
  return { binary: false, identical: false, added, removed, hunks, text: out.join("\n") + "\n" };
}
