import { AmbiguousIdError, UnknownIdError } from "../../lib/snapshot/mod.ts";
import { newestOf, parseIdPrefix, pickIdMatch } from "../../lib/snapshot/lookup.ts";
import { assertEquals, assertThrows } from "./_assert.ts";

const ID = "0b6c8a2e-1f3d-4c5b-9a7e-2d4f6b8c0e1a";

Deno.test("parseIdPrefix() normalizes an ID or prefix and refuses what cannot be one", async (t) => {
  const cases: Array<{ description: string; input: string; expected: string | null }> = [
    { description: "a full ID", input: ID, expected: ID },
    { description: "four characters", input: "0b6c", expected: "0b6c" },
    { description: "trimmed and lowercased", input: "  0B6C8A ", expected: "0b6c8a" },
    { description: "dashes are kept", input: "0b6c8a2e-1f", expected: "0b6c8a2e-1f" },
    { description: "three characters", input: "0b6", expected: null },
    { description: "empty", input: "", expected: null },
    { description: "not hex", input: "xyzw", expected: null },
    { description: "a SQL wildcard", input: "0b6%", expected: null },
    { description: "longer than an ID", input: `${ID}0`, expected: null },
    { description: "not a string", input: 1234 as unknown as string, expected: null },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => {
      if (expected === null) {
        assertThrows(() => parseIdPrefix("snapshot", input), RangeError, "Invalid snapshot ID");
      } else {
        assertEquals(parseIdPrefix("snapshot", input), expected);
      }
    });
  }
});

Deno.test("pickIdMatch() takes the one match and names none or several", async (t) => {
  const cases: Array<
    {
      description: string;
      input: string[];
      expected: string | typeof UnknownIdError | typeof AmbiguousIdError;
    }
  > = [
    { description: "one match", input: [ID], expected: ID },
    { description: "no match", input: [], expected: UnknownIdError },
    { description: "two matches", input: [ID, `${ID.slice(0, 35)}b`], expected: AmbiguousIdError },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => {
      if (typeof expected === "string") {
        assertEquals(pickIdMatch("transaction", "0b6c", input), expected);
      } else {
        const error = assertThrows<Error>(() => pickIdMatch("transaction", "0b6c", input));
        assertEquals(error instanceof expected, true, `${error.name} is a ${expected.name}`);
        assertEquals((error as UnknownIdError | AmbiguousIdError).kind, "transaction");
      }
    });
  }
});

Deno.test("newestOf() keeps the newest items, still oldest first", async (t) => {
  const items = [1, 2, 3, 4];
  const cases: Array<{ description: string; input: number | undefined; expected: number[] }> = [
    { description: "no limit", input: undefined, expected: [1, 2, 3, 4] },
    { description: "a negative limit", input: -1, expected: [1, 2, 3, 4] },
    { description: "zero", input: 0, expected: [] },
    { description: "fewer than there are", input: 2, expected: [3, 4] },
    { description: "exactly as many", input: 4, expected: [1, 2, 3, 4] },
    { description: "more than there are", input: 10, expected: [1, 2, 3, 4] },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => assertEquals(newestOf(items, input), expected));
  }
  assertEquals(items, [1, 2, 3, 4], "the input is left alone");
});
