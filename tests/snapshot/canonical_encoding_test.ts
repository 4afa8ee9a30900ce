import { Buffer } from "node:buffer";
import {
  type CapturedFile,
  comparePaths,
  encodeSnapshot,
  headSeal,
  snapshotHash,
} from "../../lib/snapshot/mod.ts";
import { createHash } from "node:crypto";
import { assertEquals, assertThrows } from "./_assert.ts";

const file = (path: string, extra: Partial<CapturedFile> = {}): CapturedFile => ({
  path,
  state: "present",
  kind: "file",
  hash: "ab".repeat(32),
  size: 3,
  mode: 0o100644,
  ...extra,
});

const fields = {
  id: "7d3b1c1e-2b4f-4a57-9a63-0c55d3f1f6a2",
  number: 2,
  timestamp: 1_700_000_000_123,
  actionType: "move_file",
  summary: 'move_file: "quoted" -> é',
  transactionId: null,
  previousHash: "cd".repeat(32),
  files: [file("é.txt"), file("b", { state: "absent", hash: "", size: 0, mode: 0 }), file("a")],
};

Deno.test("encodeSnapshot() writes the documented fixed-order JSON", () => {
  assertEquals(
    encodeSnapshot(fields),
    `["chronicle-snapshot-v1",2,"7d3b1c1e-2b4f-4a57-9a63-0c55d3f1f6a2",1700000000123,"move_file",` +
      `"move_file: \\"quoted\\" -> é","","${"cd".repeat(32)}",` +
      `[["a","present","file","${"ab".repeat(32)}",3,33188],["b","absent","file","",0,0],` +
      `["é.txt","present","file","${"ab".repeat(32)}",3,33188]]]`,
  );
});

Deno.test("snapshotHash() is the SHA-256 of the encoding's UTF-8, independent of file order", () => {
  const expected = createHash("sha256").update(new TextEncoder().encode(encodeSnapshot(fields)))
    .digest("hex");
  assertEquals(snapshotHash(fields), expected);
  assertEquals(snapshotHash({ ...fields, files: [...fields.files].reverse() }), expected);
  const changes: Array<Partial<typeof fields> | { transactionId: string }> = [
    { number: 3 },
    { id: "x" },
    { timestamp: 1 },
    { actionType: "write_file" },
    { summary: "" },
    { transactionId: "t" },
    { previousHash: "" },
    { files: fields.files.slice(1) },
  ];
  for (const change of changes) {
    const other = snapshotHash({ ...fields, ...change });
    if (other === expected) throw new Error(`${JSON.stringify(change)} did not change the hash`);
  }
});

Deno.test("encodeSnapshot() refuses numbers that are not safe non-negative integers", () => {
  for (const bad of [-1, 1.5, Number.MAX_SAFE_INTEGER + 1, NaN]) {
    assertThrows(() => encodeSnapshot({ ...fields, timestamp: bad }), RangeError, "timestamp");
  }
});

Deno.test("comparePaths() orders by code point, like UTF-8 bytes", () => {
  const paths = ["b", "a/b", "a", "\u{1F600}", "\uFFFD", "a b", "Z"];
  const byBytes = [...paths].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
  assertEquals([...paths].sort(comparePaths), byBytes);
});

Deno.test("headSeal() covers every head field", () => {
  const head = { headNumber: 3, headHash: "a", anchorNumber: 1, anchorHash: "" };
  const seal = headSeal(head);
  for (
    const change of [{ headNumber: 4 }, { headHash: "b" }, { anchorNumber: 2 }, { anchorHash: "x" }]
  ) {
    if (headSeal({ ...head, ...change }) === seal) throw new Error(JSON.stringify(change));
  }
});
