/**
 * A second bincode decoder, for tests only: written from the layout the Rust vectors show
 * (PROTOCOL.md §1), sharing no code with `lib/wire`, and giving serde_json's text of the
 * message as the vectors' `.json` files hold it. It is slow and plain on purpose: a schema
 * walked field by field, each integer read byte by byte.
 *
 * @module
 */

/** How one field is laid out. */
type Field =
  | "u64"
  | "i64"
  | "bool"
  | "string"
  | "bytes"
  | { option: Field }
  | { vec: Field }
  | { tuple: Field[] }
  | { struct: [string, Field][] }
  | { enum: [string, [string, Field][] | null][] };

const ENTRY: Field = {
  struct: [
    ["local_seq", "u64"],
    ["filepath", "string"],
    ["operation", {
      enum: [["Write", null], ["Delete", null], ["Rename", [["new_path", "string"]]], [
        "Chmod",
        null,
      ]],
    }],
    ["content_hash", { option: "string" }],
    ["content_bytes", { option: "bytes" }],
    ["size", "i64"],
    ["permissions", "i64"],
    ["is_deletion", "bool"],
    ["master_rowid_seen", "i64"],
  ],
};

/** The Rust `WireMessage` enum: variants in declaration order, fields in order. */
const WIRE_MESSAGE: Field = {
  enum: [
    ["Notification", [
      ["sequence", "u64"],
      ["filepath", "string"],
      ["content_hash", "string"],
      ["size", "u64"],
      ["permissions", "i64"],
      ["is_deletion", "bool"],
      ["inline_content", { option: "bytes" }],
    ]],
    ["Heartbeat", [["agent_sequence", "u64"], ["agent_iteration", "i64"]]],
    ["WriteBack", [["sandbox_id", "string"], ["entries", { vec: ENTRY }]]],
    ["WriteBackResult", [
      ["accepted", { vec: { tuple: ["u64", "i64"] } }],
      ["rejected", { vec: { tuple: ["u64", "string"] } }],
    ]],
    ["BarrierRequest", [["sequence", "u64"]]],
    ["BarrierConfirmation", [["satisfied", "bool"], ["current_sequence", "u64"]]],
    ["Ack", [["up_to_sequence", "u64"]]],
    ["ContentFetchRequest", [["content_hash", "string"]]],
    ["ContentFetchResponse", [
      ["content_hash", "string"],
      ["content", "bytes"],
      ["size", "u64"],
      ["chunk_manifest", { option: "string" }],
    ]],
    ["ContentNotFound", [["content_hash", "string"]]],
    ["CatchupRequest", [["sandbox_id", "string"], ["since_sequence", "u64"]]],
    ["FullResyncRequired", [["reason", "string"], ["current_sequence", "u64"]]],
  ],
};

const utf8 = new TextDecoder("utf-8", { fatal: true });

class Cursor {
  pos = 0;
  constructor(readonly bytes: Uint8Array) {}

  take(n: number): Uint8Array {
    if (n > this.bytes.length - this.pos) throw new Error(`Past the end at byte ${this.pos}`);
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  unsigned(n: number): bigint {
    const b = this.take(n);
    let v = 0n;
    for (let i = n - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[i]!);
    return v;
  }

  length(): number {
    const n = this.unsigned(8);
    if (n > BigInt(this.bytes.length - this.pos)) throw new Error(`Length ${n} past the end`);
    return Number(n);
  }

  tag(): number {
    const t = this.unsigned(1);
    if (t > 1n) throw new Error(`Tag ${t} at byte ${this.pos - 1}`);
    return Number(t);
  }
}

function read(c: Cursor, field: Field): string {
  if (field === "u64") return String(c.unsigned(8));
  if (field === "i64") return String(BigInt.asIntN(64, c.unsigned(8)));
  if (field === "bool") return c.tag() === 1 ? "true" : "false";
  if (field === "string") return JSON.stringify(utf8.decode(c.take(c.length())));
  if (field === "bytes") return `[${[...c.take(c.length())].join(",")}]`;
  if ("option" in field) return c.tag() === 1 ? read(c, field.option) : "null";
  if ("vec" in field) {
    const n = c.length();
    return `[${Array.from({ length: n }, () => read(c, field.vec)).join(",")}]`;
  }
  if ("tuple" in field) return `[${field.tuple.map((f) => read(c, f)).join(",")}]`;
  if ("struct" in field) return fields(c, field.struct);
  const index = Number(c.unsigned(4));
  const variant = field.enum[index];
  if (!variant) throw new Error(`Unknown variant ${index}`);
  const [name, body] = variant;
  return body === null ? JSON.stringify(name) : `{${JSON.stringify(name)}:${fields(c, body)}}`;
}

function fields(c: Cursor, list: [string, Field][]): string {
  return `{${list.map(([name, f]) => `${JSON.stringify(name)}:${read(c, f)}`).join(",")}}`;
}

/**
 * Decodes one frame (length header, then a bincode `WireMessage`) to serde_json's text.
 *
 * @param frame The whole frame.
 * @returns The message's JSON, as the vectors' `.json` files hold it (without the newline).
 * @throws {Error} A header that disagrees with the length, or any malformed payload.
 */
export function referenceDecodeFrame(frame: Uint8Array): string {
  const c = new Cursor(frame);
  const length = Number(c.unsigned(4));
  if (length !== frame.length - 4) {
    throw new Error(`Header says ${length} bytes, the frame holds ${frame.length - 4}`);
  }
  const json = read(c, WIRE_MESSAGE);
  if (c.pos !== frame.length) throw new Error(`${frame.length - c.pos} bytes left over`);
  return json;
}
