import { resolve } from "node:path";
import { ConfigError } from "./errors.ts";
import { parseHostPort } from "./host_port.ts";
import type { OptionSpec } from "./_options.ts";
import { bytesForPeople, errorMessage } from "../log/mod.ts";

const TRUE_WORDS = new Set(["1", "true", "yes", "on"]);
const FALSE_WORDS = new Set(["0", "false", "no", "off"]);
/** Folders of the kernel and devices, which Chronicle is never given access to. */
const SYSTEM_FOLDERS = ["/proc", "/sys", "/dev"];
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;
const SIZE_UNITS: Record<string, number> = {
  "": 1,
  b: 1,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
};

/** A raw value and how to name it in an error. */
export interface RawValue {
  value: unknown;
  /** `--ws-listen`, `CHRONICLE_WS_LISTEN` or `ws_listen in "/w/config.yaml"`. */
  where: string;
  /** Folder a relative path is resolved against. */
  baseDir: string;
  /** True when the raw value came from `config.yaml`, whose values are typed YAML. */
  fromFile: boolean;
}

/**
 * Reads and checks one raw value of an option.
 *
 * @throws {ConfigError} Naming the option and the value (never a secret's value).
 */
export function parseValue(spec: OptionSpec, raw: RawValue): unknown {
  const fail = (reason: string, shown: unknown = raw.value): never => {
    const value = spec.kind === "secret" ? "" : ` "${display(shown)}"`;
    throw new ConfigError(`Invalid value${value} for ${raw.where}: ${reason}`);
  };
  const text = (): string => {
    if (typeof raw.value === "string") return raw.value;
    if (raw.fromFile && (typeof raw.value === "number" || typeof raw.value === "boolean")) {
      return String(raw.value);
    }
    return fail("expected a string");
  };

  switch (spec.kind) {
    case "path": {
      const value = text();
      if (value === "") fail("expected a path");
      if (value.includes("\0")) fail("a path cannot contain NUL");
      const path = resolve(raw.baseDir, value);
      const system = SYSTEM_FOLDERS.find((top) => path === top || path.startsWith(`${top}/`));
      // Deno refuses these to any program without --allow-all: say so here, naming the option.
      if (system) fail(`${system} is the system's own folder, not a place for Chronicle's files`);
      return path;
    }
    case "boolean": {
      if (typeof raw.value === "boolean") return raw.value;
      const word = text().trim().toLowerCase();
      if (TRUE_WORDS.has(word)) return true;
      if (FALSE_WORDS.has(word)) return false;
      return fail("expected true or false");
    }
    case "list": {
      const items = Array.isArray(raw.value)
        ? raw.value
        : raw.fromFile || typeof raw.value !== "string"
        ? [raw.value]
        : raw.value.split(",").map((item) => item.trim()).filter((item) => item !== "");
      for (const item of items) {
        if (typeof item !== "string" || item.trim() === "") {
          fail("expected non-empty patterns", item);
        }
      }
      return items as string[];
    }
    case "hostPort": {
      const value = text();
      try {
        parseHostPort(value);
      } catch (error) {
        fail(errorMessage(error).replace(/^Expected/, "expected"));
      }
      return value;
    }
    case "wsUrl": {
      const value = text();
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        return fail("expected a ws:// or wss:// URL");
      }
      if (url.protocol !== "ws:" && url.protocol !== "wss:") {
        fail(`expected a ws:// or wss:// URL, not ${url.protocol}//`);
      }
      if (url.hostname === "") fail("the URL has no host");
      return value;
    }
    case "octal": {
      // Permission bits: 0777, 777 or 0o777 (a number in a file is taken as written in octal).
      const digits = typeof raw.value === "number" ? String(raw.value) : text().trim();
      const match = /^(?:0o)?([0-7]{1,5})$/.exec(digits);
      if (!match) fail("expected permission bits in octal, like 0755");
      return inRange(spec, parseInt(match![1]!, 8), fail);
    }
    case "integer": {
      let value: number;
      if (typeof raw.value === "number") value = raw.value;
      else {
        const digits = text().trim();
        if (!/^\d+$/.test(digits)) fail(`expected a whole number of ${spec.unit ?? "units"}`);
        value = Number(digits);
      }
      if (!Number.isSafeInteger(value)) fail(`expected a whole number of ${spec.unit ?? "units"}`);
      return inRange(spec, value, fail);
    }
    case "size": {
      let value: number;
      if (typeof raw.value === "number") value = raw.value;
      else {
        const match = /^(\d+)\s*([A-Za-z]*)$/.exec(text().trim());
        const factor = match ? SIZE_UNITS[match[2]!.toLowerCase()] : undefined;
        if (!match || factor === undefined) {
          return fail("expected a byte count such as 67108864 or 64MiB (units B, KiB, MiB, GiB)");
        }
        value = Number(match[1]) * factor;
      }
      if (!Number.isSafeInteger(value)) fail("expected a whole number of bytes");
      return inRange(spec, value, fail);
    }
    case "logFormat": {
      const value = text();
      if (value !== "text" && value !== "json") fail("expected text or json");
      return value;
    }
    case "id": {
      const value = text();
      if (!ID_PATTERN.test(value)) {
        fail("expected 1 to 128 letters, digits or . _ : @ - starting with a letter or digit");
      }
      return value;
    }
    case "s3Url": {
      const value = text();
      if (!/^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/.*)?$/.test(value)) {
        fail("expected s3://BUCKET/PREFIX with a valid bucket name");
      }
      return value;
    }
    case "httpUrl": {
      const value = text();
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        return fail("expected an http:// or https:// URL");
      }
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        fail(`expected an http:// or https:// URL, not ${url.protocol}//`);
      }
      return value;
    }
    case "duration": {
      let value: number;
      if (typeof raw.value === "number") value = raw.value * 1000;
      else {
        const match = /^(\d+)\s*(ms|s|m|h|d)?$/.exec(text().trim());
        const factor = match ? DURATION_UNITS[match[2] ?? "s"] : undefined;
        if (!match || factor === undefined) {
          return fail("expected a duration such as 90s, 15m, 1h or 1d");
        }
        value = Number(match[1]) * factor;
      }
      return inRange(spec, value, fail);
    }
    case "secret": {
      if (typeof raw.value !== "string") return fail("expected a string");
      if (!/^[\x21-\x7e]+$/.test(raw.value)) {
        fail("expected printable ASCII without spaces");
      }
      return raw.value;
    }
  }
}

/** Milliseconds per duration unit; a bare number is seconds. */
const DURATION_UNITS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

function inRange(spec: OptionSpec, value: number, fail: (reason: string) => never): number {
  // Sizes for people: "at most 1 TiB", not a count of bytes.
  const shown = (bound: number) => spec.kind === "size" ? bytesForPeople(bound) : String(bound);
  if (spec.min !== undefined && value < spec.min) fail(`must be at least ${shown(spec.min)}`);
  if (spec.max !== undefined && value > spec.max) fail(`must be at most ${shown(spec.max)}`);
  return value;
}

function display(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
