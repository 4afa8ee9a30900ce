import assert from "node:assert/strict";
import { decideUpstream } from "../../lib/localsync/mod.ts";

Deno.test("decideUpstream() never lets upstream clobber a local edit", () => {
  const table = [
    {
      description: "untouched file takes upstream",
      input: { base: "A", local: "A", upstream: "B", localPending: false },
      expected: "apply",
    },
    {
      description: "untouched file is deleted upstream",
      input: { base: "A", local: "A", upstream: null, localPending: false },
      expected: "apply",
    },
    {
      description: "new upstream file, nothing local",
      input: { base: null, local: null, upstream: "B", localPending: false },
      expected: "apply",
    },
    {
      description: "both made the same change",
      input: { base: "A", local: "B", upstream: "B", localPending: false },
      expected: "agree",
    },
    {
      description: "both deleted",
      input: { base: "A", local: null, upstream: null, localPending: false },
      expected: "agree",
    },
    {
      description: "both changed differently",
      input: { base: "A", local: "L", upstream: "U", localPending: false },
      expected: "conflict",
    },
    {
      description: "local deleted, upstream edited",
      input: { base: "A", local: null, upstream: "U", localPending: false },
      expected: "conflict",
    },
    {
      description: "local edited, upstream deleted",
      input: { base: "A", local: "L", upstream: null, localPending: false },
      expected: "conflict",
    },
    {
      description: "both created differently",
      input: { base: null, local: "L", upstream: "U", localPending: false },
      expected: "conflict",
    },
    {
      description: "edit inside the debounce window",
      input: { base: "A", local: "A", upstream: "U", localPending: true },
      expected: "conflict",
    },
  ];
  for (const { description, input, expected } of table) {
    assert.equal(decideUpstream(input).action, expected, description);
  }
});
