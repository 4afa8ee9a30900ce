/**
 * Small assertions for the replication tests (jsr:@std/assert is unreachable here), built
 * on `node:assert` so that failures print a diff.
 *
 * @module
 */
import nodeAssert from "node:assert/strict";

/** Fails unless `condition` is truthy. */
export function assert(condition: unknown, message = "Assertion failed"): asserts condition {
  if (!condition) throw new Error(message);
}

/** Deep strict equality with a diff on failure. */
export function assertEquals<T>(actual: T, expected: T, message?: string): void {
  nodeAssert.deepStrictEqual(actual, expected, message);
}

/** Awaits `fn` and returns the error it rejects with, checking its class and message. */
export async function assertRejects<E extends Error = Error>(
  fn: () => Promise<unknown>,
  // deno-lint-ignore no-explicit-any -- any error constructor, whatever its parameters
  errorClass?: new (...args: any[]) => E,
  includes?: string,
): Promise<E> {
  try {
    await fn();
  } catch (error) {
    if (errorClass && !(error instanceof errorClass)) {
      throw new Error(`Expected ${errorClass.name}, got ${String(error)}`);
    }
    if (includes && !(error as Error).message.includes(includes)) {
      throw new Error(
        `Expected message to include "${includes}", got "${(error as Error).message}"`,
      );
    }
    return error as E;
  }
  throw new Error("Expected a rejection, but the promise resolved");
}
