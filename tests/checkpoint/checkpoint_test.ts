import { deepStrictEqual as assertEquals, ok, rejects, strictEqual } from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { dirname, join } from "node:path";
import {
  Cas,
  casObjectPath,
  CHUNKING_THRESHOLD,
  sha256Hex,
  SMALL_OBJECT_LIMIT,
} from "../../lib/cas/mod.ts";
import {
  checkpoint,
  CheckpointError,
  type CheckpointInfo,
  referencedHashes,
  rehydrate,
} from "../../lib/checkpoint/mod.ts";
import { S_IFLNK, S_IFREG, Store } from "../../lib/store/mod.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { recordContent } from "./_record.ts";

const encoder = new TextEncoder();

interface Source {
  workspace: string;
  database: string;
  casDir: string;
  /** Hashes referenced only by the snapshot table. */
  snapshotOnly: string;
  /** A whole object too large for the database's object table: always a file. */
  medium: string;
  /** The big file's content hash and its chunks. */
  big: { hash: string; chunks: string[]; bytes: Uint8Array };
  expectedTree: Map<string, { bytes: Uint8Array; mode: number } | { link: string }>;
}

/** A real store and CAS with history, a deletion, a chunked file, a link and a snapshot row. */
async function buildSource(dir: string): Promise<Source> {
  const workspace = join(dir, "source");
  const data = join(workspace, ".chronicle");
  const database = join(data, "chronicle.db");
  const casDir = join(data, "cas");
  await Deno.mkdir(data, { recursive: true });
  const store = Store.open(database);
  // As a workspace opens it: small contents go to the database's object table.
  const cas = await Cas.open(casDir, { db: store.db });
  try {
    const put = (path: string, text: string | Uint8Array, mode?: number, timestamp?: number) =>
      recordContent(store, cas, path, text, mode, timestamp);
    await put("notes.md", "first");
    await put("notes.md", "second");
    await put("notes.md", "third, the latest", S_IFREG | 0o644, Date.UTC(2020, 0, 2, 3, 4, 5));
    await put("src/app/main.ts", "console.log(1);\n");
    await put("bin/run.sh", "#!/bin/sh\necho hi\n", S_IFREG | 0o755);
    await put("empty.txt", "");
    await put("gone.txt", "soon deleted");
    store.record([{ path: "gone.txt", hash: "", size: 0, mode: 0, deleted: true }]);
    await put("link-to-notes", "notes.md", S_IFLNK | 0o777);
    const big = new Uint8Array(CHUNKING_THRESHOLD + 300_000);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7919 + (i >> 13)) & 0xff;
    const bigHash = await put("data/big.bin", big);
    const mediumBytes = big.slice(0, SMALL_OBJECT_LIMIT + 1000);
    const medium = await put("data/medium.bin", mediumBytes);
    const manifest = await cas.manifest(bigHash);
    ok(manifest, "the big file is chunked");
    const snapshotOnly = (await cas.putBytes(encoder.encode("only a snapshot keeps this"))).hash;
    store.db.exec(
      `CREATE TABLE snapshots (number INTEGER PRIMARY KEY, previous_hash TEXT, hash TEXT);
      CREATE TABLE snapshot_files (snapshot_number INTEGER, path TEXT, state TEXT, kind TEXT, hash TEXT, size INTEGER, mode INTEGER);`,
    );
    // A chain hash names no content: the checkpoint must not look for it in the CAS.
    store.db.prepare("INSERT INTO snapshots VALUES (1, '', ?)").run("ab".repeat(32));
    store.db.prepare(
      "INSERT INTO snapshot_files VALUES (1, 'old.txt', 'present', 'file', ?, 26, ?)",
    )
      .run(snapshotOnly, S_IFREG | 0o644);
    store.db.prepare("INSERT INTO snapshot_files VALUES (1, 'new.txt', 'absent', 'file', '', 0, 0)")
      .run();
    return {
      workspace,
      database,
      casDir,
      snapshotOnly,
      medium,
      big: { hash: bigHash, chunks: [...new Set(manifest.chunks.map((c) => c.hash))], bytes: big },
      expectedTree: new Map<string, { bytes: Uint8Array; mode: number } | { link: string }>([
        ["notes.md", { bytes: encoder.encode("third, the latest"), mode: 0o644 }],
        ["src/app/main.ts", { bytes: encoder.encode("console.log(1);\n"), mode: 0o644 }],
        ["bin/run.sh", { bytes: encoder.encode("#!/bin/sh\necho hi\n"), mode: 0o755 }],
        ["empty.txt", { bytes: new Uint8Array(), mode: 0o644 }],
        ["link-to-notes", { link: "notes.md" }],
        ["data/big.bin", { bytes: big, mode: 0o644 }],
        ["data/medium.bin", { bytes: mediumBytes, mode: 0o644 }],
      ]),
    };
  } finally {
    store.close();
  }
}

async function assertTree(workspace: string, source: Source): Promise<void> {
  for (const [path, expected] of source.expectedTree) {
    const file = join(workspace, path);
    const info = await Deno.lstat(file);
    if ("link" in expected) {
      ok(info.isSymlink, `${path} is a symlink`);
      strictEqual(await Deno.readLink(file), expected.link);
    } else {
      ok(info.isFile, `${path} is a file`);
      strictEqual(info.mode! & 0o777, expected.mode, `${path} mode`);
      strictEqual(
        sha256Hex(await Deno.readFile(file)),
        sha256Hex(expected.bytes),
        `${path} content`,
      );
    }
  }
  await rejects(Deno.lstat(join(workspace, "gone.txt")), Deno.errors.NotFound);
}

function allHistory(database: string): unknown[] {
  const db = new DatabaseSync(database, { readOnly: true });
  try {
    return db.prepare("SELECT * FROM iterations ORDER BY sequence").all().map((row) => ({
      ...row,
    }));
  } finally {
    db.close();
  }
}

Deno.test("checkpoint() and rehydrate() round-trip a workspace with its history", async (t) => {
  await withTempDir(async (dir) => {
    const source = await buildSource(dir);
    const output = join(dir, "ckpt");
    const result = await checkpoint({ database: source.database, casDir: source.casDir, output });

    await t.step("checkpoint.json describes the copy", async () => {
      const info = JSON.parse(
        await Deno.readTextFile(join(output, "checkpoint.json")),
      ) as CheckpointInfo;
      strictEqual(info.format, "chronicle-checkpoint");
      strictEqual(info.version, 1);
      strictEqual(info.sequence, 11);
      strictEqual(info.iterations, 11);
      strictEqual(info.paths, 7);
      strictEqual(info.withObjects, false);
      strictEqual(
        info.databaseSha256,
        sha256Hex(await Deno.readFile(join(output, "chronicle.db"))),
      );
      strictEqual(result.databaseSha256, info.databaseSha256);
      ok(!Number.isNaN(Date.parse(info.created)));
      assertEquals((await Array.fromAsync(Deno.readDir(output))).map((e) => e.name).sort(), [
        "checkpoint.json",
        "chronicle.db",
        "objects.txt",
      ]);
    });

    await t.step("objects.txt lists every content of history, snapshots and chunks", async () => {
      const listed = (await Deno.readTextFile(join(output, "objects.txt"))).trim().split("\n");
      const store = Store.open(source.database);
      const expected = new Set([
        ...store.addHashesTo(new Set<string>()),
        source.snapshotOnly,
        ...source.big.chunks,
      ]);
      store.close();
      expected.delete("");
      assertEquals(listed, [...expected].sort());
      strictEqual(result.objects, listed.length);
      ok(listed.includes(sha256Hex(encoder.encode("first"))), "superseded content is kept");
      ok(!listed.includes("ab".repeat(32)), "the snapshot chain hash is not content");
    });

    await t.step("rehydrate() into a new workspace sharing the CAS", async () => {
      const target = join(dir, "restored");
      const database = join(target, ".chronicle", "chronicle.db");
      const restored = await rehydrate({
        from: output,
        database,
        casDir: source.casDir,
        workspace: target,
      });
      assertEquals(restored.problems, []);
      strictEqual(restored.files, 6);
      strictEqual(restored.symlinks, 1);
      strictEqual(restored.objectsCopied, 0);
      strictEqual(restored.objectsPresent, result.objects);
      await assertTree(target, source);
      assertEquals(allHistory(database), allHistory(source.database));
      const store = Store.open(database);
      try {
        assertEquals(store.history("notes.md").map((i) => i.iteration), [1, 2, 3]);
        strictEqual(store.sequence(), 11);
        strictEqual(store.fileStates().size, 0);
      } finally {
        store.close();
      }
      const mtime = (await Deno.stat(join(target, "notes.md"))).mtime!.getTime();
      strictEqual(mtime, Date.UTC(2020, 0, 2, 3, 4, 5), "mtime is the iteration's time");
    });
  });
});

/**
 * Takes a checkpoint with objects of `source`, removes the source entirely (only the
 * checkpoint remains), and rehydrates it into `dir`/elsewhere onto an empty CAS.
 */
async function throughCheckpoint(dir: string, source: Source) {
  const output = join(dir, "ckpt");
  const result = await checkpoint({
    database: source.database,
    casDir: source.casDir,
    output,
    withObjects: true,
  });
  await Deno.remove(source.workspace, { recursive: true });
  const target = join(dir, "elsewhere");
  const data = join(dir, "elsewhere-data");
  const restored = await rehydrate({
    from: output,
    database: join(data, "chronicle.db"),
    casDir: join(data, "cas"),
    workspace: target,
  });
  return { result, restored, target, data };
}

Deno.test("a checkpoint with objects rehydrates onto an empty CAS elsewhere", async () => {
  await withTempDir(async (dir) => {
    const source = await buildSource(dir);
    const { result, restored, target, data } = await throughCheckpoint(dir, source);
    ok(result.copiedFiles > source.big.chunks.length);
    ok(result.copiedBytes > source.big.bytes.length);
    assertEquals(restored.problems, []);
    // Small contents came within the database copy; the rest from the checkpoint's files.
    strictEqual(restored.objectsPresent + restored.objectsCopied, result.objects);
    ok(restored.objectsCopied >= source.big.chunks.length + 2, "chunks, manifest, medium");
    await assertTree(target, source);
    const db = new DatabaseSync(join(data, "chronicle.db"), { readOnly: true });
    try {
      const cas = await Cas.open(join(data, "cas"), { db });
      ok(await cas.has(source.snapshotOnly), "snapshot-only content came back too");
      strictEqual(sha256Hex(await cas.readBytes(source.big.hash)), source.big.hash);
    } finally {
      db.close();
    }
  });
});

Deno.test("a checkpoint with objects takes content stored whole when its manifest lacks a chunk", async () => {
  await withTempDir(async (dir) => {
    const source = await buildSource(dir);
    const { hash, bytes, chunks } = source.big;
    const objectPath = (h: string) => join(source.casDir, casObjectPath(h));
    await Deno.mkdir(dirname(objectPath(hash)), { recursive: true });
    await Deno.writeFile(objectPath(hash), bytes); // the content stored whole as well
    await Deno.remove(objectPath(chunks[1]!));
    const { restored, target } = await throughCheckpoint(dir, source);
    assertEquals(restored.problems, []);
    await assertTree(target, source);
  });
});

Deno.test("rehydrate() refuses damaged or incomplete checkpoints and installs nothing", async (t) => {
  await withTempDir(async (dir) => {
    const source = await buildSource(dir);
    const output = join(dir, "ckpt");
    await checkpoint({
      database: source.database,
      casDir: source.casDir,
      output,
      withObjects: true,
    });
    const copyTree = async (from: string, to: string): Promise<void> => {
      await Deno.mkdir(to);
      for await (const entry of Deno.readDir(from)) {
        if (entry.isDirectory) await copyTree(join(from, entry.name), join(to, entry.name));
        else if (entry.isFile) await Deno.copyFile(join(from, entry.name), join(to, entry.name));
      }
    };
    const copyOf = async (name: string) => {
      const copy = join(dir, name);
      await copyTree(output, copy);
      return copy;
    };
    const attempt = async (
      from: string,
      name: string,
      message: string,
      extra: { database?: string; force?: boolean } = {},
    ) => {
      const data = join(dir, `${name}-data`);
      const database = extra.database ?? join(data, "chronicle.db");
      await rejects(
        rehydrate({
          from,
          database,
          casDir: join(data, "cas"),
          workspace: join(dir, name),
          ...(extra.force ? { force: true } : {}),
        }),
        (error: unknown) => {
          ok(error instanceof CheckpointError, String(error));
          ok(error.message.includes(message), error.message);
          return true;
        },
      );
      if (extra.database === undefined) {
        await rejects(Deno.lstat(database), Deno.errors.NotFound, "no database was installed");
      }
    };

    await t.step("a changed database copy", async () => {
      const copy = await copyOf("tampered-db");
      const db = new DatabaseSync(join(copy, "chronicle.db"));
      db.exec("UPDATE iterations SET origin = 'evil' WHERE sequence = 1");
      db.close();
      await attempt(copy, "tampered-db", "is damaged: its SHA-256 is");
    });
    await t.step("a corrupt object", async () => {
      const copy = await copyOf("corrupt-object");
      const hash = source.medium;
      await Deno.writeTextFile(join(copy, casObjectPath(hash)), "not second");
      await attempt(copy, "corrupt-object", `Object "${hash}" in the checkpoint is damaged`);
    });
    await t.step("a missing object", async () => {
      const copy = await copyOf("missing-object");
      const hash = source.medium;
      await Deno.remove(join(copy, casObjectPath(hash)));
      await attempt(
        copy,
        "missing-object",
        "1 object(s) are neither in the CAS nor in the checkpoint",
      );
    });
    await t.step("a missing chunk", async () => {
      const copy = await copyOf("missing-chunk");
      const chunk = source.big.chunks[1]!;
      await Deno.remove(join(copy, casObjectPath(chunk)));
      await attempt(
        copy,
        "missing-chunk",
        `Manifest of "${source.big.hash}" in the checkpoint is unusable`,
      );
    });
    await t.step("an edited object list", async () => {
      const copy = await copyOf("short-list");
      const lines = (await Deno.readTextFile(join(copy, "objects.txt"))).split("\n");
      await Deno.writeTextFile(join(copy, "objects.txt"), lines.slice(1).join("\n"));
      await attempt(copy, "short-list", "objects, checkpoint.json says");
    });
    await t.step("a garbage object list line", async () => {
      const copy = await copyOf("garbage-list");
      await Deno.writeTextFile(join(copy, "objects.txt"), "xyz\n");
      await attempt(copy, "garbage-list", 'Line 1 of "');
    });
    await t.step("not a checkpoint", async () => {
      await Deno.mkdir(join(dir, "empty"));
      await attempt(join(dir, "empty"), "not-ckpt", "Cannot read checkpoint");
    });
    await t.step("a newer format", async () => {
      const copy = await copyOf("newer");
      const info = JSON.parse(await Deno.readTextFile(join(copy, "checkpoint.json")));
      await Deno.writeTextFile(
        join(copy, "checkpoint.json"),
        JSON.stringify({ ...info, version: 2 }),
      );
      await attempt(copy, "newer", "has version 2; this Chronicle reads version 1");
    });
    await t.step("an existing database without force", async () => {
      await attempt(output, "existing", "already exists", { database: source.database });
    });
  });
});

Deno.test("checkpoint() refuses a busy output, a missing database and missing content", async (t) => {
  await withTempDir(async (dir) => {
    const source = await buildSource(dir);
    const fail = (options: Parameters<typeof checkpoint>[0], message: string) =>
      rejects(checkpoint(options), (error: unknown) => {
        ok(error instanceof CheckpointError, String(error));
        ok(error.message.includes(message), error.message);
        return true;
      });
    await t.step("output not empty", async () => {
      await Deno.mkdir(join(dir, "busy"));
      await Deno.writeTextFile(join(dir, "busy", "x"), "x");
      await fail(
        { database: source.database, casDir: source.casDir, output: join(dir, "busy") },
        "is not empty",
      );
    });
    await t.step("no database", async () => {
      await fail(
        { database: join(dir, "nope.db"), casDir: source.casDir, output: join(dir, "o1") },
        "No database at",
      );
    });
    await t.step("content missing from the CAS", async () => {
      const hash = sha256Hex(encoder.encode("second"));
      const db = new DatabaseSync(source.database);
      strictEqual(db.prepare("DELETE FROM cas_objects WHERE hash = ?").run(hash).changes, 1);
      db.close();
      await fail(
        { database: source.database, casDir: source.casDir, output: join(dir, "o2") },
        `1 content(s) the database references are missing from the CAS, e.g. "${hash}"`,
      );
      const leftovers = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) =>
        n.includes("partial")
      );
      assertEquals(leftovers, [], "the partial folder is removed");
      await rejects(Deno.lstat(join(dir, "o2")), Deno.errors.NotFound);
    });
    await t.step("an empty existing folder is fine", async () => {
      const hash = sha256Hex(encoder.encode("second"));
      const cas = await Cas.open(source.casDir);
      await cas.putBytes(encoder.encode("second"));
      ok(await cas.has(hash));
      await Deno.mkdir(join(dir, "ready"));
      const result = await checkpoint({
        database: source.database,
        casDir: source.casDir,
        output: join(dir, "ready"),
      });
      strictEqual(result.sequence, 11);
    });
  });
});

Deno.test("referencedHashes() reads only content columns of the tables present", () => {
  const db = new DatabaseSync(":memory:");
  try {
    assertEquals(referencedHashes(db), []);
    db.exec(`CREATE TABLE iterations (hash TEXT, deleted INTEGER);
      CREATE TABLE file_state (hash TEXT);
      CREATE TABLE snapshots (hash TEXT, previous_hash TEXT);
      CREATE TABLE replica_paths (hash TEXT, deferred_hash TEXT);
      CREATE TABLE replica_journal (hash TEXT, state TEXT);
      CREATE TABLE replica_conflicts (kept_hash TEXT);`);
    const [a, b, c, d, e] = ["a", "b", "c", "d", "e"].map((x) => x.repeat(64)) as [
      string,
      string,
      string,
      string,
      string,
    ];
    db.prepare("INSERT INTO iterations VALUES (?, 0), (?, 0), ('', 1), ('NOTHEX', 0)").run(a, a);
    db.prepare("INSERT INTO file_state VALUES (?)").run(b);
    db.prepare("INSERT INTO snapshots VALUES (?, ?)").run(b, b);
    db.prepare("INSERT INTO replica_paths VALUES (?, ?)").run(b, b);
    db.prepare("INSERT INTO replica_journal VALUES (?, 'pending'), (?, 'sent'), (?, 'accepted')")
      .run(c, d, b);
    db.prepare("INSERT INTO replica_conflicts VALUES (?), (NULL)").run(e);
    assertEquals(referencedHashes(db), [a, c, d, e]);
  } finally {
    db.close();
  }
});

Deno.test("checkpoint() takes a consistent copy while another process writes", async () => {
  await withTempDir(async (dir) => {
    const source = await buildSource(dir);
    const writer = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-read",
        "--allow-write",
        "--allow-env",
        join(import.meta.dirname!, "_busy_writer.ts"),
        source.database,
        source.casDir,
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const reader = writer.stdout.pipeThrough(new TextDecoderStream()).getReader();
    try {
      // Wait for the writer to be going before copying.
      let seen = "";
      const deadline = Date.now() + 20_000;
      while (!seen.includes("writing\n")) {
        if (Date.now() > deadline) throw new Error("The writer never started");
        const { value, done } = await reader.read();
        if (done) throw new Error("The writer exited early");
        seen += value;
      }
      const sequences: number[] = [];
      for (let round = 0; round < 3; round++) {
        const output = join(dir, `live-${round}`);
        const result = await checkpoint({
          database: source.database,
          casDir: source.casDir,
          output,
        });
        sequences.push(result.sequence);
        const db = new DatabaseSync(join(output, "chronicle.db"), { readOnly: true });
        try {
          const rows = db.prepare("SELECT sequence FROM iterations ORDER BY sequence").all() as {
            sequence: number;
          }[];
          assertEquals(
            rows.map((r) => r.sequence),
            rows.map((_, i) => i + 1),
            "no sequence is torn out",
          );
          const disagreeing = db.prepare(
            "SELECT COUNT(*) AS n FROM paths p WHERE p.sequence <> (SELECT MAX(sequence) FROM iterations i WHERE i.path = p.path)",
          ).get() as { n: number };
          strictEqual(disagreeing.n, 0, "paths agree with iterations");
        } finally {
          db.close();
        }
        const target = join(dir, `live-restored-${round}`);
        const restored = await rehydrate({
          from: output,
          database: join(target, ".chronicle", "chronicle.db"),
          casDir: source.casDir,
          workspace: target,
        });
        assertEquals(restored.problems, []);
      }
      ok(sequences[2]! > 10, `the writer advanced the sequence (${sequences})`);
    } finally {
      await writer.stdin.close();
      await reader.cancel();
      const status = await writer.status;
      strictEqual(status.code, 0);
    }
  });
});
