/** What a finished resync removes: a pure decision, tested by a table. */
import { assertEquals } from "./_assert.ts";
import { type LivePath, resyncRemovals } from "../../lib/replication/replica_resync.ts";

const file = 0o100644;
const folder = 0o40755;

Deno.test("resyncRemovals() removes what the master no longer has, files first, folders deepest first", async (t) => {
  const table: {
    description: string;
    input: { live: LivePath[]; kept: string[] };
    expected: { path: string; folder: boolean }[][];
  }[] = [
    {
      description: "nothing gone: one empty batch of files",
      input: { live: [{ path: "a", mode: file }], kept: ["a"] },
      expected: [[]],
    },
    {
      description: "files gone are removed together, before any folder",
      input: {
        live: [{ path: "a", mode: file }, { path: "d", mode: folder }, { path: "d/b", mode: file }],
        kept: [],
      },
      expected: [[{ path: "a", folder: false }, { path: "d/b", folder: false }], [{
        path: "d",
        folder: true,
      }]],
    },
    {
      description: "folders are removed a level at a time, deepest first",
      input: {
        live: [
          { path: "x", mode: folder },
          { path: "x/y", mode: folder },
          { path: "x/y/z", mode: folder },
          { path: "w", mode: folder },
        ],
        kept: [],
      },
      expected: [
        [],
        [{ path: "x/y/z", folder: true }],
        [{ path: "x/y", folder: true }],
        [{ path: "x", folder: true }, { path: "w", folder: true }],
      ],
    },
    {
      description: "a folder holding a path kept here stays, with its own folders",
      input: {
        live: [
          { path: "d", mode: folder },
          { path: "d/e", mode: folder },
          { path: "d/e/kept.txt", mode: file },
          { path: "d/gone.txt", mode: file },
        ],
        kept: ["d/e/kept.txt"],
      },
      expected: [[{ path: "d/gone.txt", folder: false }]],
    },
  ];
  for (const { description, input, expected } of table) {
    await t.step(description, () => {
      const kept = new Set(input.kept);
      assertEquals(resyncRemovals(input.live, (path) => kept.has(path)), expected);
    });
  }
});
