import assert from "node:assert/strict";
import {
  assertBytesHash,
  CorruptContentError,
  EMPTY_HASH,
  isContentHash,
  sha256Hex,
} from "../../lib/cas/mod.ts";

Deno.test("sha256Hex() gives the lowercase hex SHA-256", async (t) => {
  const cases = [
    { description: "no bytes", input: "", expected: EMPTY_HASH },
    {
      description: "abc",
      input: "abc",
      expected: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    },
    {
      description: "two blocks",
      input: "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      expected: "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => {
      assert.equal(sha256Hex(new TextEncoder().encode(input)), expected);
    });
  }
});

Deno.test("isContentHash() accepts exactly 64 lowercase hex characters", async (t) => {
  const cases = [
    { description: "valid", input: "0123456789abcdef".repeat(4), expected: true },
    { description: "empty hash", input: EMPTY_HASH, expected: true },
    { description: "uppercase", input: EMPTY_HASH.toUpperCase(), expected: false },
    { description: "63 characters", input: EMPTY_HASH.slice(1), expected: false },
    { description: "65 characters", input: `${EMPTY_HASH}0`, expected: false },
    { description: "path traversal", input: "../x", expected: false },
    { description: "empty string", input: "", expected: false },
    { description: "non-hex letter", input: `g${EMPTY_HASH.slice(1)}`, expected: false },
    { description: "trailing newline", input: `${EMPTY_HASH.slice(1)}\n`, expected: false },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => assert.equal(isContentHash(input), expected));
  }
});

Deno.test("assertBytesHash() passes bytes of their hash each time, and refuses the same buffer for another hash", () => {
  const bytes = new TextEncoder().encode("abc");
  const hash = sha256Hex(bytes);
  assertBytesHash(hash, bytes);
  assertBytesHash(hash, bytes); // checked before: passes again
  // Checked for one hash, the same buffer is still refused for another.
  assert.throws(() => assertBytesHash(EMPTY_HASH, bytes), CorruptContentError);
  assertBytesHash(hash, bytes);
  // Equal bytes in another buffer are checked on their own.
  const other = bytes.slice();
  other[0] = 0x41;
  assert.throws(() => assertBytesHash(hash, other), CorruptContentError);
});
