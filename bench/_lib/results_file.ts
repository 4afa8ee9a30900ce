/**
 * Rendering and writing `bench/RESULTS.md`: the date, the machine, and each benchmark's
 * printed lines under its own heading.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { type MachineInfo, machineLine } from "./machine.ts";

/** What one benchmark produced in a run. */
export interface BenchOutcome {
  /** Its file's name without `.ts`, e.g. `store_bench`. */
  name: string;
  /** Its printed lines (empty when it failed before returning). */
  lines: string[];
  /** Why it failed; absent when it succeeded. */
  error?: string;
  /** How long it ran, in milliseconds. */
  ms: number;
}

/**
 * Renders the results file.
 *
 * @param outcomes Every benchmark of the run, in the order run.
 * @param machine The machine they ran on.
 * @param date When the run started.
 * @returns Markdown text ending with a newline.
 *
 * @example
 * ```ts
 * import { renderResults } from "./results_file.ts";
 * const text = renderResults(
 *   [{ name: "x_bench", lines: ["x 1 op/s"], ms: 1000 }],
 *   { cpus: 2, memoryBytes: null, cpuModel: null, kernel: "6.1", deno: "Deno 2" },
 *   new Date("2025-01-02T03:04:05Z"),
 * );
 * if (!text.includes("## x_bench (1.0 s)") || !text.includes("2025-01-02 03:04 UTC")) {
 *   throw new Error("heading or date missing");
 * }
 * ```
 */
export function renderResults(outcomes: BenchOutcome[], machine: MachineInfo, date: Date): string {
  const when = `${date.toISOString().slice(0, 10)} ${date.toISOString().slice(11, 16)} UTC`;
  const out = [
    "# Benchmark results",
    "",
    `Recorded ${when} by \`deno run -A bench/run.ts --record\` (full sizes).`,
    "",
    `Machine: ${machineLine(machine)}.`,
    "",
    "Peer tools ran in the same run on the same data; every ratio compares the two figures " +
    "printed beside it. On a small machine shared with other work, figures bound by file " +
    "creation and fsync (scans, per-write latency, every p99) vary up to 2x between runs.",
  ];
  for (const outcome of outcomes) {
    const status = outcome.error === undefined ? "" : ", FAILED";
    out.push("", `## ${outcome.name} (${(outcome.ms / 1000).toFixed(1)} s${status})`, "");
    out.push("```text");
    out.push(...outcome.lines);
    if (outcome.error !== undefined) out.push(`error: ${outcome.error}`);
    out.push("```");
  }
  return out.join("\n") + "\n";
}

/**
 * Replaces a file atomically and durably: a temp file in the same folder is written,
 * fsynced and renamed over `path`, then the folder is fsynced. The temp file is removed
 * on error, and `path` is then untouched.
 *
 * @param path The file to replace.
 * @param text Its new content.
 */
export async function writeTextAtomic(path: string, text: string): Promise<void> {
  const dir = dirname(path);
  const temp = join(dir, `.${crypto.randomUUID()}.tmp`);
  try {
    const file = await Deno.open(temp, { write: true, createNew: true, mode: 0o644 });
    try {
      const bytes = new TextEncoder().encode(text);
      let done = 0;
      while (done < bytes.length) done += await file.write(bytes.subarray(done));
      await file.sync();
    } finally {
      file.close();
    }
    await Deno.rename(temp, path);
  } catch (error) {
    await Deno.remove(temp).catch(() => {/* never made, or already renamed */});
    throw error;
  }
  const folder = await Deno.open(dir, { read: true });
  try {
    await folder.sync();
  } finally {
    folder.close();
  }
}
