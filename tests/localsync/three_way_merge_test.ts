import assert from "node:assert/strict";
import { hasConflictMarkers, threeWayMerge } from "../../lib/localsync/mod.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

Deno.test("threeWayMerge() merges non-overlapping changes cleanly and marks overlapping ones", () => {
  const table = [
    {
      description: "changes in different places",
      base: "one\ntwo\nthree\nfour\n",
      local: "ONE\ntwo\nthree\nfour\n",
      upstream: "one\ntwo\nthree\nFOUR\n",
      expected: { kind: "clean", text: "ONE\ntwo\nthree\nFOUR\n" },
    },
    {
      description: "one side only",
      base: "a\nb\n",
      local: "a\nb\n",
      upstream: "a\nb\nc\n",
      expected: { kind: "clean", text: "a\nb\nc\n" },
    },
    {
      description: "same line changed on both sides",
      base: "a\nb\nc\n",
      local: "a\nX\nc\n",
      upstream: "a\nY\nc\n",
      expected: {
        kind: "conflicted",
        text: "a\n<<<<<<< local\nX\n=======\nY\n>>>>>>> upstream\nc\n",
      },
    },
  ];
  for (const { description, base, local, upstream, expected } of table) {
    const outcome = threeWayMerge(enc(base), enc(local), enc(upstream));
    assert.equal(outcome.kind, expected.kind, description);
    assert.ok(outcome.kind !== "binary");
    assert.equal(dec(outcome.bytes), expected.text, description);
    assert.equal(hasConflictMarkers(outcome.bytes), expected.kind === "conflicted", description);
  }
});

Deno.test("threeWayMerge() refuses binary content and merges two creations against empty", () => {
  assert.equal(threeWayMerge(enc("a"), new Uint8Array([0, 1, 2]), enc("b")).kind, "binary");
  assert.equal(threeWayMerge(enc("a"), new Uint8Array([0xc3, 0x28]), enc("b")).kind, "binary");
  const created = threeWayMerge(null, enc("local line\n"), enc("upstream line\n"));
  assert.equal(created.kind, "conflicted");
});
