/**
 * The distance between two words counting insertions, deletions, substitutions and swaps
 * of neighbours (optimal string alignment), so `stauts` is one step from `status`.
 *
 * @param a A word.
 * @param b Another word.
 * @returns The number of edits.
 */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    rows.push(Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  }
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      }
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * The known word nearest to `word`, if one is near enough to be a likely typo: at most one
 * edit for words of up to four letters, two for longer ones; or a word `word` begins.
 *
 * @param word What was typed.
 * @param known The words that exist.
 * @returns The suggestion, or `undefined`.
 *
 * @example
 * ```ts
 * import { strictEqual } from "node:assert/strict";
 * import { nearestWord } from "./suggest.ts";
 * strictEqual(nearestWord("stauts", ["status", "stop"]), "status");
 * ```
 */
export function nearestWord(word: string, known: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  let best: { word: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(lower, candidate);
    if (best === undefined || distance < best.distance) best = { word: candidate, distance };
  }
  const limit = lower.length <= 4 ? 1 : 2;
  if (best !== undefined && best.distance <= limit) return best.word;
  if (lower.length >= 3) return known.find((candidate) => candidate.startsWith(lower));
  return undefined;
}
