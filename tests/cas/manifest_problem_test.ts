import assert from "node:assert/strict";
import { manifestProblem } from "../../lib/cas/mod.ts";

const A = "a".repeat(64);
const B = "b".repeat(64);

Deno.test("manifestProblem() accepts sound manifests and names the first problem", async (t) => {
  const cases: { description: string; input: unknown; expected: RegExp | null }[] = [
    {
      description: "two chunks tiling the content",
      input: {
        total_size: 30,
        chunk_size: 1048576,
        chunks: [{ hash: A, offset: 0, size: 10 }, { hash: B, offset: 10, size: 20 }],
      },
      expected: null,
    },
    {
      description: "a repeated chunk",
      input: {
        total_size: 20,
        chunk_size: 1,
        chunks: [{ hash: A, offset: 0, size: 10 }, { hash: A, offset: 10, size: 10 }],
      },
      expected: null,
    },
    {
      description: "empty content",
      input: { total_size: 0, chunk_size: 1, chunks: [] },
      expected: null,
    },
    { description: "not an object", input: "x", expected: /not an object/ },
    { description: "null", input: null, expected: /not an object/ },
    {
      description: "negative total",
      input: { total_size: -1, chunk_size: 1, chunks: [] },
      expected: /total_size "-1"/,
    },
    {
      description: "fractional chunk_size",
      input: { total_size: 0, chunk_size: 1.5, chunks: [] },
      expected: /chunk_size "1.5"/,
    },
    {
      description: "chunks missing",
      input: { total_size: 0, chunk_size: 1 },
      expected: /chunks is not a list/,
    },
    {
      description: "gap between chunks",
      input: {
        total_size: 30,
        chunk_size: 1,
        chunks: [{ hash: A, offset: 0, size: 10 }, { hash: B, offset: 11, size: 19 }],
      },
      expected: /chunk 1 offset "11" .*expected "10"/,
    },
    {
      description: "overlapping chunks",
      input: {
        total_size: 30,
        chunk_size: 1,
        chunks: [{ hash: A, offset: 0, size: 10 }, { hash: B, offset: 5, size: 25 }],
      },
      expected: /chunk 1 offset "5"/,
    },
    {
      description: "first chunk not at 0",
      input: { total_size: 10, chunk_size: 1, chunks: [{ hash: A, offset: 1, size: 9 }] },
      expected: /chunk 0 offset "1"/,
    },
    {
      description: "sizes short of total",
      input: { total_size: 11, chunk_size: 1, chunks: [{ hash: A, offset: 0, size: 10 }] },
      expected: /cover "10" bytes but total_size is "11"/,
    },
    {
      description: "empty chunk",
      input: { total_size: 0, chunk_size: 1, chunks: [{ hash: A, offset: 0, size: 0 }] },
      expected: /chunk 0 size "0"/,
    },
    {
      description: "path in a chunk hash",
      input: {
        total_size: 1,
        chunk_size: 1,
        chunks: [{ hash: "../../etc/passwd", offset: 0, size: 1 }],
      },
      expected: /chunk 0 hash "..\/..\/etc\/passwd" is not a content hash/,
    },
    {
      description: "uppercase chunk hash",
      input: {
        total_size: 1,
        chunk_size: 1,
        chunks: [{ hash: A.toUpperCase(), offset: 0, size: 1 }],
      },
      expected: /chunk 0 hash/,
    },
    {
      description: "chunk not an object",
      input: { total_size: 1, chunk_size: 1, chunks: [7] },
      expected: /chunk 0 is not an object/,
    },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => {
      const problem = manifestProblem(input);
      if (expected === null) assert.equal(problem, null);
      else assert.match(problem ?? "(null)", expected);
    });
  }
});
