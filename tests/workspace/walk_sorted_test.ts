import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { PathFilter } from "../../lib/filter/mod.ts";
import { Workspace } from "../../lib/workspace/mod.ts";
import { compareCodePoints, walkTreeSorted } from "../../lib/workspace/walk_tree.ts";
import { put, withTempDir } from "../_helpers/temp_dir.ts";

Deno.test("compareCodePoints() orders text as SQLite does (by UTF-8 bytes)", async (t) => {
  const table: { description: string; input: [string, string]; expected: -1 | 0 | 1 }[] = [
    { description: "equal", input: ["a/b", "a/b"], expected: 0 },
    { description: "a prefix first", input: ["a", "a.txt"], expected: -1 },
    { description: "'.' before '/'", input: ["a.txt", "a/x"], expected: -1 },
    { description: "'/' before '0'", input: ["a/x", "a0"], expected: -1 },
    { description: "' ' before '/'", input: ["a b", "a/b"], expected: -1 },
    { description: "ASCII before Latin-1", input: ["z", "é"], expected: -1 },
    {
      description: "above U+FFFF after U+FFFD (UTF-16 order says before)",
      input: ["\u{1F600}", "\uFFFD"],
      expected: 1,
    },
    { description: "above U+FFFF after U+D7FF", input: ["\u{10000}", "\uD7FF"], expected: 1 },
    { description: "two above U+FFFF", input: ["\u{1F600}", "\u{1F601}"], expected: -1 },
  ];
  for (const row of table) {
    await t.step(row.description, () => {
      const [a, b] = row.input;
      assert.equal(Math.sign(compareCodePoints(a, b)), row.expected);
      assert.equal(Math.sign(compareCodePoints(b, a)), -row.expected || 0);
    });
  }
});

/** Names whose order by path differs from a folder-by-folder walk's, and from UTF-16's. */
const TRICKY = [
  "a/x",
  "a/y/z",
  "a.txt",
  "a b",
  "a-b/c",
  "a0",
  "ab",
  "é/f",
  "\u{1F600}/g",
  "\uFFFD",
  "z",
];

/** The paths SQLite's `ORDER BY` gives, as the store reads them. */
function sqliteOrder(paths: string[]): string[] {
  const db = new DatabaseSync(":memory:");
  try {
    db.exec("CREATE TABLE p (path TEXT PRIMARY KEY)");
    const insert = db.prepare("INSERT INTO p VALUES (?)");
    for (const path of paths) insert.run(path);
    return db.prepare("SELECT path FROM p ORDER BY path").all().map((row) => String(row.path));
  } finally {
    db.close();
  }
}

Deno.test("walkTreeSorted() lists every file, link and folder in SQLite's order of paths", async (t) => {
  const table: { description: string; patterns: string[]; expected: string[] }[] = [
    {
      description: "everything",
      patterns: [],
      expected: [
        "a",
        "a b",
        "a-b",
        "a-b/c",
        "a.txt",
        "a/x",
        "a/y",
        "a/y/z",
        "a0",
        "ab",
        "link",
        "z",
        "é",
        "é/f",
        "\uFFFD",
        "\u{1F600}",
        "\u{1F600}/g",
      ],
    },
    {
      description: "an ignored folder is neither listed nor walked",
      patterns: ["a/"],
      expected: [
        "a b",
        "a-b",
        "a-b/c",
        "a.txt",
        "a0",
        "ab",
        "link",
        "z",
        "é",
        "é/f",
        "\uFFFD",
        "\u{1F600}",
        "\u{1F600}/g",
      ],
    },
  ];
  for (const row of table) {
    await t.step(row.description, async () => {
      await withTempDir(async (root) => {
        for (const path of TRICKY) await put(root, path, `${path}\n`);
        await Deno.symlink("a", `${root}/link`); // a link to a folder: listed, not followed
        const skipped: Array<{ path: string; reason: string }> = [];
        const walked: string[] = [];
        for await (const file of walkTreeSorted(root, new PathFilter(row.patterns), skipped)) {
          walked.push(file.path);
        }
        assert.deepEqual(walked, row.expected);
        assert.deepEqual(walked, sqliteOrder(walked));
        assert.deepEqual(skipped, []);
      });
    });
  }
});

Deno.test("a scan records what changed among names a folder-by-folder walk orders otherwise", async (t) => {
  const table: {
    description: string;
    change: (root: string) => Promise<void>;
    expected: { created: string[]; deleted: string[]; edited: string[] };
  }[] = [
    {
      description: "nothing changed: nothing recorded",
      change: () => Promise.resolve(),
      expected: { created: [], deleted: [], edited: [] },
    },
    {
      description: "a folder removed between its neighbours, one added, one file edited",
      change: async (root) => {
        await Deno.remove(`${root}/a`, { recursive: true });
        await put(root, "a.txt", "edited\n");
        await put(root, "a/new", "new\n");
        await put(root, "\u{1F600}/h", "h\n");
      },
      expected: {
        created: ["a/new", "\u{1F600}/h"],
        deleted: ["a/x", "a/y", "a/y/z"],
        edited: ["a.txt"],
      },
    },
    {
      description: "the last paths and the first removed",
      change: async (root) => {
        await Deno.remove(`${root}/\u{1F600}`, { recursive: true });
        await Deno.remove(`${root}/\uFFFD`);
        await Deno.remove(`${root}/a b`);
      },
      expected: { created: [], deleted: ["\u{1F600}", "\u{1F600}/g", "\uFFFD", "a b"], edited: [] },
    },
  ];
  for (const row of table) {
    await t.step(row.description, async () => {
      await withTempDir(async (root) => {
        for (const path of TRICKY) await put(root, path, `${path}\n`);
        const past = new Date(Date.now() - 60_000); // older than the racy window: trusted
        for (const path of TRICKY) await Deno.utime(`${root}/${path}`, past, past);
        const workspace = await Workspace.open({ root });
        try {
          await workspace.scan();
          await row.change(root);
          const { recorded } = await workspace.scan();
          const paths = (keep: (i: (typeof recorded)[number]) => boolean) =>
            recorded.filter(keep).map((i) => i.path).sort();
          const wasLive = new Set(TRICKY.flatMap((path) => [path, ...parents(path)]));
          assert.deepEqual({
            created: paths((i) => !i.deleted && !wasLive.has(i.path) && !isFolder(i.mode)),
            deleted: paths((i) => i.deleted),
            edited: paths((i) => !i.deleted && wasLive.has(i.path)),
          }, {
            created: row.expected.created.sort(),
            deleted: row.expected.deleted.sort(),
            edited: row.expected.edited.sort(),
          });
          // The store holds what the disk holds.
          const onDisk: string[] = [];
          for await (const file of walkTreeSorted(root, new PathFilter([".chronicle/"]), [])) {
            onDisk.push(file.path);
          }
          assert.deepEqual(workspace.store.list().map((i) => i.path).sort(), onDisk.sort());
        } finally {
          await workspace.close();
        }
      });
    });
  }
});

function parents(path: string): string[] {
  const parts = path.split("/");
  return parts.slice(1).map((_, i) => parts.slice(0, i + 1).join("/"));
}

function isFolder(mode: number): boolean {
  return (mode & 0o170000) === 0o040000;
}

Deno.test("walkTreeSorted() gives timers their turn every few ms, however slowly what it yields is used", () =>
  withTempDir(async (root) => {
    for (let i = 0; i < 60; i++) await put(root, `f${String(i).padStart(2, "0")}.txt`, "x");
    let fired = -1;
    let consumed = 0;
    setTimeout(() => (fired = consumed), 0);
    for await (const _ of walkTreeSorted(root, new PathFilter([]), [])) {
      // A scan's work on an entry, when the disk is busy: 2 ms each, far fewer entries than
      // a walk counts between two yields.
      const until = performance.now() + 2;
      while (performance.now() < until) { /* busy */ }
      consumed++;
    }
    assert.ok(fired >= 0 && fired <= 20, `the timer ran after ${fired} of 60 entries`);
  }));
