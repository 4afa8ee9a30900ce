/**
 * Running peer tools (git, rsync, tar, sha256sum) that a benchmark compares against. A
 * peer may be missing: that is reported, never a failure of the benchmark.
 *
 * @module
 */

/** Options for {@linkcode runPeer}. */
export interface RunPeerOptions {
  /** Working folder. @default {the current folder} */
  cwd?: string;
  /** Variables added to the environment. @default {{}} */
  env?: Record<string, string>;
}

/** The line printed in place of a figure when a peer tool is not installed. */
export function peerUnavailable(tool: string): string {
  return `peer unavailable (${tool} is not installed)`;
}

/**
 * Runs a peer tool to completion, discarding its output.
 *
 * @param tool The program, looked up on `PATH`.
 * @param args Its arguments.
 * @param options Working folder and extra environment.
 * @returns `true` once it succeeded, `false` when the tool is not installed.
 * @throws {Error} When it exits with a failure, with its exit code and standard error.
 */
export async function runPeer(
  tool: string,
  args: string[],
  options: RunPeerOptions = {},
): Promise<boolean> {
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command(tool, {
      args,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(options.env === undefined ? {} : { env: options.env }),
    }).output();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
  if (!output.success) {
    const stderr = new TextDecoder().decode(output.stderr).trim();
    throw new Error(
      `Peer "${tool} ${args.join(" ")}" exited with code "${output.code}": ${stderr}`,
    );
  }
  return true;
}

/**
 * Tells whether a peer tool is installed, by running `TOOL --version`.
 *
 * @param tool The program, looked up on `PATH`.
 * @returns `true` when it ran and succeeded.
 */
export async function peerAvailable(tool: string): Promise<boolean> {
  try {
    return await runPeer(tool, ["--version"]);
  } catch {
    return false;
  }
}

/**
 * Flushes every file system's dirty pages (`sync`), so a timed phase does not pay for
 * writes made before it. Does nothing where `sync` is not installed.
 */
export async function syncDisks(): Promise<void> {
  await runPeer("sync", []);
}
