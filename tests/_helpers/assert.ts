/**
 * Small assertions shared by the test suites (jsr:@std/assert is unreachable here), built on
 * `node:assert` so that failures print a diff.
 *
 * @module
 */
import nodeAssert from "node:assert/strict";

// deno-lint-ignore no-explicit-any -- any error constructor, whatever its parameters
type ErrorClass<E> = new (...args: any[]) => E;

/** Fails unless `condition` is truthy. */
export function assert(condition: unknown, message = "Assertion failed"): asserts condition {
  if (!condition) throw new Error(message);
}

/** Deep strict equality with a diff on failure. */
export function assertEquals<T>(actual: T, expected: T, message?: string): void {
  nodeAssert.deepStrictEqual(actual, expected, message);
}

/** Checks a caught error's class and message. */
function check<E extends Error>(error: unknown, errorClass?: ErrorClass<E>, includes?: string): E {
  if (errorClass && !(error instanceof errorClass)) {
    throw new Error(`Expected ${errorClass.name}, got ${String(error)}`);
  }
  if (includes && !(error as Error).message.includes(includes)) {
    throw new Error(`Expected message to include "${includes}", got "${(error as Error).message}"`);
  }
  return error as E;
}

/** Calls `fn` and returns the error it throws, checking its class and message. */
export function assertThrows<E extends Error = Error>(
  fn: () => unknown,
  errorClass?: ErrorClass<E>,
  includes?: string,
): E {
  try {
    fn();
  } catch (error) {
    return check(error, errorClass, includes);
  }
  throw new Error("Expected an exception, but none was thrown");
}

/** Awaits `fn` and returns the error it rejects with, checking its class and message. */
export async function assertRejects<E extends Error = Error>(
  fn: () => Promise<unknown>,
  errorClass?: ErrorClass<E>,
  includes?: string,
): Promise<E> {
  try {
    await fn();
  } catch (error) {
    return check(error, errorClass, includes);
  }
  throw new Error("Expected a rejection, but the promise resolved");
}
