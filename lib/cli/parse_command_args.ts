import { parseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "./errors.ts";
import { errorMessage } from "../log/mod.ts";

type Options = NonNullable<ParseArgsConfig["options"]>;

/**
 * `parseArgs` in strict mode, turning its errors into a {@linkcode UsageError} that names
 * the command, so every command reports bad usage the same way (exit 2).
 */
export function parseCommandArgs<const O extends Options>(
  command: string,
  args: string[],
  options: O,
) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(`chronicle ${command}: ${errorMessage(error)}`);
  }
}

/** Parses a non-negative integer argument or fails with a usage error naming it. */
export function integerArg(name: string, text: string | undefined, min = 0): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < min) {
    throw new UsageError(`Invalid ${name} "${text}": expected an integer >= ${min}`);
  }
  return value;
}
