import { strictEqual } from "node:assert/strict";
import { bytesForPeople, formatBytes } from "../../lib/log/mod.ts";

Deno.test("formatBytes() and bytesForPeople() give sizes in binary units, exact where it matters", async (t) => {
  const table = [
    { description: "under a KiB", input: 1023, readable: "1023 bytes", exact: "1023 bytes" },
    { description: "one", input: 1, readable: "1 byte", exact: "1 byte" },
    { description: "exact KiB", input: 2048, readable: "2 KiB", exact: "2 KiB" },
    { description: "a fraction", input: 1536, readable: "1.5 KiB", exact: "1.5 KiB (1536 bytes)" },
    {
      description: "the default write-back limit",
      input: 64 * 1024 * 1024,
      readable: "64 MiB",
      exact: "64 MiB",
    },
    {
      description: "a file over it",
      input: 70_000_000,
      readable: "66.8 MiB",
      exact: "66.8 MiB (70000000 bytes)",
    },
    { description: "GiB", input: 10 * 1024 ** 3, readable: "10 GiB", exact: "10 GiB" },
  ];
  for (const { description, input, readable, exact } of table) {
    await t.step(description, () => {
      strictEqual(formatBytes(input), readable);
      strictEqual(bytesForPeople(input), exact);
    });
  }
});
