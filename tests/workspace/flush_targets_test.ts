import assert from "node:assert/strict";
import { fileSystemsToFlush } from "../../lib/workspace/flush_targets.ts";

Deno.test("fileSystemsToFlush() gives one folder per device, looking only at folders it must", async (t) => {
  const cases: {
    description: string;
    input: {
      folders: string[];
      known: (number | undefined)[];
      /** The device of each folder now; missing: gone. */
      disk: Record<string, number>;
    };
    expected: { targets: string[]; looked: string[] };
  }[] = [
    {
      description: "folders the checks found on one device: only the one flushed is looked at",
      input: { folders: ["a", "b", "c"], known: [1, 1, 1], disk: { a: 1, b: 1, c: 1 } },
      expected: { targets: ["a"], looked: ["a"] },
    },
    {
      description: "unknown folders are looked at, each",
      input: {
        folders: ["a", "b", "c"],
        known: [undefined, undefined, undefined],
        disk: { a: 1, b: 1, c: 1 },
      },
      expected: { targets: ["a"], looked: ["a", "b", "c"] },
    },
    {
      description: "a device an unknown folder was found on needs no other look",
      input: { folders: ["a", "b"], known: [1, undefined], disk: { a: 1, b: 1 } },
      expected: { targets: ["b"], looked: ["b"] },
    },
    {
      description: "a mount inside the workspace is flushed too",
      input: { folders: ["a", "m/x", "b"], known: [1, 2, 1], disk: { a: 1, "m/x": 2, b: 1 } },
      expected: { targets: ["a", "m/x"], looked: ["a", "m/x"] },
    },
    {
      description: "a folder removed since is passed over for the next of its device",
      input: { folders: ["gone", "b", "c"], known: [1, 1, 1], disk: { b: 1, c: 1 } },
      expected: { targets: ["b"], looked: ["gone", "b"] },
    },
    {
      description: "a folder now on another device is flushed as found, and the next one looked at",
      input: { folders: ["a", "b"], known: [1, 1], disk: { a: 3, b: 1 } },
      expected: { targets: ["a", "b"], looked: ["a", "b"] },
    },
    {
      description: "every folder of a device gone: nothing to flush there",
      input: { folders: ["a", "b"], known: [1, 1], disk: {} },
      expected: { targets: [], looked: ["a", "b"] },
    },
    {
      description: "no folders",
      input: { folders: [], known: [], disk: {} },
      expected: { targets: [], looked: [] },
    },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => {
      const looked: string[] = [];
      const targets = fileSystemsToFlush(input.folders, input.known, (folder) => {
        looked.push(folder);
        return input.disk[folder] ?? null;
      });
      assert.deepEqual({ targets, looked }, expected);
    });
  }
});
