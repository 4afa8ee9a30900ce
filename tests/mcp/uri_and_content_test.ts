import { fileUri, parseFileUri } from "../../lib/mcp/resources.ts";
import { mimeTypeOf, windowText } from "../../lib/mcp/content.ts";
import { assertEquals, assertThrows } from "../_helpers/assert.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

Deno.test("file URIs: built and read back, bad ones refused", async (t) => {
  const roundTrips = [
    {
      description: "a plain path",
      input: ["notes.md", 1],
      expected: "chronicle://files/notes.md?iteration=1",
    },
    {
      description: "folders keep their slashes",
      input: ["src/app.ts", 12],
      expected: "chronicle://files/src/app.ts?iteration=12",
    },
    {
      description: "spaces and ? are encoded",
      input: ["a b/c?.md", 3],
      expected: "chronicle://files/a%20b/c%3F.md?iteration=3",
    },
    {
      description: "non-ASCII is encoded",
      input: ["ü/é.txt", 2],
      expected: "chronicle://files/%C3%BC/%C3%A9.txt?iteration=2",
    },
  ] as const;
  for (const { description, input, expected } of roundTrips) {
    await t.step(description, () => {
      assertEquals(fileUri(input[0], input[1]), expected);
      assertEquals(parseFileUri(expected), { path: input[0], iteration: input[1] });
    });
  }
  await t.step("without ?iteration, the latest", () => {
    assertEquals(parseFileUri("chronicle://files/a.md"), { path: "a.md", iteration: undefined });
  });
  const refused = [
    { description: "another scheme", input: "file:///etc/passwd", expected: "Unknown resource" },
    {
      description: "iteration zero",
      input: "chronicle://files/a?iteration=0",
      expected: "Invalid iteration",
    },
    {
      description: "a negative iteration",
      input: "chronicle://files/a?iteration=-1",
      expected: "Invalid iteration",
    },
    {
      description: "a huge iteration",
      input: "chronicle://files/a?iteration=99999999999999999",
      expected: "Invalid iteration",
    },
    {
      description: "broken percent-encoding",
      input: "chronicle://files/%E0%A4%A?iteration=1",
      expected: "percent-encoding",
    },
  ];
  for (const { description, input, expected } of refused) {
    await t.step(description, () => {
      assertThrows(() => parseFileUri(input), Error, expected);
    });
  }
});

Deno.test("windowText: text windows, cut characters, binary", async (t) => {
  const euro = bytes("a€b"); // € is three bytes
  const cases = [
    { description: "whole text", input: [bytes("hi\n"), false, false], expected: "hi\n" },
    {
      description: "NUL is binary",
      input: [new Uint8Array([104, 0, 105]), false, false],
      expected: null,
    },
    {
      description: "cut inside € at the end",
      input: [euro.subarray(0, 3), false, true],
      expected: "a",
    },
    {
      description: "cut inside € at the start",
      input: [euro.subarray(2), true, false],
      expected: "b",
    },
    {
      description: "invalid UTF-8 not at a cut stays binary",
      input: [new Uint8Array([0xff, 0x41]), false, false],
      expected: null,
    },
  ] as const;
  for (const { description, input, expected } of cases) {
    await t.step(
      description,
      () => assertEquals(windowText(input[0], input[1], input[2]), expected),
    );
  }
});

Deno.test("mimeTypeOf: by extension, else by content", async (t) => {
  const cases = [
    { description: "markdown", input: ["docs/a.md", true], expected: "text/markdown" },
    { description: "upper-case extension", input: ["IMG.PNG", false], expected: "image/png" },
    { description: "unknown text", input: ["Makefile", true], expected: "text/plain" },
    {
      description: "unknown binary",
      input: ["blob.dat", false],
      expected: "application/octet-stream",
    },
    {
      description: "a dot in a folder is no extension",
      input: ["a.md/file", true],
      expected: "text/plain",
    },
  ] as const;
  for (const { description, input, expected } of cases) {
    await t.step(description, () => assertEquals(mimeTypeOf(input[0], input[1]), expected));
  }
});
