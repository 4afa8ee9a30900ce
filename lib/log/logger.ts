/** Severity of a log line. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** Options for {@linkcode configureLogging}. */
export interface LoggingOptions {
  /** `text` for people, `json` for log collectors (one object per line). @default {"text"} */
  format?: "text" | "json";
  /** Only warnings and errors. @default {false} */
  quiet?: boolean;
  /** Include debug lines. @default {false} */
  verbose?: boolean;
}

const ORDER: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };
let format: "text" | "json" = "text";
let threshold: LogLevel = "info";

/** Sets the process-wide log format and level. */
export function configureLogging(options: LoggingOptions): void {
  format = options.format ?? "text";
  threshold = options.quiet ? "warn" : options.verbose ? "debug" : "info";
}

/** Structured fields that accompany a log message. */
export type LogFields = Record<string, unknown>;

/**
 * Writes one log line to stderr. Logging belongs in top-level loops; library code returns
 * errors with context instead.
 */
export function log(level: LogLevel, message: string, fields: LogFields = {}): void {
  if (ORDER[level] < ORDER[threshold]) return;
  const time = new Date().toISOString();
  let line: string;
  if (format === "json") {
    line = JSON.stringify({ time, level, msg: message, ...fields }, jsonSafe);
  } else {
    const extras = Object.entries(fields).map(([key, value]) => `${key}=${textValue(value)}`);
    line = [time, level.toUpperCase().padEnd(5), message, ...extras].join(" ");
  }
  console.error(line);
}

function jsonSafe(_key: string, value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Error) return value.message;
  return value;
}

function textValue(value: unknown): string {
  if (value instanceof Error) return JSON.stringify(value.message);
  if (typeof value === "string") return /\s|"/.test(value) ? JSON.stringify(value) : value;
  return typeof value === "bigint" ? value.toString() : JSON.stringify(value);
}
