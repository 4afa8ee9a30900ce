import { parse } from "yaml";
import { errorMessage } from "../log/mod.ts";
import type { SnapshotConfig } from "./types.ts";

/** Retention when nothing is configured: 100 snapshots, 30 days. */
export const DEFAULT_SNAPSHOT_CONFIG: Readonly<SnapshotConfig> = Object.freeze({
  maxSnapshots: 100,
  maxAgeDays: 30,
});

/** The largest `max_snapshots` accepted. */
export const MAX_SNAPSHOTS_LIMIT = 1_000_000;
/** The largest `max_age_days` accepted (100 years). */
export const MAX_AGE_DAYS_LIMIT = 36_500;

/** Retention settings as written in `config.yaml` or given as flags (snake_case, unchecked). */
export interface RawSnapshotConfig {
  /** Most snapshots kept, as written in the configuration. */
  max_snapshots?: unknown;
  /** Most days a snapshot is kept, as written in the configuration. */
  max_age_days?: unknown;
}

/** Options for {@linkcode loadSnapshotConfig}. */
export interface LoadSnapshotConfigOptions {
  /** A `config.yaml` to read the `chronicle:` section from. */
  file?: string | undefined;
  /** Whether a missing `file` is an error (true when the user named it). @default {false} */
  required?: boolean;
  /** Values that win over the file, e.g. from `--max-snapshots` (strings of digits allowed). */
  overrides?: RawSnapshotConfig;
}

/**
 * Checks retention settings and fills in defaults. Unknown keys are left for other readers
 * of the same section.
 *
 * @param raw The `chronicle:` section (or flags), snake_case.
 * @param source Where the values came from, for messages (e.g. a file name).
 * @param base Values used where `raw` gives none. @default {DEFAULT_SNAPSHOT_CONFIG}
 * @returns A checked configuration.
 * @throws {RangeError} When a value is not an integer in its range.
 * @throws {TypeError} When the section is not a mapping.
 *
 * @example
 * ```ts
 * import { validateSnapshotConfig } from "./config.ts";
 * const config = validateSnapshotConfig({ max_snapshots: 10 }, "flags");
 * if (config.maxSnapshots !== 10 || config.maxAgeDays !== 30) throw new Error("wrong");
 * ```
 */
export function validateSnapshotConfig(
  raw: unknown,
  source: string,
  base: SnapshotConfig = DEFAULT_SNAPSHOT_CONFIG,
): SnapshotConfig {
  if (raw === undefined || raw === null) return { ...base };
  if (typeof raw !== "object" || Array.isArray(raw)) {
    throw new TypeError(`The "chronicle" section of ${source} must be a mapping`);
  }
  const section = raw as RawSnapshotConfig;
  return {
    maxSnapshots: integerSetting(
      section.max_snapshots,
      "max_snapshots",
      MAX_SNAPSHOTS_LIMIT,
      source,
      base.maxSnapshots,
    ),
    maxAgeDays: integerSetting(
      section.max_age_days,
      "max_age_days",
      MAX_AGE_DAYS_LIMIT,
      source,
      base.maxAgeDays,
    ),
  };
}

/**
 * Reads retention settings from the `chronicle:` section of YAML text.
 *
 * @param text The YAML document.
 * @param source Its name, for messages.
 * @returns A checked configuration.
 * @throws {SyntaxError} When the text is not YAML.
 * @throws {RangeError} When a value is out of range.
 */
export function parseSnapshotConfig(text: string, source: string): SnapshotConfig {
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    const reason = errorMessage(error).split("\n")[0];
    throw new SyntaxError(`Cannot read ${source}: ${reason}`);
  }
  if (document === undefined || document === null) return { ...DEFAULT_SNAPSHOT_CONFIG };
  if (typeof document !== "object" || Array.isArray(document)) {
    throw new TypeError(`${source} must hold a mapping at its top level`);
  }
  return validateSnapshotConfig((document as Record<string, unknown>).chronicle, source);
}

/**
 * Loads retention settings: defaults, then the file's `chronicle:` section, then overrides.
 *
 * @param options The file and the overrides.
 * @returns A checked configuration.
 * @throws {Error} When a required file is missing or the file cannot be read.
 * @throws {RangeError} When a value is out of range.
 */
export async function loadSnapshotConfig(
  options: LoadSnapshotConfigOptions = {},
): Promise<SnapshotConfig> {
  let config: SnapshotConfig = { ...DEFAULT_SNAPSHOT_CONFIG };
  if (options.file !== undefined) {
    let text: string | undefined;
    try {
      text = await Deno.readTextFile(options.file);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound) || options.required) {
        const reason = error instanceof Deno.errors.NotFound
          ? "no such file"
          : error instanceof Error
          ? error.message
          : String(error);
        throw new Error(`Cannot read configuration "${options.file}": ${reason}`, {
          cause: error,
        });
      }
    }
    if (text !== undefined) config = parseSnapshotConfig(text, `"${options.file}"`);
  }
  if (options.overrides) config = validateSnapshotConfig(options.overrides, "flags", config);
  return config;
}

function integerSetting(
  value: unknown,
  name: string,
  max: number,
  source: string,
  fallback: number,
): number {
  if (value === undefined || value === null) return fallback;
  const number = typeof value === "string" && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof number !== "number" || !Number.isSafeInteger(number) || number < 1 || number > max) {
    const shown = typeof value === "string" ? `"${value}"` : String(value);
    throw new RangeError(
      `"${name}" in ${source} must be a whole number from 1 to ${max}, not ${shown}`,
    );
  }
  return number;
}
