/**
 * What an agent does with Chronicle's MCP tools, run the same way over stdio and over HTTP.
 *
 * Every file is written in one step (`putAtomic`): Chronicle is running, and a capture
 * between a truncate and its write would record the empty file as an iteration of its own,
 * where the scenarios count iterations and read them by number.
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/client/index"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { putAtomic, readText } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { call, ok, until } from "./_mcp.ts";

/** Every tool the server offers. */
export const TOOL_NAMES = [
  "diff_file",
  "file_history",
  "list_files",
  "list_snapshots",
  "read_file",
  "recent_changes",
  "restore_file",
  "restore_workspace",
  "rollback_snapshot",
  "snapshot_diff",
  "status",
  "take_snapshot",
  "verify_chain",
  "wait_for_sync",
];

/** Tools and resources are listed, each tool with a description and an object schema. */
export async function listsToolsAndResources(client: Client, root: string): Promise<void> {
  const { tools } = await client.listTools();
  assertEquals(tools.map((tool) => tool.name).sort(), TOOL_NAMES);
  for (const tool of tools) {
    assert((tool.description ?? "").length > 80, `${tool.name} needs a real description`);
    assertEquals(tool.inputSchema.type, "object");
  }
  await putAtomic(root, "notes.md", "# Notes\n");
  const resources = await waitForResource(client, "chronicle://files/notes.md?iteration=1");
  assert(resources.some((r) => r.name === "notes.md"));
  const { resourceTemplates } = await client.listResourceTemplates();
  assertEquals(resourceTemplates[0]?.uriTemplate, "chronicle://files/{+path}{?iteration}");
  const read = await client.readResource({ uri: "chronicle://files/notes.md?iteration=1" });
  const content = read.contents[0];
  assert(content && "text" in content, "notes.md reads as text");
  assertEquals(content.text, "# Notes\n");
  assertEquals(content.mimeType, "text/markdown");
}

function waitForResource(client: Client, uri: string) {
  return waitFor(`resource ${uri} listed`, async () => {
    const { resources } = await client.listResources();
    return resources.some((r) => r.uri === uri) ? resources : undefined;
  }, { timeoutMs: 30_000, intervalMs: 50 });
}

/** An agent writes a file, deletes it, finds it in the history and restores it. */
export async function deletedFileComesBack(client: Client, root: string): Promise<void> {
  await putAtomic(root, "draft.md", "plan v1\n");
  await until(
    "draft.md recorded",
    client,
    "file_history",
    { path: "draft.md" },
    (a) => !a.isError && a.json.total === 1,
  );
  await Deno.remove(`${root}/draft.md`);
  const history = await until(
    "the deletion recorded",
    client,
    "file_history",
    { path: "draft.md" },
    (a) => !a.isError && a.json.total === 2,
  );
  assertEquals(history.json.iterations[1].deleted, true);
  const latest = await call(client, "read_file", { path: "draft.md" });
  assert(latest.isError && latest.text.includes("deletion"), latest.text);
  const old = await ok(client, "read_file", { path: "draft.md", iteration: 1 });
  assert(old.text.endsWith("plan v1\n"), old.text);
  const restored = await ok(client, "restore_file", { path: "draft.md", iteration: 1 });
  assertEquals(restored.json.now.iteration, 3);
  assertEquals(await readText(`${root}/draft.md`), "plan v1\n");
  const changes = await ok(client, "recent_changes", { since: 0 });
  assert(changes.json.changes.some((c: { path: string }) => c.path === "draft.md"));
}

/** Snapshot, a destructive edit, the diffs that show it, and the rollback that undoes it. */
export async function snapshotEditDiffRollback(client: Client, root: string): Promise<void> {
  await putAtomic(root, "src/app.ts", "const a = 1;\nconst b = 2;\n");
  await until("app.ts recorded", client, "file_history", { path: "src/app.ts" }, (a) => !a.isError);
  const taken = await ok(client, "take_snapshot", {
    action_type: "write_file",
    path: "src/app.ts",
  });
  const id = taken.json.snapshot.id as string;
  await putAtomic(root, "src/app.ts", "const a = 1;\nconst b = 'broken';\n");
  await until(
    "the edit recorded",
    client,
    "file_history",
    { path: "src/app.ts" },
    (a) => a.json?.total === 2,
  );
  const diff = await ok(client, "snapshot_diff", { snapshot_id: id.slice(0, 8) });
  assertEquals(diff.json.changes[0].change_type, "modified");
  assert(diff.json.changes[0].patch.includes("+const b = 'broken';"), diff.text);
  const fileDiff = await ok(client, "diff_file", { path: "src/app.ts", from: 1, to: 2 });
  assert(fileDiff.text.includes("-const b = 2;\n+const b = 'broken';"), fileDiff.text);
  const listed = await ok(client, "list_snapshots");
  assert(listed.json.snapshots.some((s: { id: string }) => s.id === id));
  const rolled = await ok(client, "rollback_snapshot", { snapshot_id: id });
  assert(rolled.json.snapshot?.id, "the rollback is itself snapshotted");
  assertEquals(await readText(`${root}/src/app.ts`), "const a = 1;\nconst b = 2;\n");
  const verified = await ok(client, "verify_chain");
  assertEquals(verified.json.ok, true);
}

/** Restore to a moment: a dry run that changes nothing, then the applied plan. */
export async function restoreWorkspaceDryRunFirst(client: Client, root: string): Promise<void> {
  const before = (await ok(client, "status")).json.sequence as number;
  await putAtomic(root, "later.txt", "made later\n");
  await until(
    "later.txt recorded",
    client,
    "file_history",
    { path: "later.txt" },
    (a) => !a.isError,
  );
  const dry = await ok(client, "restore_workspace", { to: before });
  assertEquals(dry.json.dry_run, true);
  assertEquals(dry.json.plan.changes, [{
    path: "later.txt",
    action: "remove",
    before: dry.json.plan.changes[0].before,
    after: null,
  }]);
  assertEquals(await readText(`${root}/later.txt`), "made later\n");
  const applied = await ok(client, "restore_workspace", { to: before, apply: true });
  assertEquals(applied.json.applied, ["later.txt"]);
  assertEquals(await readText(`${root}/later.txt`), undefined);
}

/** Bad input comes back as a tool error the model reads, and the server answers after each. */
export async function badInputIsAToolError(client: Client, root: string): Promise<void> {
  await putAtomic(root, "big.bin", new Uint8Array(200_000).map((_, i) => i % 251));
  await until("big.bin recorded", client, "file_history", { path: "big.bin" }, (a) => !a.isError);
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ["read_file", { path: "../outside.txt" }, "'..'"],
    ["read_file", { path: "/etc/passwd" }, "Invalid path"],
    ["read_file", { path: ".chronicle/chronicle.db" }, "Invalid path"],
    ["read_file", { path: "notes.md", iteration: 99 }, "Unknown iteration 99"],
    ["read_file", { path: "never.md" }, "Unknown path"],
    ["read_file", { path: "big.bin", limit: 50_000_000 }, "too large"],
    ["diff_file", { path: "notes.md", from: 42 }, "Unknown iteration 42"],
    ["snapshot_diff", { snapshot_id: "ffffffff" }, "ffffffff"],
    ["rollback_snapshot", { snapshot_id: "0000" }, "0000"],
    ["restore_file", { path: "../../etc/hosts", iteration: 1 }, "'..'"],
    ["take_snapshot", { action_type: "delete_file", path: "../x" }, "outside the workspace"],
    ["take_snapshot", { action_type: "format_disk", path: "a" }, "Input validation"],
    ["list_files", { path: "/" + "a".repeat(5000) }, "Input validation"],
    ["restore_workspace", { to: 999_999 }, "not in the store"],
    ["restore_workspace", { to: "yesterday-ish" }, "Cannot read"],
    ["list_files", { at: -3 }, "Input validation"],
    ["wait_for_sync", {}, "not a replica"],
  ];
  for (const [tool, args, expected] of cases) {
    const answer = await call(client, tool, args);
    assert(answer.isError, `${tool} ${JSON.stringify(args)} should be an error: ${answer.text}`);
    assert(answer.text.includes(expected), `${tool}: "${answer.text}" lacks "${expected}"`);
    assertEquals((await client.listTools()).tools.length, TOOL_NAMES.length);
  }
  const unknown = await call(client, "no_such_tool");
  assert(unknown.isError, unknown.text);
  await client.readResource({ uri: "chronicle://files/..%2Fx?iteration=1" }).then(
    () => assert(false, "a path leaving the workspace is refused"),
    (error: Error) => assert(error.message.includes(".."), error.message),
  );
  assertEquals((await ok(client, "status")).json.running, true);
}

/** A large file is read in windows, each saying where the next one starts. */
export async function largeOutputPages(client: Client): Promise<void> {
  const first = await ok(client, "read_file", { path: "big.bin" });
  assert(first.text.includes("call again with offset=65536"), first.text);
  const blob = first.content.find((c) => c.type === "resource")?.resource as { blob: string };
  assertEquals(atob(blob.blob).length, 65_536);
  const last = await ok(client, "read_file", { path: "big.bin", offset: 196_608 });
  assert(!last.text.includes("truncated"), last.text);
  const page = await ok(client, "list_files", { limit: 1 });
  assertEquals(page.json.next_offset, 1);
  const next = await ok(client, "list_files", { limit: 1, offset: 1 });
  assert(next.json.entries[0].path !== page.json.entries[0].path);
}

/** The past as the tools show it: a listing and a read at a sequence or a time, changes since. */
export async function pastViews(client: Client, root: string): Promise<void> {
  await putAtomic(root, "docs/a/deep.md", "deep v1\n");
  await putAtomic(root, "docs/top.md", "top v1\n");
  for (const path of ["docs/a/deep.md", "docs/top.md"]) {
    await until(`${path} recorded`, client, "file_history", { path }, (a) => !a.isError);
  }
  const then = (await ok(client, "status")).json.sequence as number;
  const top1 = (await ok(client, "file_history", { path: "docs/top.md" })).json.iterations[0];
  await putAtomic(root, "docs/top.md", "top v2\n");
  await Deno.remove(`${root}/docs/a/deep.md`);
  for (const path of ["docs/a/deep.md", "docs/top.md"]) {
    await until(`${path} changed`, client, "file_history", { path }, (a) => a.json?.total === 2);
  }

  const past = await ok(client, "list_files", { path: "docs", depth: 1, at: then });
  assertEquals(past.json.at_sequence, then);
  assertEquals(
    past.json.entries.map((e: { path: string; type: string }) => `${e.type}:${e.path}`).sort(),
    ["file:docs/top.md", "folder:docs/a"],
  );
  const now = await ok(client, "list_files", { path: "docs" });
  // The folder docs/a stays on disk, empty, after its file went: an entry of its own.
  assertEquals(now.json.entries.map((e: { path: string }) => e.path), ["docs/a", "docs/top.md"]);
  assertEquals(now.json.entries[1].iteration, 2);

  for (const at of [then, top1.time]) {
    const read = await ok(client, "read_file", { path: "docs/top.md", at });
    assert(read.text.endsWith("top v1\n"), `at ${at}: ${read.text}`);
  }
  const gone = await ok(client, "read_file", { path: "docs/a/deep.md", at: then });
  assert(gone.text.endsWith("deep v1\n"), gone.text);

  const since = await ok(client, "recent_changes", { since: then });
  assertEquals(
    since.json.changes.map((c: { path: string; deleted: boolean }) => `${c.path}:${c.deleted}`)
      .sort(),
    ["docs/a/deep.md:true", "docs/top.md:false"],
  );
  const sinceTime = await ok(client, "recent_changes", { since: top1.time });
  assert(sinceTime.json.changes.some((c: { path: string }) => c.path === "docs/top.md"));
  const local = await ok(client, "recent_changes", { since: then, origin: "local" });
  assertEquals(local.json.changes.length, 2);
  const nobody = await ok(client, "recent_changes", { since: then, origin: "sb-nobody" });
  assertEquals(nobody.json.changes, []);

  const plan = await ok(client, "restore_workspace", { to: top1.time, paths: ["docs/top.md"] });
  assertEquals(plan.json.dry_run, true);
  assertEquals(
    plan.json.plan.changes.map((c: { path: string; action: string }) => `${c.action}:${c.path}`),
    ["write:docs/top.md"],
  );
  assertEquals(await readText(`${root}/docs/top.md`), "top v2\n");
}

/** `resources/list` pages of 100 with a cursor; a made-up cursor is refused. */
export async function resourcesPage(client: Client, root: string): Promise<void> {
  for (let i = 0; i < 120; i++) {
    await putAtomic(root, `many/f${String(i).padStart(3, "0")}.txt`, `${i}\n`);
  }
  await until(
    "120 files recorded",
    client,
    "list_files",
    { path: "many", limit: 1 },
    (a) => a.json?.total === 120,
  );
  const uris = new Set<string>();
  let cursor: string | undefined = undefined;
  let pages = 0;
  do {
    const page: { resources: Array<{ uri: string }>; nextCursor?: string | undefined } =
      await client
        .listResources(cursor === undefined ? {} : { cursor });
    assert(page.resources.length <= 100, `${page.resources.length} resources on one page`);
    for (const resource of page.resources) uris.add(resource.uri);
    cursor = page.nextCursor;
    pages++;
  } while (cursor !== undefined);
  assert(pages >= 2, `${pages} page(s)`);
  for (let i = 0; i < 120; i++) {
    const uri = `chronicle://files/many/f${String(i).padStart(3, "0")}.txt?iteration=1`;
    assert(uris.has(uri), `${uri} listed`);
  }
  await client.listResources({ cursor: "not-a-cursor" }).then(
    () => assert(false, "a made-up cursor is refused"),
    (error: Error) => assert(error.message.includes("Invalid cursor"), error.message),
  );
}
