import assert from "node:assert/strict";
import { parseFileRoute } from "../../lib/http/mod.ts";

Deno.test("parseFileRoute() splits the file from the operation", () => {
  const table = [
    {
      description: "plain file",
      input: "src/app.ts",
      expected: { op: "content", path: "src/app.ts" },
    },
    {
      description: "history",
      input: "src/app.ts/history",
      expected: { op: "history", path: "src/app.ts" },
    },
    {
      description: "iteration",
      input: "src/app.ts/at/12",
      expected: { op: "at", path: "src/app.ts", iteration: 12 },
    },
    {
      description: "encoded slashes",
      input: "src%2Fapp.ts/history",
      expected: { op: "history", path: "src/app.ts" },
    },
    {
      description: "a file named history",
      input: "docs%2Fhistory",
      expected: { op: "content", path: "docs/history" },
    },
    {
      description: "a file named at/3",
      input: "x%2Fat%2F3/at/1",
      expected: { op: "at", path: "x/at/3", iteration: 1 },
    },
    {
      description: "unicode",
      input: "%E5%90%8D%E5%89%8D.txt",
      expected: { op: "content", path: "名前.txt" },
    },
  ];
  for (const { description, input, expected } of table) {
    assert.deepEqual(parseFileRoute(input), expected, description);
  }
});

Deno.test("parseFileRoute() rejects bad iterations and encodings", () => {
  for (
    const input of ["a/at/0", "a/at/-1", "a/at/1.5", "a/at/x", "a/at/99999999999999999", "%E0%A4%A"]
  ) {
    assert.throws(() => parseFileRoute(input), TypeError, input);
  }
});
