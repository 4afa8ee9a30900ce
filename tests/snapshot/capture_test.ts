import { join } from "node:path";
import {
  CaptureError,
  captureTargets,
  DiskWriter,
  HASH_ONLY_SINK,
} from "../../lib/snapshot/mod.ts";
import { PathError } from "../../lib/paths/mod.ts";
import { assertEquals, assertRejects } from "./_assert.ts";
import { withWorkspace } from "./_helpers.ts";

Deno.test("captureTargets() records links as links, skips the data folder and temp files, refuses other file types", async () => {
  await withWorkspace(async (ws) => {
    await ws.write("d/file", "x");
    await ws.write("d/.file.1-2.chronicle-tmp", "in flight");
    await Deno.symlink("/etc/passwd", join(ws.root, "d/outside-link"));
    const options = { root: ws.root, dataDir: ".chronicle", sink: HASH_ONLY_SINK };
    const files = await captureTargets([{ path: "d", absentKind: "dir" }], options);
    assertEquals(files.map((f) => `${f.path}:${f.kind}:${f.size}`), [
      "d:dir:0",
      "d/file:file:1",
      "d/outside-link:symlink:11",
    ]);
    const root = await captureTargets([{ path: ".chronicle", absentKind: "dir" }], {
      ...options,
      dataDir: ".chronicle/cas",
    });
    assertEquals(root.some((f) => f.path.startsWith(".chronicle/cas")), false);
    const fifo = await new Deno.Command("mkfifo", { args: [join(ws.root, "d/pipe")] }).output();
    assertEquals(fifo.code, 0);
    await assertRejects(
      () => captureTargets([{ path: "d", absentKind: "dir" }], options),
      CaptureError,
      'Cannot snapshot "d/pipe": it is not a regular file, symbolic link or folder',
    );
  });
});

Deno.test("snapshot() records nothing when one path of a tree cannot be captured", async () => {
  await withWorkspace(async (ws) => {
    await ws.write("d/ok", "x");
    const fifo = await new Deno.Command("mkfifo", { args: [join(ws.root, "d/pipe")] }).output();
    assertEquals(fifo.code, 0);
    await assertRejects(
      () => ws.snapshots.snapshot({ type: "delete_dir", payload: { path: "d" } }),
      CaptureError,
      '"d/pipe"',
    );
    assertEquals(ws.snapshots.list(), []);
    assertEquals((await ws.snapshots.verify()).ok, true);
  });
});

Deno.test("captureTargets() of a path under a file records the path absent", async () => {
  await withWorkspace(async (ws) => {
    await ws.write("plain", "x");
    const files = await captureTargets([{ path: "plain/child", absentKind: "file" }], {
      root: ws.root,
      sink: HASH_ONLY_SINK,
    });
    assertEquals(files.map((f) => `${f.path}:${f.state}`), ["plain/child:absent"]);
  });
});

Deno.test("DiskWriter writes atomically with modes and links, records in the store, and refuses linked parents", async () => {
  await withWorkspace(async (ws) => {
    const writer = new DiskWriter(ws.root, ws.cas, { store: ws.store, dataDir: ".chronicle" });
    const written = await writer.writeBytes("a/b.txt", new TextEncoder().encode("hi"), {
      mode: 0o100600,
    });
    assertEquals(written?.mode, 0o100600);
    assertEquals(await ws.read("a/b.txt"), "hi");
    assertEquals(((await Deno.stat(join(ws.root, "a/b.txt"))).mode ?? 0) & 0o777, 0o600);
    const target = await ws.cas.putBytes(new TextEncoder().encode("b.txt"));
    await writer.writeContent("a/link", target.hash, 0o120777);
    assertEquals(await Deno.readLink(join(ws.root, "a/link")), "b.txt");
    assertEquals(ws.store.latest("a/link")?.mode, 0o120777);
    const moved = await writer.move("a", "c");
    assertEquals(moved.map((i) => `${i.path}:${i.deleted}`).sort(), [
      "a/b.txt:true",
      "a/link:true",
      "c/b.txt:false",
      "c/link:false",
    ]);
    await writer.remove("c");
    assertEquals(await ws.exists("c"), false);
    assertEquals(ws.store.list().length, 0);
    await Deno.symlink("/tmp", join(ws.root, "tmp-link"));
    await assertRejects(
      () => writer.writeBytes("tmp-link/x", new Uint8Array()),
      PathError,
      "symbolic link",
    );
    await assertRejects(() => writer.remove(".chronicle/chronicle.db"), PathError, "data folder");
    const entries = [];
    for await (const entry of Deno.readDir(ws.root)) entries.push(entry.name);
    assertEquals(entries.filter((name) => name.endsWith(".chronicle-tmp")), []);
  });
});
