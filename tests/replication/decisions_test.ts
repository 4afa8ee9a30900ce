/** The pure decisions of replication, tested by tables. */
import { assertEquals } from "./_assert.ts";
import {
  type ApplyAction,
  type ApplyFacts,
  type CatchupDecision,
  decideApply,
  decideCatchup,
  decideWriteBack,
  type JournalPlanContext,
  type MasterVersion,
  planJournalEntries,
  reasonWord,
  sandboxIdProblem,
  type WriteBackFacts,
} from "../../lib/replication/mod.ts";
import { EMPTY_HASH } from "../../lib/cas/mod.ts";
import type { Iteration } from "../../lib/store/mod.ts";
import type { WriteBackEntry } from "../../lib/wire/mod.ts";

Deno.test("decideCatchup() replays when it can and requires a resync when it cannot", () => {
  const table: {
    description: string;
    input: Parameters<typeof decideCatchup>[0];
    expected: CatchupDecision["kind"];
  }[] = [
    { description: "new replica", input: { since: 0, current: 50, floor: 0 }, expected: "replay" },
    { description: "behind", input: { since: 10, current: 50, floor: 0 }, expected: "replay" },
    { description: "up to date", input: { since: 50, current: 50, floor: 0 }, expected: "replay" },
    {
      description: "ahead of the master",
      input: { since: 51, current: 50, floor: 0 },
      expected: "resync",
    },
    {
      description: "history gone",
      input: { since: 10, current: 50, floor: 20 },
      expected: "resync",
    },
    {
      description: "at the floor",
      input: { since: 20, current: 50, floor: 20 },
      expected: "replay",
    },
    {
      description: "new replica, history pruned",
      input: { since: 0, current: 50, floor: 20 },
      expected: "replay",
    },
  ];
  for (const { description, input, expected } of table) {
    assertEquals(decideCatchup(input).kind, expected, description);
  }
});

function entry(overrides: Partial<WriteBackEntry> = {}): WriteBackEntry {
  return {
    local_seq: 1n,
    filepath: "src/a.ts",
    operation: { type: "Write" },
    content_hash: "ab".repeat(32),
    content_bytes: new Uint8Array([1, 2, 3]),
    size: 3n,
    permissions: 0o100644n,
    is_deletion: false,
    master_rowid_seen: 10n,
    ...overrides,
  };
}

function facts(overrides: Partial<WriteBackFacts> = {}): WriteBackFacts {
  return {
    sandboxId: "sb-1",
    dataDir: ".chronicle",
    maxContentBytes: 1000,
    content: "verified",
    paths: {
      "src/a.ts": { filtered: false, later: [] },
      "src/b.ts": { filtered: false, later: [] },
    },
    ...overrides,
  };
}

const EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

Deno.test("decideWriteBack() applies the causal rule and the entry checks", () => {
  const folderRemoval = entry({
    filepath: "src",
    operation: { type: "Delete" },
    content_hash: null,
    content_bytes: null,
    size: 0n,
    permissions: 0n,
    is_deletion: true,
  });
  const target = new TextEncoder().encode("/etc/passwd");
  const absoluteLink = entry({
    content_bytes: target,
    size: BigInt(target.length),
    permissions: 0o120777n,
  });
  const later = (origin: string, sequence = 11) => ({
    filtered: false,
    later: [{ sequence, origin }],
  });
  const table: {
    description: string;
    entry: WriteBackEntry;
    facts: WriteBackFacts;
    expected: string;
  }[] = [
    { description: "nothing newer", entry: entry(), facts: facts(), expected: "accept" },
    {
      description: "the replica's own later write never conflicts",
      entry: entry(),
      facts: facts({ paths: { "src/a.ts": later("sb-1") } }),
      expected: "accept",
    },
    {
      description: "an agent edit after master_rowid_seen conflicts",
      entry: entry(),
      facts: facts({ paths: { "src/a.ts": later("local") } }),
      expected: "conflict",
    },
    {
      description: "another sandbox's write conflicts",
      entry: entry(),
      facts: facts({ paths: { "src/a.ts": later("sb-2") } }),
      expected: "conflict",
    },
    {
      description: "an iteration at master_rowid_seen itself was seen",
      entry: entry(),
      facts: facts({ paths: { "src/a.ts": later("local", 10) } }),
      expected: "accept",
    },
    {
      description: "a rename checks its destination too",
      entry: entry({ operation: { type: "Rename", new_path: "src/b.ts" }, content_bytes: null }),
      facts: facts({
        paths: { "src/a.ts": { filtered: false, later: [] }, "src/b.ts": later("local") },
      }),
      expected: "conflict",
    },
    {
      description: "a rename with both paths untouched",
      entry: entry({ operation: { type: "Rename", new_path: "src/b.ts" }, content_bytes: null }),
      facts: facts(),
      expected: "accept",
    },
    {
      description: "a path leaving the workspace",
      entry: entry({ filepath: "../etc/passwd" }),
      facts: facts(),
      expected: "invalid path",
    },
    {
      description: "an absolute path",
      entry: entry({ filepath: "/etc/passwd" }),
      facts: facts(),
      expected: "invalid path",
    },
    {
      description: "a path in the data folder",
      entry: entry({ filepath: ".chronicle/chronicle.db" }),
      facts: facts(),
      expected: "invalid path",
    },
    {
      description: "a path not normalized",
      entry: entry({ filepath: "src//a.ts" }),
      facts: facts(),
      expected: "invalid path",
    },
    {
      description: "a filtered path",
      entry: entry(),
      facts: facts({ paths: { "src/a.ts": { filtered: true, later: [] } } }),
      expected: "filtered",
    },
    {
      description: "content over the limit",
      entry: entry({ content_bytes: new Uint8Array(1001), size: 1001n }),
      facts: facts(),
      expected: "too large",
    },
    {
      description: "bytes that do not match",
      entry: entry(),
      facts: facts({ content: "mismatch" }),
      expected: "invalid content",
    },
    {
      description: "no bytes and no stored content",
      entry: entry({ content_bytes: null }),
      facts: facts({ content: "missing" }),
      expected: "invalid content",
    },
    {
      description: "no bytes but the master holds the content",
      entry: entry({ content_bytes: null }),
      facts: facts({ content: "stored" }),
      expected: "accept",
    },
    {
      description: "a size that does not match the bytes",
      entry: entry({ size: 4n }),
      facts: facts(),
      expected: "invalid content",
    },
    {
      description: "a delete needs no content",
      entry: entry({
        operation: { type: "Delete" },
        content_hash: null,
        content_bytes: null,
        is_deletion: true,
      }),
      facts: facts({ content: "missing" }),
      expected: "accept",
    },
    {
      description: "removing a folder the master holds nothing in is accepted (PROTOCOL.md §8)",
      entry: folderRemoval,
      facts: facts({ paths: { "src": { filtered: false, later: [], holdsLive: false } } }),
      expected: "accept",
    },
    {
      description: "removing a folder holding paths the replica did not remove conflicts",
      entry: folderRemoval,
      facts: facts({ paths: { "src": { filtered: false, later: [], holdsLive: true } } }),
      expected: "conflict",
    },
    {
      description:
        "a file written over a folder holding paths the replica did not remove conflicts",
      entry: entry({ filepath: "src" }),
      facts: facts({ paths: { "src": { filtered: false, later: [], holdsLive: true } } }),
      expected: "conflict",
    },
    {
      description: "a folder is written like a file: its mode, the empty content",
      entry: entry({
        filepath: "src",
        content_hash: EMPTY,
        content_bytes: new Uint8Array(0),
        size: 0n,
        permissions: 0o40750n,
      }),
      facts: facts({ paths: { "src": { filtered: false, later: [] } } }),
      expected: "accept",
    },
    {
      description:
        "a write of what the master already holds conflicts with nothing, made by nothing",
      entry: entry(),
      facts: facts({ paths: { "src/a.ts": { ...later("local"), alreadyHeld: true } } }),
      expected: "accept unchanged",
    },
    {
      description: "a removal of what the master removed too conflicts with nothing",
      entry: folderRemoval,
      facts: facts({ paths: { "src": { ...later("local"), alreadyHeld: true } } }),
      expected: "accept unchanged",
    },
    {
      description: "...unless the master holds paths inside it",
      entry: folderRemoval,
      facts: facts({ paths: { "src": { ...later("local"), alreadyHeld: true, holdsLive: true } } }),
      expected: "conflict",
    },
    {
      description: "a link whose target leaves the workspace is forbidden",
      entry: absoluteLink,
      facts: facts({ paths: { "src/a.ts": { filtered: false, later: [] } } }),
      expected: "forbidden",
    },
    {
      description:
        "...but one the master records already (its own, in a copy the replica started on) is made by nothing",
      entry: absoluteLink,
      facts: facts({ paths: { "src/a.ts": { ...later("local"), alreadyHeld: true } } }),
      expected: "accept unchanged",
    },
    {
      description: "what the master holds weighs nothing against invalid content",
      entry: entry({ content_bytes: new TextEncoder().encode("other") }),
      facts: facts({
        content: "mismatch",
        paths: { "src/a.ts": { filtered: false, later: [], alreadyHeld: true } },
      }),
      expected: "invalid content",
    },
  ];
  for (const { description, entry, facts, expected } of table) {
    const verdict = decideWriteBack(entry, facts);
    const decided = verdict.accept
      ? (verdict.unchanged ? "accept unchanged" : "accept")
      : verdict.reason;
    assertEquals(decided, expected, description);
    if (!verdict.accept) assertEquals(reasonWord(verdict.message), expected, description);
  }
  // A conflict says, for a person, what came after the version the sandbox last saw.
  const messages: [string, number, string][] = [
    [
      "local",
      10,
      '"src/a.ts" changed on the master at sequence 11 (an edit on its disk), after the version of it this sandbox had (sequence 10)',
    ],
    [
      "sb-2",
      0,
      '"src/a.ts" changed on the master at sequence 11 (a write-back from sandbox "sb-2"), while this sandbox had no version of it',
    ],
    ["api", 3, "at sequence 11 (a write through its API)"],
    ["restore", 3, "at sequence 11 (a restore)"],
    ["rollback", 3, "at sequence 11 (a rollback)"],
  ];
  for (const [origin, seen, text] of messages) {
    const verdict = decideWriteBack(
      entry({ master_rowid_seen: BigInt(seen) }),
      facts({ paths: { "src/a.ts": later(origin) } }),
    );
    assertEquals(verdict.accept, false);
    if (!verdict.accept) assertEquals(verdict.message.includes(text), true, verdict.message);
  }
  const escaping = decideWriteBack(entry({ filepath: "a/../../x" }), facts());
  assertEquals(!escaping.accept && escaping.disconnect, true);
});

Deno.test("decideApply() decides how a master version lands on a replica", () => {
  const v = (sequence: number, hash = "h2", deleted = false): MasterVersion => ({
    sequence,
    hash: deleted ? "" : hash,
    mode: deleted ? 0 : 0o100644,
    deleted,
  });
  const base: ApplyFacts = {
    version: v(20),
    local: { hash: "h1", mode: 0o100644, deleted: false },
    state: { path: "a", applied: v(10, "h1"), acceptedSeq: 0, deferred: null },
    pendingWriteBack: false,
    filtered: false,
  };
  const table: { description: string; facts: ApplyFacts; expected: ApplyAction }[] = [
    { description: "new content", facts: base, expected: "write" },
    {
      description: "content already held",
      facts: { ...base, local: { hash: "h2", mode: 0o100644, deleted: false } },
      expected: "noop",
    },
    {
      description: "same content, new mode",
      facts: { ...base, local: { hash: "h2", mode: 0o100755, deleted: false } },
      expected: "write",
    },
    {
      description: "a deletion of a live file",
      facts: { ...base, version: v(20, "", true) },
      expected: "remove",
    },
    {
      description: "a deletion of an absent file",
      facts: { ...base, version: v(20, "", true), local: { hash: "", mode: 0, deleted: true } },
      expected: "noop",
    },
    {
      description: "own write-backs unanswered",
      facts: { ...base, pendingWriteBack: true },
      expected: "defer",
    },
    {
      description: "a conflict awaiting a person",
      facts: { ...base, unresolvedConflict: true },
      expected: "defer",
    },
    { description: "filtered here", facts: { ...base, filtered: true }, expected: "skip-filtered" },
    {
      description: "older than the replica's own accepted write",
      facts: { ...base, state: { ...base.state, acceptedSeq: 25 } },
      expected: "skip-superseded",
    },
    {
      description: "the replica's own accepted write coming back",
      facts: {
        ...base,
        state: { ...base.state, acceptedSeq: 20 },
        local: { hash: "h2", mode: 0o100644, deleted: false },
      },
      expected: "noop",
    },
  ];
  for (const { description, facts, expected } of table) {
    assertEquals(decideApply(facts), expected, description);
  }
});

const DIR = 0o40755;

function it(path: string, sequence: number, hash: string, mode = 0o100644): Iteration {
  const deleted = hash === "";
  return {
    path,
    iteration: 1,
    sequence,
    timestamp: 0,
    size: deleted ? 0 : 5,
    hash,
    mode: deleted ? 0 : mode,
    deleted,
    origin: "local",
  };
}

Deno.test("planJournalEntries() classifies captured changes", () => {
  const none: JournalPlanContext = {
    seen: new Map(),
    deferred: new Set(),
    filtered: new Set(),
    masterContent: new Map(),
  };
  /** The master holds content "h" at "a" (and "h3" at "x/b", "h" at "d/a"). */
  const held = new Map([["a", "h"], ["x/b", "h3"], ["d/a", "h"]]);
  const table: {
    description: string;
    changes: Parameters<typeof planJournalEntries>[0];
    context?: JournalPlanContext;
    expected: [string, string, string | null, number][];
  }[] = [
    {
      description: "a new file is a write",
      changes: [{ current: it("a", 5, "h"), previous: undefined }],
      expected: [["write", "a", null, 0]],
    },
    {
      description: "new content is a write with the path's applied sequence",
      changes: [{ current: it("a", 5, "h2"), previous: it("a", 3, "h1") }],
      context: { ...none, seen: new Map([["a", 3]]) },
      expected: [["write", "a", null, 3]],
    },
    {
      description: "a changed mode alone is a chmod",
      changes: [{ current: it("a", 5, "h", 0o100755), previous: it("a", 3, "h") }],
      expected: [["chmod", "a", null, 0]],
    },
    {
      description: "a removal is a delete",
      changes: [{ current: it("a", 5, ""), previous: it("a", 3, "h") }],
      expected: [["delete", "a", null, 0]],
    },
    {
      description: "removing what is already gone is nothing",
      changes: [{ current: it("a", 5, ""), previous: it("a", 3, "") }],
      expected: [],
    },
    {
      description: "a removal and a creation of the same content is a rename (larger seen)",
      changes: [
        { current: it("a", 5, ""), previous: it("a", 3, "h") },
        { current: it("b", 6, "h"), previous: undefined },
      ],
      context: { ...none, seen: new Map([["a", 3], ["b", 1]]), masterContent: held },
      expected: [["rename", "a", "b", 3]],
    },
    {
      description:
        "a removal of content the master does not hold there (refused, or not recorded yet) is a delete and a write",
      changes: [
        { current: it("a", 5, ""), previous: it("a", 3, "h2") },
        { current: it("b", 6, "h2"), previous: undefined },
      ],
      context: { ...none, seen: new Map([["a", 3]]), masterContent: held },
      expected: [["delete", "a", null, 3], ["write", "b", null, 0]],
    },
    {
      description: "and of a path the master has no file at, the same",
      changes: [
        { current: it("n", 5, ""), previous: it("n", 3, "h") },
        { current: it("b", 6, "h"), previous: undefined },
      ],
      context: { ...none, masterContent: held },
      expected: [["delete", "n", null, 0], ["write", "b", null, 0]],
    },
    {
      description: "a rename touching a deferred path takes the smaller seen",
      changes: [
        { current: it("a", 5, ""), previous: it("a", 3, "h") },
        { current: it("b", 6, "h"), previous: undefined },
      ],
      context: {
        seen: new Map([["a", 3], ["b", 1]]),
        deferred: new Set(["b"]),
        filtered: new Set(),
        masterContent: held,
      },
      expected: [["rename", "a", "b", 1]],
    },
    {
      // Its own write's answer deferred at the source; the target new (seen 0). With the
      // smaller of the two, every past master change of the source was a conflict (the
      // racing soak's seeds 11 and 22: a folder renamed in a sandbox's own part, rejected).
      description: "a rename from a deferred path to a new one takes the deferred path's seen",
      changes: [
        { current: it("a", 5, ""), previous: it("a", 3, "h") },
        { current: it("b", 6, "h"), previous: undefined },
      ],
      context: {
        seen: new Map([["a", 3]]),
        deferred: new Set(["a"]),
        filtered: new Set(),
        masterContent: held,
      },
      expected: [["rename", "a", "b", 3]],
    },
    {
      description: "a rename between two deferred paths takes the smaller seen",
      changes: [
        { current: it("a", 5, ""), previous: it("a", 3, "h") },
        { current: it("b", 6, "h"), previous: undefined },
      ],
      context: {
        seen: new Map([["a", 3], ["b", 1]]),
        deferred: new Set(["a", "b"]),
        filtered: new Set(),
        masterContent: held,
      },
      expected: [["rename", "a", "b", 1]],
    },
    {
      // The racing soak (seed 30) with writes paused after their truncate: a removed empty
      // file and a new file captured empty, before its content, were a rename; rejected
      // and undone, it removed the new file while it was being written.
      description: "an empty file removed and another made empty are a delete and a write",
      changes: [
        { current: it("a", 5, ""), previous: { ...it("a", 3, EMPTY_HASH), size: 0 } },
        { current: { ...it("b", 6, EMPTY_HASH), size: 0 }, previous: undefined },
      ],
      expected: [["delete", "a", null, 0], ["write", "b", null, 0]],
    },
    {
      // A field trial: the replica restarted while `npm install` filled node_modules again.
      description: "a file removed and made again with its content is a delete and a write",
      changes: [
        { current: it("a", 5, ""), previous: it("a", 3, "h") },
        { current: it("a", 6, "h"), previous: it("a", 5, "") },
      ],
      context: { ...none, seen: new Map([["a", 3]]), masterContent: held },
      expected: [["delete", "a", null, 3], ["write", "a", null, 3]],
    },
    {
      // Paired crosswise, "a" was renamed onto "d/a" and "d/a" back onto "a": the master
      // lost "d/a".
      description: "two files of one content, both removed and made again, are no renames",
      changes: [
        { current: it("a", 5, ""), previous: it("a", 3, "h") },
        { current: it("d/a", 6, ""), previous: it("d/a", 3, "h") },
        { current: it("d/a", 7, "h"), previous: it("d/a", 6, "") },
        { current: it("a", 8, "h"), previous: it("a", 5, "") },
      ],
      context: { ...none, masterContent: held },
      expected: [
        ["delete", "a", null, 0],
        ["delete", "d/a", null, 0],
        ["write", "d/a", null, 0],
        ["write", "a", null, 0],
      ],
    },
    {
      // The same trial: each such folder's removal was refused (it holds the files made
      // again), a conflict for nothing.
      description: "a folder removed and made again, with a file of it, keeps the folder",
      changes: [
        { current: it("d/a", 5, ""), previous: it("d/a", 3, "h") },
        { current: it("d", 6, ""), previous: it("d", 2, EMPTY, DIR) },
        { current: it("d", 7, EMPTY, DIR), previous: it("d", 6, "") },
        { current: it("d/a", 8, "h"), previous: it("d/a", 5, "") },
      ],
      context: { ...none, masterContent: held },
      expected: [["delete", "d/a", null, 0], ["write", "d", null, 0], ["write", "d/a", null, 0]],
    },
    {
      description: "a folder removed and made again as a file: the file after the folder's removal",
      changes: [
        { current: it("d/a", 5, ""), previous: it("d/a", 3, "h") },
        { current: it("d", 6, ""), previous: it("d", 2, EMPTY, DIR) },
        { current: it("d", 7, "h2"), previous: it("d", 6, "") },
      ],
      context: { ...none, masterContent: held },
      expected: [["delete", "d/a", null, 0], ["delete", "d", null, 0], ["write", "d", null, 0]],
    },
    {
      // b moved to c, then a moved to b: paired a->b and b->c, the master moved a onto b
      // before b went to c, and c held a's content.
      description: "a chain of moves (b to c, then a to b): b's own move goes as its content",
      changes: [
        { current: it("b", 5, ""), previous: it("b", 3, "h3") },
        { current: it("a", 6, ""), previous: it("a", 3, "h") },
        { current: it("b", 7, "h"), previous: it("b", 5, "") },
        { current: it("c", 8, "h3"), previous: undefined }, // a move keeps its time: found late
      ],
      context: { ...none, masterContent: new Map([["a", "h"], ["b", "h3"]]) },
      expected: [["delete", "b", null, 0], ["rename", "a", "b", 0], ["write", "c", null, 0]],
    },
    {
      description: "a file moved onto a path removed and made again in the batch is a rename",
      changes: [
        { current: it("b", 5, ""), previous: it("b", 3, "h4") },
        { current: it("a", 6, ""), previous: it("a", 3, "h") },
        { current: it("b", 7, "h"), previous: it("b", 5, "") },
      ],
      context: { ...none, masterContent: held },
      expected: [["delete", "b", null, 0], ["rename", "a", "b", 0]],
    },
    {
      description: "different content is a delete and a write, not a rename",
      changes: [
        { current: it("a", 5, ""), previous: it("a", 3, "h") },
        { current: it("b", 6, "other"), previous: undefined },
      ],
      expected: [["delete", "a", null, 0], ["write", "b", null, 0]],
    },
    {
      description: "filtered paths are left out",
      changes: [{ current: it("build/x", 5, "h"), previous: undefined }],
      context: { ...none, filtered: new Set(["build/x"]) },
      expected: [],
    },
    {
      description: "a new folder is a write of its mode",
      changes: [{ current: it("d", 5, EMPTY, DIR), previous: undefined }],
      expected: [["write", "d", null, 0]],
    },
    {
      description: "a folder's mode change is a chmod",
      changes: [{ current: it("d", 5, EMPTY, 0o40700), previous: it("d", 3, EMPTY, DIR) }],
      expected: [["chmod", "d", null, 0]],
    },
    {
      description: "a folder replaced by an empty file is a write, not a chmod",
      changes: [{ current: it("d", 5, EMPTY), previous: it("d", 3, EMPTY, DIR) }],
      expected: [["write", "d", null, 0]],
    },
    {
      description: "a folder removed and another made are never a rename; removals last",
      changes: [
        { current: it("d", 5, ""), previous: it("d", 3, EMPTY, DIR) },
        { current: it("e", 6, EMPTY, DIR), previous: undefined },
        { current: it("empty.txt", 7, EMPTY), previous: undefined },
      ],
      expected: [["write", "e", null, 0], ["write", "empty.txt", null, 0], [
        "delete",
        "d",
        null,
        0,
      ]],
    },
    {
      description: "a moved folder: its new folder, its files' renames, then its removal",
      changes: [
        { current: it("d/a", 5, ""), previous: it("d/a", 3, "h") },
        { current: it("d", 6, ""), previous: it("d", 2, EMPTY, DIR) },
        { current: it("e", 7, EMPTY, DIR), previous: undefined },
        { current: it("e/a", 8, "h"), previous: undefined },
      ],
      context: { ...none, masterContent: held },
      expected: [["write", "e", null, 0], ["rename", "d/a", "e/a", 0], ["delete", "d", null, 0]],
    },
    {
      description: "a file replacing a folder tree comes after the tree's removal, children first",
      changes: [
        { current: it("x/in/a", 5, ""), previous: it("x/in/a", 3, "h") },
        { current: it("x/in", 6, ""), previous: it("x/in", 2, EMPTY, DIR) },
        { current: it("x", 7, "h2"), previous: it("x", 1, EMPTY, DIR) },
      ],
      expected: [["delete", "x/in/a", null, 0], ["delete", "x/in", null, 0], [
        "write",
        "x",
        null,
        0,
      ]],
    },
    {
      description:
        "a file replacing a folder of files comes after their removals and renames, even a rename captured after it",
      changes: [
        { current: it("x/a", 5, ""), previous: it("x/a", 3, "h") },
        { current: it("x/b", 6, ""), previous: it("x/b", 3, "h3") },
        { current: it("x", 7, "h2"), previous: it("x", 1, EMPTY, DIR) },
        { current: it("y/b", 8, "h3"), previous: undefined },
      ],
      context: { ...none, masterContent: held },
      expected: [["delete", "x/a", null, 0], ["rename", "x/b", "y/b", 0], [
        "write",
        "x",
        null,
        0,
      ]],
    },
  ];
  for (const { description, changes, context, expected } of table) {
    const entries = planJournalEntries(changes, context ?? none);
    assertEquals(
      entries.map((e) => [e.operation, e.path, e.newPath, e.masterSeen]),
      expected,
      description,
    );
  }
});

Deno.test("sandboxIdProblem() accepts printable UTF-8 ids and refuses the rest", () => {
  for (const good of ["sb-1", "sandbox.a:b_c", "песочница-🧪", "with space", "x".repeat(128)]) {
    assertEquals(sandboxIdProblem(good), null, good);
  }
  const bad: [string, string][] = [
    ["", "empty"],
    ["a/b", "slash"],
    ["a\\b", "slash"],
    ["a\u0000b", "control"],
    ["a\nb", "control"],
    ["a\u0085b", "control"],
    [" padded", "whitespace"],
    ["..", '".."'],
    ["é".repeat(65), "bytes long"],
  ];
  for (const [id, word] of bad) {
    const problem = sandboxIdProblem(id);
    assertEquals(
      problem !== null && problem.includes(word),
      true,
      `${JSON.stringify(id)}: ${problem}`,
    );
  }
});
