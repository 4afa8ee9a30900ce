/**
 * Runs every benchmark of `bench/` (`*_bench.ts`, sorted by name), printing a header and
 * the lines of each. A benchmark that throws is reported and the others still run; the
 * runner then exits with status 1.
 *
 * Usage: `deno run -A bench/run.ts [--quick] [--record]`
 *
 * - `--quick`, or `CHRONICLE_BENCH_QUICK=1`: tiny sizes, a few seconds per benchmark (CI).
 * - `--record`: rewrite `bench/RESULTS.md` with the date, the machine and every line (full
 *   sizes only).
 *
 * @module
 */
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  type BenchOutcome,
  describeMachine,
  discoverBenches,
  quickMode,
  renderResults,
  writeTextAtomic,
} from "./_lib/mod.ts";

/** What a benchmark module must export. */
type BenchRun = (quick: boolean) => Promise<string[]>;

const USAGE = "Usage: deno run -A bench/run.ts [--quick] [--record]";

/**
 * Imports and runs one benchmark file, never throwing: a failure becomes the outcome's
 * `error`.
 *
 * @param dir The folder holding it.
 * @param file Its name, e.g. `store_bench.ts`.
 * @param quick Tiny sizes.
 * @returns Its lines, or its error, and how long it took.
 */
export async function runBench(dir: string, file: string, quick: boolean): Promise<BenchOutcome> {
  const name = file.replace(/\.ts$/, "");
  const start = performance.now();
  try {
    const module = await import(pathToFileURL(join(dir, file)).href) as { run?: unknown };
    if (typeof module.run !== "function") {
      throw new TypeError(`"${file}" does not export "run(quick)"`);
    }
    const lines = await (module.run as BenchRun)(quick);
    if (!Array.isArray(lines) || !lines.every((line) => typeof line === "string")) {
      throw new TypeError(`"${file}" run() did not return an array of strings`);
    }
    return { name, lines, ms: performance.now() - start };
  } catch (error) {
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    return { name, lines: [], error: message, ms: performance.now() - start };
  }
}

async function main(args: string[]): Promise<number> {
  const unknown = args.filter((arg) => arg !== "--quick" && arg !== "--record");
  if (unknown.length > 0) {
    console.error(`Unknown argument "${unknown[0]}"\n${USAGE}`);
    return 2;
  }
  const quick = quickMode(args);
  const record = args.includes("--record");
  if (record && quick) {
    console.error(
      "--record needs full sizes: drop --quick and unset CHRONICLE_BENCH_QUICK\n" + USAGE,
    );
    return 2;
  }
  const dir = dirname(fileURLToPath(import.meta.url));
  const files = await discoverBenches(dir);
  const startedAt = new Date();
  const outcomes: BenchOutcome[] = [];
  for (const file of files) {
    console.log(`== ${file.replace(/\.ts$/, "")}${quick ? " (quick)" : ""}`);
    const outcome = await runBench(dir, file, quick);
    for (const line of outcome.lines) console.log(line);
    if (outcome.error !== undefined) console.error(`FAILED: ${outcome.error}`);
    console.log(`-- ${(outcome.ms / 1000).toFixed(1)} s\n`);
    outcomes.push(outcome);
  }
  const failed = outcomes.filter((outcome) => outcome.error !== undefined);
  const total = outcomes.reduce((sum, outcome) => sum + outcome.ms, 0);
  console.log(
    `${outcomes.length} benchmarks, ${failed.length} failed, ${(total / 1000).toFixed(1)} s` +
      (failed.length > 0 ? `: ${failed.map((outcome) => outcome.name).join(", ")}` : ""),
  );
  if (record) {
    const path = join(dir, "RESULTS.md");
    await writeTextAtomic(path, renderResults(outcomes, await describeMachine(), startedAt));
    console.log(`Recorded ${path}`);
  }
  return failed.length > 0 ? 1 : 0;
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
