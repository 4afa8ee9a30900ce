import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { fromJson, toJson, type WireMessage } from "../../lib/wire/mod.ts";

Deno.test("fromJson() rejects JSON that is not a WireMessage, naming the field", async (t) => {
  const table: { description: string; input: string; mentions: string }[] = [
    { description: "malformed JSON", input: '{"Ack":', mentions: "Invalid JSON" },
    { description: "not an object", input: "[1]", mentions: "'array'" },
    { description: "two variant keys", input: '{"Ack":{},"Heartbeat":{}}', mentions: "'2' keys" },
    { description: "unknown variant", input: '{"Nack":{}}', mentions: "'Nack'" },
    { description: "inherited name", input: '{"toString":{}}', mentions: "'toString'" },
    { description: "missing field", input: '{"Ack":{}}', mentions: "'Ack.up_to_sequence'" },
    {
      description: "unknown field",
      input: '{"Ack":{"up_to_sequence":1,"extra":2}}',
      mentions: "'Ack.extra'",
    },
    { description: "float", input: '{"Ack":{"up_to_sequence":1.0}}', mentions: "'1.0'" },
    { description: "exponent", input: '{"Ack":{"up_to_sequence":1e3}}', mentions: "'1e3'" },
    {
      description: "u64 above max",
      input: '{"Ack":{"up_to_sequence":18446744073709551616}}',
      mentions: "u64 range",
    },
    {
      description: "negative u64",
      input: '{"Ack":{"up_to_sequence":-1}}',
      mentions: "'-1'",
    },
    {
      description: "i64 below min",
      input: '{"Heartbeat":{"agent_sequence":0,"agent_iteration":-9223372036854775809}}',
      mentions: "Heartbeat.agent_iteration",
    },
    {
      description: "string for integer",
      input: '{"Ack":{"up_to_sequence":"1"}}',
      mentions: "must be an integer",
    },
    {
      description: "number for bool",
      input: '{"BarrierConfirmation":{"satisfied":1,"current_sequence":0}}',
      mentions: "BarrierConfirmation.satisfied",
    },
    {
      description: "byte above 255",
      input:
        '{"ContentFetchResponse":{"content_hash":"","content":[1,256],"size":0,"chunk_manifest":null}}',
      mentions: "'ContentFetchResponse.content[1]'",
    },
    {
      description: "unknown operation",
      input:
        '{"WriteBack":{"sandbox_id":"","entries":[{"local_seq":1,"filepath":"a","operation":"Move","content_hash":null,"content_bytes":null,"size":0,"permissions":0,"is_deletion":false,"master_rowid_seen":0}]}}',
      mentions: "'Move'",
    },
    {
      description: "pair of three",
      input: '{"WriteBackResult":{"accepted":[[1,2,3]],"rejected":[]}}',
      mentions: "WriteBackResult.accepted[0]",
    },
  ];
  for (const { description, input, mentions } of table) {
    await t.step(description, () => {
      throws(() => fromJson(input), (e: unknown) => {
        const err = e as { name: string; code: string; message: string };
        strictEqual(err.name, "WireError");
        strictEqual(err.code, "invalid_json");
        strictEqual(err.message.includes(mentions), true, err.message);
        return true;
      });
    });
  }
});

Deno.test("toJson() escapes strings as serde_json does", () => {
  const reason = 'q"b\\s/\n\r\t\b\f\u0000\u001f\u007f é 🦀';
  const text = toJson({ type: "FullResyncRequired", reason, current_sequence: 1n });
  strictEqual(
    text,
    '{"FullResyncRequired":{"reason":"q\\"b\\\\s/\\n\\r\\t\\b\\f\\u0000\\u001f\u007f é 🦀",' +
      '"current_sequence":1}}',
  );
  deepStrictEqual(fromJson(text), { type: "FullResyncRequired", reason, current_sequence: 1n });
});

Deno.test("toJson() and fromJson() round-trip every WriteOperation and extreme integers", () => {
  const msg: WireMessage & { type: "WriteBack" } = {
    type: "WriteBack",
    sandbox_id: "sb",
    entries: (["Write", "Delete", "Chmod"] as const).map((type, i) => ({
      local_seq: BigInt(i),
      filepath: `f${i}`,
      operation: { type },
      content_hash: i === 0 ? "h" : null,
      content_bytes: i === 0 ? new Uint8Array([0, 255]) : null,
      size: -9223372036854775808n,
      permissions: 9223372036854775807n,
      is_deletion: i === 1,
      master_rowid_seen: -1n,
    })),
  };
  msg.entries.push({
    ...msg.entries[0]!,
    operation: { type: "Rename", new_path: "to/ñ" },
  });
  deepStrictEqual(fromJson(toJson(msg)), msg);
});

Deno.test("toJson() refuses out-of-range integers", () => {
  throws(() => toJson({ type: "Ack", up_to_sequence: -1n }), RangeError);
  throws(() => toJson({ type: "Nope" } as unknown as WireMessage), TypeError);
});
