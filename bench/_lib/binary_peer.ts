/**
 * Chronicle's test runners started as the binaries run, for the benchmarks that time them.
 *
 * @module
 */
import { Peer } from "../../tests/replication/_harness.ts";
import { BINARY_V8_FLAGS } from "../../lib/cli/mod.ts";

/**
 * Starts a test runner (`tests/replication/_master.ts`, `_replica.ts`) as the binaries run:
 * with their V8 flags (`BINARY_V8_FLAGS`), which change how much memory V8 keeps and how
 * often it collects.
 *
 * @param name For its log lines.
 * @param script The runner, in `tests/replication`.
 * @param args The runner's flags.
 * @param denoFlags More `deno run` flags (a profiler's).
 * @returns The running peer.
 */
export function startBinaryPeer(
  name: string,
  script: string,
  args: string[],
  denoFlags: readonly string[] = [],
): Promise<Peer> {
  return Peer.start(name, script, args, [...BINARY_V8_FLAGS, ...denoFlags]);
}
