import { merge } from "node-diff3";

/** The outcome of {@linkcode threeWayMerge}. */
export type MergeOutcome =
  | { kind: "clean"; bytes: Uint8Array }
  | { kind: "conflicted"; bytes: Uint8Array }
  | { kind: "binary" };

/** Labels written into conflict markers. */
export const MARKER_LABELS = { local: "local", base: "base", upstream: "upstream" } as const;

/**
 * Merges two text versions against their common base, line by line (diff3). Changes on
 * one side only are taken; overlapping changes become `<<<<<<< local` / `=======` /
 * `>>>>>>> upstream` blocks for a person to edit. Binary content (a NUL byte, or invalid
 * UTF-8) cannot be merged. Pure.
 *
 * @param base The version both sides last agreed on; `null` when there was none (both
 * created the file), which merges against empty.
 */
export function threeWayMerge(
  base: Uint8Array | null,
  local: Uint8Array,
  upstream: Uint8Array,
): MergeOutcome {
  const texts = [base ?? new Uint8Array(), local, upstream].map(asText);
  if (texts.some((text) => text === undefined)) return { kind: "binary" };
  const [baseText, localText, upstreamText] = texts as [string, string, string];
  const result = merge(
    lines(localText),
    lines(baseText),
    lines(upstreamText),
    {
      label: { a: MARKER_LABELS.local, o: MARKER_LABELS.base, b: MARKER_LABELS.upstream },
    } as Parameters<typeof merge>[3],
  );
  const bytes = new TextEncoder().encode(result.result.join("\n"));
  return { kind: result.conflict ? "conflicted" : "clean", bytes };
}

/** Whether merged text still holds conflict markers a person has not resolved. */
export function hasConflictMarkers(bytes: Uint8Array): boolean {
  const text = asText(bytes);
  if (text === undefined) return false;
  return /^<{7} local$/m.test(text) && /^>{7} upstream$/m.test(text);
}

function lines(text: string): string[] {
  return text.split("\n");
}

function asText(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
