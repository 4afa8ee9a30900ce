import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { formatDuration, snakeCaseKeys, table } from "../../lib/cli/output.ts";

Deno.test("snakeCaseKeys() renames identifiers deeply and leaves data keys alone", async (t) => {
  const cases = [
    { description: "camelCase", input: { ackedSequence: 1 }, expected: { acked_sequence: 1 } },
    {
      description: "nested in arrays",
      input: { replicas: [{ sandboxId: "s", lastSeenMs: 2 }] },
      expected: { replicas: [{ sandbox_id: "s", last_seen_ms: 2 }] },
    },
    { description: "already snake", input: { max_age_days: 3 }, expected: { max_age_days: 3 } },
    {
      description: "paths as keys are data",
      input: { "src/fileName.ts": 1, "aB.txt": 2 },
      expected: { "src/fileName.ts": 1, "aB.txt": 2 },
    },
    {
      description: "values untouched",
      input: { note: "camelCase" },
      expected: { note: "camelCase" },
    },
    { description: "scalars and null", input: null, expected: null },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => assertEquals(snakeCaseKeys(input), expected));
  }
});

Deno.test("formatDuration() gives the two largest units", async (t) => {
  const cases = [
    { description: "seconds", input: 42_000, expected: "42s" },
    { description: "minutes", input: 5 * 60_000 + 3_000, expected: "5m 3s" },
    { description: "hours", input: 2 * 3_600_000 + 7 * 60_000, expected: "2h 7m" },
    { description: "days", input: 3 * 86_400_000 + 4 * 3_600_000, expected: "3d 4h" },
    { description: "negative clock skew", input: -5, expected: "0s" },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => assertEquals(formatDuration(input), expected));
  }
});

Deno.test("table() puts the header first and pads every column but the last", () => {
  assertEquals(table([["1", "a.txt"], ["100", "b"]], ["SEQ", "PATH"]), [
    "SEQ  PATH",
    "1    a.txt",
    "100  b",
  ]);
});
