import assert from "node:assert/strict";
import { onlyInsideTopFolders, retryDelayMs } from "../../lib/workspace/tree_events.ts";

Deno.test("onlyInsideTopFolders() leaves to a folder's own watch what lies inside it", async (t) => {
  const table: Array<{ description: string; input: string[]; expected: boolean }> = [
    { description: "a file inside a top folder", input: ["/ws/src/a.ts"], expected: true },
    { description: "deep inside a top folder", input: ["/ws/src/lib/x/a.ts"], expected: true },
    { description: "a top folder itself", input: ["/ws/src"], expected: false },
    { description: "a file at the root", input: ["/ws/README.md"], expected: false },
    {
      description: "a rename out of a folder to the root (the root's own entry is in it)",
      input: ["/ws/src/a.ts", "/ws/a.ts"],
      expected: false,
    },
    {
      description: "a rename between two folders",
      input: ["/ws/src/a.ts", "/ws/lib/a.ts"],
      expected: true,
    },
    { description: "lost events (no paths)", input: [], expected: false },
    {
      description: "a sibling whose name the root's is a prefix of",
      input: ["/ws2/a/b"],
      expected: false,
    },
    { description: "the root itself", input: ["/ws"], expected: false },
  ];
  for (const { description, input, expected } of table) {
    await t.step(description, () => assert.equal(onlyInsideTopFolders("/ws", input), expected));
  }
});

Deno.test("retryDelayMs() doubles from 100 ms up to 30 s", async (t) => {
  const table = [
    { description: "first failure", input: 1, expected: 100 },
    { description: "second in a row", input: 2, expected: 200 },
    { description: "ninth in a row", input: 9, expected: 25_600 },
    { description: "capped", input: 10, expected: 30_000 },
    { description: "far beyond", input: 1_000, expected: 30_000 },
  ];
  for (const { description, input, expected } of table) {
    await t.step(description, () => assert.equal(retryDelayMs(input), expected));
  }
});
