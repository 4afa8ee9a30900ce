/**
 * How a benchmark learns whether to run its tiny sizes.
 *
 * @module
 */

/**
 * Tells whether tiny sizes were asked for: `CHRONICLE_BENCH_QUICK=1` in the environment
 * or `--quick` among the arguments.
 *
 * @param args Command-line arguments. @default {Deno.args}
 * @returns `true` for quick mode.
 */
export function quickMode(args: readonly string[] = Deno.args): boolean {
  return Deno.env.get("CHRONICLE_BENCH_QUICK") === "1" || args.includes("--quick");
}
