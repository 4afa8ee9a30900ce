import type { CapturedFile, IntegrityProblem, SnapshotRecord } from "../../lib/snapshot/mod.ts";
import {
  contentProblem,
  contentUsers,
  orphanProblem,
} from "../../lib/snapshot/verify_snapshots.ts";
import { assertEquals } from "./_assert.ts";

const H1 = "11".repeat(32);
const H2 = "22".repeat(32);
const entry = (path: string, extra: Partial<CapturedFile> = {}): CapturedFile => ({
  path,
  state: "present",
  kind: "file",
  hash: H1,
  size: 1,
  mode: 0o100644,
  ...extra,
});
const snapshot = (number: number, files: CapturedFile[]): SnapshotRecord => ({
  id: `id-${number}`,
  number,
  timestamp: 0,
  actionType: "write_file",
  summary: "",
  transactionId: null,
  files,
  previousHash: "",
  hash: "",
});

Deno.test("contentUsers() lists each referenced content once, with its first user", async (t) => {
  const cases: Array<
    { description: string; input: SnapshotRecord[]; expected: [string, string][] }
  > = [
    { description: "no snapshots", input: [], expected: [] },
    {
      description: "a file and a link",
      input: [snapshot(1, [entry("a"), entry("l", { kind: "symlink", hash: H2 })])],
      expected: [[H1, '"a" in snapshot 1'], [H2, '"l" in snapshot 1']],
    },
    {
      description: "the same content twice: the first user is named",
      input: [snapshot(1, [entry("a")]), snapshot(2, [entry("b")])],
      expected: [[H1, '"a" in snapshot 1']],
    },
    {
      description: "folders and absent paths have no content",
      input: [
        snapshot(3, [
          entry("d", { kind: "dir", hash: "", mode: 0o40755 }),
          entry("gone", { state: "absent", hash: "", mode: 0 }),
        ]),
      ],
      expected: [],
    },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => assertEquals([...contentUsers(input)], expected));
  }
});

Deno.test("contentProblem() reports missing and corrupt content", async (t) => {
  const user = '"a" in snapshot 1';
  const cases: Array<
    { description: string; input: string | undefined; expected: IntegrityProblem | undefined }
  > = [
    { description: "intact", input: undefined, expected: undefined },
    { description: "an empty reason is no problem", input: "", expected: undefined },
    {
      description: "missing",
      input: "missing",
      expected: {
        kind: "content_missing",
        message: `Content "${H1}" of ${user} is missing from the CAS`,
      },
    },
    {
      description: "corrupt",
      input: "hash differs",
      expected: {
        kind: "content_corrupt",
        message: `Content "${H1}" of ${user} does not match its hash: hash differs`,
      },
    },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => assertEquals(contentProblem(H1, user, input), expected));
  }
});

Deno.test("orphanProblem() reports file rows left without their snapshot", async (t) => {
  const cases: Array<
    { description: string; input: number; expected: IntegrityProblem | undefined }
  > = [
    { description: "none", input: 0, expected: undefined },
    {
      description: "some",
      input: 3,
      expected: {
        kind: "orphan_files",
        message: "3 captured file rows belong to no snapshot (a snapshot was deleted)",
      },
    },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => assertEquals(orphanProblem(input), expected));
  }
});
