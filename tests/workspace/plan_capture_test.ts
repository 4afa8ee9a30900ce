import assert from "node:assert/strict";
import type { FileState } from "../../lib/store/mod.ts";
import { FOLDER_HASH, planCapture, RACY_WINDOW_MS } from "../../lib/workspace/mod.ts";
import {
  changedDuringScan,
  scanVerdict,
  SETTLE_MS,
  settledWhenPlaced,
  stateToRemember,
} from "../../lib/workspace/plan_capture.ts";

const H = "a".repeat(64);
const seen = (
  path: string,
  over: Partial<{ size: number; mtimeMs: number; ino: number; mode: number }> = {},
) => ({
  path,
  kind: "file" as const,
  size: 10,
  mtimeMs: 1000,
  ino: 7,
  mode: 0o100644,
  ...over,
});
const folder = (path: string) => ({
  ...seen(path, { mode: 0o40755, size: 0 }),
  kind: "dir" as const,
});
const known = (path: string, over: Partial<FileState> = {}): [string, FileState] => [
  path,
  { path, size: 10, mtimeMs: 1000, ino: 7, mode: 0o100644, hash: H, ...over },
];

Deno.test("planCapture() hashes only what changed and finds deletions", () => {
  const table = [
    {
      description: "new file",
      seen: [seen("a")],
      known: [],
      live: [],
      expected: { toHash: ["a"], unchanged: [], deleted: [] },
    },
    {
      description: "unchanged",
      seen: [seen("a")],
      known: [known("a")],
      live: ["a"],
      expected: { toHash: [], unchanged: ["a"], deleted: [] },
    },
    {
      description: "size changed",
      seen: [seen("a", { size: 11 })],
      known: [known("a")],
      live: ["a"],
      expected: { toHash: ["a"], unchanged: [], deleted: [] },
    },
    {
      description: "mtime changed",
      seen: [seen("a", { mtimeMs: 2000 })],
      known: [known("a")],
      live: ["a"],
      expected: { toHash: ["a"], unchanged: [], deleted: [] },
    },
    {
      description: "replaced (inode)",
      seen: [seen("a", { ino: 8 })],
      known: [known("a")],
      live: ["a"],
      expected: { toHash: ["a"], unchanged: [], deleted: [] },
    },
    {
      description: "chmod",
      seen: [seen("a", { mode: 0o100755 })],
      known: [known("a")],
      live: ["a"],
      expected: { toHash: ["a"], unchanged: [], deleted: [] },
    },
    {
      description: "racy state",
      seen: [seen("a")],
      known: [known("a", { mtimeMs: -1 })],
      live: ["a"],
      expected: { toHash: ["a"], unchanged: [], deleted: [] },
    },
    {
      description: "deleted",
      seen: [],
      known: [known("a")],
      live: ["a"],
      expected: { toHash: [], unchanged: [], deleted: ["a"] },
    },
    {
      description: "a folder is never read: unchanged, whatever its stat (PROTOCOL.md §8)",
      seen: [folder("d"), folder("e")],
      known: [],
      live: ["d"],
      expected: { toHash: [], unchanged: ["d", "e"], deleted: [] },
    },
    {
      description: "a folder gone is deleted, as a file is",
      seen: [seen("d/a")],
      known: [known("d/a")],
      live: ["d", "d/a"],
      expected: { toHash: [], unchanged: ["d/a"], deleted: ["d"] },
    },
  ];
  for (const row of table) {
    const plan = planCapture(row.seen, new Map(row.known), row.live);
    for (const { file, hash } of plan.unchanged) {
      if (file.kind === "dir") assert.equal(hash, FOLDER_HASH, `${row.description}: ${file.path}`);
    }
    assert.deepEqual(
      {
        toHash: plan.toHash.map((f) => f.path),
        unchanged: plan.unchanged.map((u) => u.file.path),
        deleted: plan.deleted,
      },
      row.expected,
      row.description,
    );
  }
});

Deno.test("stateToRemember() distrusts an mtime inside the racy window", () => {
  const now = 100_000;
  assert.equal(
    stateToRemember(seen("a", { mtimeMs: now - RACY_WINDOW_MS - 1 }), H, now).mtimeMs,
    now - RACY_WINDOW_MS - 1,
  );
  assert.equal(stateToRemember(seen("a", { mtimeMs: now - 10 }), H, now).mtimeMs, -1);
  assert.equal(stateToRemember(seen("a", { mtimeMs: now - 10 }), H, now, true).mtimeMs, now - 10);
});

Deno.test("settledWhenPlaced() trusts a file placed once the clock moved past its time", async (t) => {
  const mtimeMs = 1_795_797_533_514;
  const table = [
    { description: "placed at once: racy", input: { mtimeMs, placedAt: mtimeMs }, expected: false },
    {
      description: "placed a moment too soon: racy",
      input: { mtimeMs, placedAt: mtimeMs + SETTLE_MS - 1 },
      expected: false,
    },
    {
      description: "placed SETTLE_MS later: settled",
      input: { mtimeMs, placedAt: mtimeMs + SETTLE_MS },
      expected: true,
    },
    {
      description: "placed long after: settled",
      input: { mtimeMs, placedAt: mtimeMs + 60_000 },
      expected: true,
    },
    {
      description: "a time in whole seconds (ext3, FAT may keep no more): racy",
      input: { mtimeMs: 1_795_797_533_000, placedAt: 1_795_797_593_000 },
      expected: false,
    },
    {
      description: "a time before the placing's clock (set back): racy",
      input: { mtimeMs, placedAt: mtimeMs - 5_000 },
      expected: false,
    },
  ];
  for (const row of table) {
    await t.step(row.description, () => {
      assert.equal(settledWhenPlaced(row.input.mtimeMs, row.input.placedAt), row.expected);
    });
  }
});

Deno.test("scanVerdict() is planCapture()'s rule for one path a scan saw", async (t) => {
  const table = [
    {
      description: "never seen: read",
      input: { file: seen("a"), known: undefined, recorded: undefined },
      expected: "hash",
    },
    {
      description: "seen with another size: read",
      input: {
        file: seen("a", { size: 11 }),
        known: known("a")[1],
        recorded: { hash: H, mode: 0o100644 },
      },
      expected: "hash",
    },
    {
      description: "racy state (mtime -1): read",
      input: {
        file: seen("a"),
        known: known("a", { mtimeMs: -1 })[1],
        recorded: { hash: H, mode: 0o100644 },
      },
      expected: "hash",
    },
    {
      description: "unchanged and recorded as it is: nothing",
      input: { file: seen("a"), known: known("a")[1], recorded: { hash: H, mode: 0o100644 } },
      expected: "unchanged",
    },
    {
      description: "unchanged, recorded with other content: record again",
      input: {
        file: seen("a"),
        known: known("a")[1],
        recorded: { hash: "b".repeat(64), mode: 0o100644 },
      },
      expected: "recordsOtherwise",
    },
    {
      description: "unchanged on disk, not live: record",
      input: { file: seen("a"), known: known("a")[1], recorded: undefined },
      expected: "recordsOtherwise",
    },
    {
      description: "a folder recorded with its mode: nothing",
      input: {
        file: folder("d"),
        known: undefined,
        recorded: { hash: FOLDER_HASH, mode: 0o40755 },
      },
      expected: "unchanged",
    },
    {
      description: "a folder whose mode changed: record again",
      input: {
        file: folder("d"),
        known: undefined,
        recorded: { hash: FOLDER_HASH, mode: 0o40700 },
      },
      expected: "recordsOtherwise",
    },
  ];
  for (const row of table) {
    await t.step(row.description, () => {
      const { file, known: state, recorded } = row.input;
      assert.equal(scanVerdict(file, state, recorded), row.expected);
    });
  }
});

Deno.test("changedDuringScan() leaves to the watcher what was modified after the scan's walk began", async (t) => {
  const since = 10_000;
  const now = 12_000;
  const table = [
    {
      description: "modified before the walk began: recorded",
      input: seen("a", { mtimeMs: since - 1 }),
      expected: false,
    },
    {
      description: "modified within the millisecond the walk began (maybe before): recorded",
      input: seen("a", { mtimeMs: since }),
      expected: false,
    },
    {
      description: "modified in the millisecond after the walk began: left",
      input: seen("a", { mtimeMs: since + 1 }),
      expected: true,
    },
    {
      description: "modified while the scan ran: left",
      input: seen("a", { mtimeMs: since + 500 }),
      expected: true,
    },
    {
      description: "modified now: left",
      input: seen("a", { mtimeMs: now }),
      expected: true,
    },
    {
      description: "a modification time after now (set, not written): recorded",
      input: seen("a", { mtimeMs: now + 1 }),
      expected: false,
    },
    {
      description: "a folder, whatever its time: recorded",
      input: { ...folder("d"), mtimeMs: since + 500 },
      expected: false,
    },
  ];
  for (const { description, input, expected } of table) {
    await t.step(description, () => assert.equal(changedDuringScan(input, since, now), expected));
  }
});
