import type { WireMessage, WireMessageType, WriteBackEntry, WriteOperation } from "./types.ts";
import { I64_MAX, I64_MIN, U64_MAX, WIRE_MESSAGE_TYPES } from "./types.ts";
import { WireError } from "./wire_error.ts";
import { errorMessage } from "../log/mod.ts";

/** How one field is written in JSON. */
type Kind =
  | "u64"
  | "i64"
  | "bool"
  | "string"
  | "bytes"
  | "string?"
  | "bytes?"
  | "operation"
  | "entries"
  | "accepted"
  | "rejected";

/** Field names and kinds in declaration order, per variant. */
const FIELDS: Record<WireMessageType, readonly (readonly [string, Kind])[]> = {
  Notification: [
    ["sequence", "u64"],
    ["filepath", "string"],
    ["content_hash", "string"],
    ["size", "u64"],
    ["permissions", "i64"],
    ["is_deletion", "bool"],
    ["inline_content", "bytes?"],
  ],
  Heartbeat: [["agent_sequence", "u64"], ["agent_iteration", "i64"]],
  WriteBack: [["sandbox_id", "string"], ["entries", "entries"]],
  WriteBackResult: [["accepted", "accepted"], ["rejected", "rejected"]],
  BarrierRequest: [["sequence", "u64"]],
  BarrierConfirmation: [["satisfied", "bool"], ["current_sequence", "u64"]],
  Ack: [["up_to_sequence", "u64"]],
  ContentFetchRequest: [["content_hash", "string"]],
  ContentFetchResponse: [
    ["content_hash", "string"],
    ["content", "bytes"],
    ["size", "u64"],
    ["chunk_manifest", "string?"],
  ],
  ContentNotFound: [["content_hash", "string"]],
  CatchupRequest: [["sandbox_id", "string"], ["since_sequence", "u64"]],
  FullResyncRequired: [["reason", "string"], ["current_sequence", "u64"]],
};

const ENTRY_FIELDS: readonly (readonly [string, Kind])[] = [
  ["local_seq", "u64"],
  ["filepath", "string"],
  ["operation", "operation"],
  ["content_hash", "string?"],
  ["content_bytes", "bytes?"],
  ["size", "i64"],
  ["permissions", "i64"],
  ["is_deletion", "bool"],
  ["master_rowid_seen", "i64"],
];

const UNIT_OPERATIONS = ["Write", "Delete", "Chmod"];

/**
 * Writes a message in serde's externally tagged JSON form, compact, keys in
 * declaration order, integers exact: the form of `vectors/bincode/*.json` (without the
 * trailing newline). Byte vectors are arrays of numbers.
 *
 * @param msg The message.
 * @returns One line of JSON.
 * @throws {RangeError} An integer outside its `u64`/`i64` range.
 * @throws {TypeError} A field of the wrong type, or an unknown `type`.
 *
 * @example An Ack as JSON
 * ```ts
 * import { strictEqual } from "node:assert/strict";
 * import { toJson } from "./mod.ts";
 *
 * strictEqual(toJson({ type: "Ack", up_to_sequence: 17n }), '{"Ack":{"up_to_sequence":17}}');
 * ```
 */
export function toJson(msg: WireMessage): string {
  const fields = Object.hasOwn(FIELDS, msg?.type) ? FIELDS[msg.type] : undefined;
  if (fields === undefined) {
    throw new TypeError(`Unknown WireMessage type '${String(msg?.type)}'`);
  }
  // A message is a plain record of its fields; read them by name.
  return `{"${msg.type}":${writeObject(msg as unknown as Rec, fields, msg.type)}}`;
}

type Rec = Record<string, unknown>;

function writeObject(obj: Rec, fields: readonly (readonly [string, Kind])[], at: string): string {
  let out = "{";
  for (let i = 0; i < fields.length; i++) {
    const [name, kind] = fields[i]!;
    if (i > 0) out += ",";
    out += `"${name}":${writeValue(obj[name], kind, `${at}.${name}`)}`;
  }
  return out + "}";
}

function writeValue(v: unknown, kind: Kind, field: string): string {
  switch (kind) {
    case "u64":
      return String(checkInt(v, 0n, U64_MAX, "u64", field));
    case "i64":
      return String(checkInt(v, I64_MIN, I64_MAX, "i64", field));
    case "bool":
      if (typeof v !== "boolean") throw wrongType("boolean", field, v);
      return v ? "true" : "false";
    case "string":
      if (typeof v !== "string") throw wrongType("string", field, v);
      return JSON.stringify(v);
    case "bytes":
      if (!(v instanceof Uint8Array)) throw wrongType("Uint8Array", field, v);
      return `[${v.join(",")}]`;
    case "string?":
      return v === null ? "null" : writeValue(v, "string", field);
    case "bytes?":
      return v === null ? "null" : writeValue(v, "bytes", field);
    case "operation": {
      const type = (v as { type?: unknown } | null)?.type;
      if (type === "Rename") {
        const newPath = writeValue((v as Rec).new_path, "string", `${field}.new_path`);
        return `{"Rename":{"new_path":${newPath}}}`;
      }
      if (typeof type === "string" && UNIT_OPERATIONS.includes(type)) return `"${type}"`;
      throw new TypeError(`Unknown WriteOperation type '${String(type)}' in '${field}'`);
    }
    case "entries":
      return writeArray(v, field, (e, f) => {
        if (typeof e !== "object" || e === null) throw wrongType("object", f, e);
        return writeObject(e as Rec, ENTRY_FIELDS, f);
      });
    case "accepted":
    case "rejected":
      return writeArray(v, field, (pair, f) => {
        if (!Array.isArray(pair) || pair.length !== 2) throw wrongType("pair", f, pair);
        const second = kind === "accepted" ? "i64" : "string";
        return `[${writeValue(pair[0], "u64", `${f}.0`)},${writeValue(pair[1], second, `${f}.1`)}]`;
      });
  }
}

function writeArray(v: unknown, field: string, each: (x: unknown, f: string) => string): string {
  if (!Array.isArray(v)) throw wrongType("array", field, v);
  return `[${v.map((x, i) => each(x, `${field}[${i}]`)).join(",")}]`;
}

function checkInt(v: unknown, min: bigint, max: bigint, kind: string, field: string): bigint {
  if (typeof v !== "bigint") throw wrongType("bigint", field, v);
  if (v < min || v > max) {
    throw new RangeError(`Field '${field}' is '${v}', outside the ${kind} range ${min}..${max}`);
  }
  return v;
}

function wrongType(kind: string, field: string, v: unknown): TypeError {
  return new TypeError(`Field '${field}' must be a ${kind}, got '${describe(v)}'`);
}

function describe(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
}

const INTEGER = /^-?(?:0|[1-9][0-9]*)$/;

/** Keeps integers exact: short ones as numbers, long ones as bigints from their text. */
function reviver(_key: string, value: unknown, context?: { source?: string }): unknown {
  if (typeof value !== "number") return value;
  const source = context?.source ?? String(value);
  if (!INTEGER.test(source)) {
    throw new WireError("invalid_json", `Number '${source}' is not an integer`);
  }
  return source.length <= 15 ? value : BigInt(source);
}

/**
 * Reads a message from serde's externally tagged JSON form (as in
 * `vectors/bincode/*.json`), keeping integers exact up to `u64::MAX` and down to
 * `i64::MIN`. Stricter than serde: unknown fields are refused too.
 *
 * @param text One JSON document.
 * @returns The message.
 * @throws {WireError} `invalid_json` for malformed JSON, a missing or unknown field or
 * variant, a value of the wrong type or out of range; the message names the field.
 *
 * @example Reading u64::MAX exactly
 * ```ts
 * import { deepStrictEqual } from "node:assert/strict";
 * import { fromJson } from "./mod.ts";
 *
 * deepStrictEqual(fromJson('{"Ack":{"up_to_sequence":18446744073709551615}}'), {
 *   type: "Ack",
 *   up_to_sequence: 18446744073709551615n,
 * });
 * ```
 */
export function fromJson(text: string): WireMessage {
  let root: unknown;
  try {
    // The third reviver argument (source text access) is not in TypeScript's lib yet.
    root = JSON.parse(text, reviver as (key: string, value: unknown) => unknown);
  } catch (cause) {
    if (cause instanceof WireError) throw cause;
    throw new WireError("invalid_json", `Invalid JSON: ${errorMessage(cause)}`, { cause });
  }
  const [type, body] = tagged(root, WIRE_MESSAGE_TYPES, "WireMessage");
  const msg = readObject(body, FIELDS[type as WireMessageType], type);
  // Built field by field from the table above, so its shape is that variant's.
  return { type, ...msg } as unknown as WireMessage;
}

function tagged(v: unknown, names: readonly string[], what: string): [string, unknown] {
  if (!isRecord(v)) throw invalid(`Expected a ${what} object, got '${describe(v)}'`);
  const keys = Object.keys(v);
  if (keys.length !== 1) {
    throw invalid(`Expected a ${what} object with one variant key, got '${keys.length}' keys`);
  }
  const name = keys[0]!;
  if (!names.includes(name)) throw invalid(`Unknown ${what} variant '${name}'`);
  return [name, v[name]];
}

function readObject(v: unknown, fields: readonly (readonly [string, Kind])[], at: string): Rec {
  if (!isRecord(v)) throw invalid(`Expected '${at}' to be an object, got '${describe(v)}'`);
  const out: Rec = {};
  for (const [name, kind] of fields) {
    if (!Object.hasOwn(v, name)) throw invalid(`Missing field '${at}.${name}'`);
    out[name] = readValue(v[name], kind, `${at}.${name}`);
  }
  for (const key of Object.keys(v)) {
    if (!fields.some(([name]) => name === key)) throw invalid(`Unknown field '${at}.${key}'`);
  }
  return out;
}

function readValue(v: unknown, kind: Kind, field: string): unknown {
  switch (kind) {
    case "u64":
      return readInt(v, 0n, U64_MAX, "u64", field);
    case "i64":
      return readInt(v, I64_MIN, I64_MAX, "i64", field);
    case "bool":
      if (typeof v !== "boolean") throw mismatch("a boolean", field, v);
      return v;
    case "string":
      if (typeof v !== "string") throw mismatch("a string", field, v);
      return v;
    case "bytes": {
      if (!Array.isArray(v)) throw mismatch("an array of bytes", field, v);
      const out = new Uint8Array(v.length);
      for (let i = 0; i < v.length; i++) {
        const b: unknown = v[i];
        if (typeof b !== "number" || !Number.isInteger(b) || b < 0 || b > 255) {
          throw invalid(`Field '${field}[${i}]' must be a byte 0..255, got '${String(b)}'`);
        }
        out[i] = b;
      }
      return out;
    }
    case "string?":
      return v === null ? null : readValue(v, "string", field);
    case "bytes?":
      return v === null ? null : readValue(v, "bytes", field);
    case "operation": {
      if (typeof v === "string") {
        if (!UNIT_OPERATIONS.includes(v)) {
          throw invalid(`Unknown WriteOperation '${v}' in '${field}'`);
        }
        return { type: v } as WriteOperation;
      }
      const [name, body] = tagged(v, ["Rename"], "WriteOperation");
      const { new_path } = readObject(body, [["new_path", "string"]], `${field}.${name}`);
      return { type: "Rename", new_path } as WriteOperation;
    }
    case "entries":
      return readArray(
        v,
        field,
        (e, f) => readObject(e, ENTRY_FIELDS, f) as unknown as WriteBackEntry,
      );
    case "accepted":
    case "rejected":
      return readArray(v, field, (pair, f) => {
        if (!Array.isArray(pair) || pair.length !== 2) {
          throw mismatch("a pair [a, b]", f, pair);
        }
        return [
          readValue(pair[0], "u64", `${f}.0`),
          readValue(pair[1], kind === "accepted" ? "i64" : "string", `${f}.1`),
        ];
      });
  }
}

function readArray<T>(v: unknown, field: string, each: (x: unknown, f: string) => T): T[] {
  if (!Array.isArray(v)) throw mismatch("an array", field, v);
  return v.map((x, i) => each(x, `${field}[${i}]`));
}

function readInt(v: unknown, min: bigint, max: bigint, kind: string, field: string): bigint {
  if (typeof v !== "number" && typeof v !== "bigint") throw mismatch("an integer", field, v);
  const n = BigInt(v);
  if (n < min || n > max) {
    throw invalid(`Field '${field}' is '${n}', outside the ${kind} range ${min}..${max}`);
  }
  return n;
}

function isRecord(v: unknown): v is Rec {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function mismatch(expected: string, field: string, v: unknown): WireError {
  return invalid(`Field '${field}' must be ${expected}, got '${describe(v)}'`);
}

function invalid(message: string): WireError {
  return new WireError("invalid_json", message);
}
