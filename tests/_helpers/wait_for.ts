import { errorMessage } from "../../lib/log/mod.ts";

/** Options for {@linkcode waitFor}. */
export interface WaitOptions {
  /** Give up after this long. @default {20000} */
  timeoutMs?: number;
  /** Time between checks. @default {20} */
  intervalMs?: number;
}

/**
 * Polls `condition` until it returns a truthy value, never a fixed sleep: tests wait for
 * a state (a sequence reached, a tree's hashes equal), with a generous deadline.
 *
 * @returns The first truthy value.
 * @throws {Error} Naming `what` when the deadline passes, with the last value seen.
 */
export async function waitFor<T>(
  what: string,
  condition: () => T | Promise<T>,
  options: WaitOptions = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  let last: T | undefined;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      last = await condition();
      if (last) return last as NonNullable<T>;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 20));
  }
  const error = lastError === undefined ? "" : `; last error: ${errorMessage(lastError)}`;
  const detail = `${JSON.stringify(last)}${error}`;
  throw new Error(`Timed out waiting for ${what} (last: ${detail})`);
}
