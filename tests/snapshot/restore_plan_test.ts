import type { Iteration } from "../../lib/store/mod.ts";
import {
  type ApplyStep,
  parseRestorePoint,
  planRestore,
  type RestoreChange,
} from "../../lib/snapshot/mod.ts";
import { restoreStep, restoreTargets } from "../../lib/snapshot/restore_plan.ts";
import { assertEquals, assertThrows } from "./_assert.ts";

const it = (path: string, hash: string, mode = 0o100644, deleted = false): Iteration => ({
  path,
  iteration: 1,
  sequence: 1,
  timestamp: 0,
  size: 1,
  hash,
  mode,
  deleted,
  origin: "local",
});

Deno.test("planRestore() writes back what differs and removes what did not exist", () => {
  const then = [it("a", "1"), it("b", "1"), it("d/x", "1"), it("e", "1")];
  const now = [
    it("a", "1"),
    it("b", "2"),
    it("c", "1"),
    it("d/x", "1", 0o100755),
    it("gone", "1", 0, true),
  ];
  const cases: Array<{ description: string; paths?: string[]; expected: string[] }> = [
    { description: "whole workspace", expected: ["b write", "c remove", "d/x write", "e write"] },
    { description: "one file", paths: ["b"], expected: ["b write"] },
    { description: "a folder", paths: ["d"], expected: ["d/x write"] },
    { description: "an unchanged path", paths: ["a"], expected: [] },
    { description: "a prefix is not a folder", paths: ["d/"], expected: [] },
  ];
  for (const { description, paths, expected } of cases) {
    const plan = planRestore({ sequence: 5, then, now, paths });
    assertEquals(plan.changes.map((c) => `${c.path} ${c.action}`), expected, description);
    assertEquals(plan.sequence, 5);
  }
  const [write] = planRestore({ sequence: 5, then, now, paths: ["b"] }).changes;
  assertEquals(write?.before, { hash: "2", size: 1, mode: 0o100644 });
  assertEquals(write?.after, { hash: "1", size: 1, mode: 0o100644 });
});

Deno.test("parseRestorePoint() reads sequences, date-times and durations ago", () => {
  const now = Date.UTC(2024, 4, 1, 12);
  const cases: Array<[string, ReturnType<typeof parseRestorePoint>]> = [
    ["42", { sequence: 42 }],
    ["0", { sequence: 0 }],
    ["2024-05-01T11:00:00Z", { timestamp: Date.UTC(2024, 4, 1, 11) }],
    ["2024-05-01", { timestamp: Date.UTC(2024, 4, 1) }],
    ["10m", { timestamp: now - 600_000 }],
    ["2h ago", { timestamp: now - 7_200_000 }],
    ["1d", { timestamp: now - 86_400_000 }],
    ["30s", { timestamp: now - 30_000 }],
  ];
  for (const [text, expected] of cases) assertEquals(parseRestorePoint(text, now), expected, text);
  for (const bad of ["", "-3", "yesterday", "10 minutes", "2024-13-45", "1.5"]) {
    assertThrows(() => parseRestorePoint(bad, now), SyntaxError, "Cannot read");
  }
});

Deno.test("restoreStep() removes, or writes a file or a link by its mode", async (t) => {
  const H = "ab".repeat(32);
  const old = { hash: H, size: 3, mode: 0o100644 };
  const cases: Array<{ description: string; input: RestoreChange; expected: ApplyStep }> = [
    {
      description: "a path that did not exist then is removed",
      input: { path: "new.txt", action: "remove", before: old, after: null },
      expected: { op: "remove", path: "new.txt", kind: "file" },
    },
    {
      description: "a file is written back with its mode",
      input: { path: "a.sh", action: "write", before: null, after: { ...old, mode: 0o100755 } },
      expected: { op: "write", path: "a.sh", kind: "file", hash: H, size: 3, mode: 0o100755 },
    },
    {
      description: "a link is written back as a link",
      input: { path: "l", action: "write", before: old, after: { ...old, mode: 0o120777 } },
      expected: { op: "write", path: "l", kind: "symlink", hash: H, size: 3, mode: 0o120777 },
    },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => assertEquals(restoreStep(input), expected));
  }
});

Deno.test("restoreTargets() captures every changed path, as a file when absent", async (t) => {
  const then = [it("a", "1"), it("d/x", "1")];
  const cases: Array<{ description: string; input: Iteration[]; expected: string[] }> = [
    { description: "nothing changes", input: then, expected: [] },
    {
      description: "a write, a removal and a recreation",
      input: [it("a", "2"), it("c", "1")],
      expected: ["a file", "c file", "d/x file"],
    },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => {
      const plan = planRestore({ sequence: 1, then, now: input });
      assertEquals(restoreTargets(plan).map((t) => `${t.path} ${t.absentKind}`), expected);
    });
  }
});
