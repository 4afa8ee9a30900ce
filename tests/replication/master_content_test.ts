/**
 * A sandbox replica writes the master's content to its workspace and keeps no copy of
 * it (the master holds every version): reads of it go through the master while connected.
 * A local-sync replica keeps a copy of everything.
 */
import assert from "node:assert/strict";
import { sha256Hex } from "../../lib/cas/mod.ts";
import {
  HeldByMasterError,
  type ReplicaMode,
  startMaster,
  startReplica,
} from "../../lib/replication/mod.ts";
import { Workspace } from "../../lib/workspace/mod.ts";
import { pseudoRandomBytes } from "../_helpers/random_bytes.ts";
import { put, withTempDir } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";

/** A file inline in its notification, one fetched and kept as a row, one kept as a file. */
const FILES: Record<string, Uint8Array> = {
  "small.txt": new TextEncoder().encode("small enough to come inline"),
  "data/mid.bin": pseudoRandomBytes(20_000, 21),
  "data/big.bin": pseudoRandomBytes(300_000, 22),
};

async function sameBytes(path: string, bytes: Uint8Array): Promise<boolean> {
  const found = await Deno.readFile(path).catch(() => null);
  return found !== null && sha256Hex(found) === sha256Hex(bytes);
}

/** A master on `root/m` holding {@linkcode FILES} and a link, a replica on `root/r`, synced. */
async function synced(root: string, mode: ReplicaMode) {
  for (const [path, bytes] of Object.entries(FILES)) await put(root, `m/${path}`, bytes);
  await Deno.symlink("small.txt", `${root}/m/link`);
  await Deno.mkdir(`${root}/r`);
  const masterSide = await Workspace.open({ root: `${root}/m` });
  await masterSide.scan();
  const master = await startMaster({ workspace: masterSide, socketPath: `${root}/m.sock` });
  const replicaSide = await Workspace.open({ root: `${root}/r` });
  const replica = await startReplica({ workspace: replicaSide, connect: `${root}/m.sock`, mode });
  const close = async () => {
    await replica.close();
    await master.close();
    await replicaSide.close();
    await masterSide.close();
  };
  try {
    for (const [path, bytes] of Object.entries(FILES)) {
      await waitFor(`${path} on the replica`, () => sameBytes(`${root}/r/${path}`, bytes));
    }
    await waitFor("the link on the replica", () => Deno.readLink(`${root}/r/link`));
    await waitFor(
      "the replica to record what it wrote",
      () => Object.keys(FILES).every((path) => replicaSide.store.latest(path)),
    );
  } catch (error) {
    await close();
    throw error;
  }
  return { master, replica, masterSide, replicaSide, close };
}

Deno.test("a sandbox replica keeps no copy of the master's content, reads it through the master, and says where it is when disconnected", () =>
  withTempDir(async (root) => {
    const { master, replica, masterSide, replicaSide, close } = await synced(root, "sandbox");
    try {
      const hashes = Object.values(FILES).map((bytes) => sha256Hex(bytes));
      for (const hash of hashes) {
        assert.equal(await replicaSide.cas.hasObject(hash), false, `${hash} kept on the replica`);
      }
      assert.equal(
        replicaSide.store.latest("link")?.hash,
        sha256Hex(new TextEncoder().encode("small.txt")),
      );
      // History reads go through the master, verified, and keep what they read.
      const mid = FILES["data/mid.bin"]!;
      assert.deepEqual(await replicaSide.cas.readBytes(sha256Hex(mid)), mid);
      assert.equal(await replicaSide.cas.hasObject(sha256Hex(mid)), true);
      // A local change that keeps the content (a chmod) is written back with it.
      await Deno.chmod(`${root}/r/data/big.bin`, 0o755);
      await replicaSide.scan(); // nothing watches this workspace: its change found by a scan
      await waitFor(
        "the chmod on the master",
        async () => ((await Deno.stat(`${root}/m/data/big.bin`)).mode! & 0o777) === 0o755,
      );
      assert.equal(
        masterSide.store.latest("data/big.bin")?.hash,
        sha256Hex(FILES["data/big.bin"]!),
      );
      // The master gone: what the replica lacks cannot be read, and the error says why.
      await master.close();
      await waitFor("the replica to notice", () => !replica.status().connected);
      const small = sha256Hex(FILES["small.txt"]!);
      const error = await replicaSide.cas.readBytes(small).then(() => null, (e) => e);
      assert.ok(error instanceof HeldByMasterError, String(error));
      assert.match(error.message, /held by the master/);
    } finally {
      await close();
    }
  }));

Deno.test("a sandbox replica keeps the chunks of a large file's latest version only, and what its own contents use", () =>
  withTempDir(async (root) => {
    // Chunked (4 MiB and more): fetched into the replica's CAS to be written.
    const large = pseudoRandomBytes(5 * 1024 * 1024 + 123, 31);
    const same = pseudoRandomBytes(4 * 1024 * 1024 + 7, 32);
    // The replica's own: the same bytes as one master file, and the other's with a line
    // before them (all but the first of its chunks are the master file's).
    const prefixed = new Uint8Array([...new TextEncoder().encode("a line first\n"), ...large]);
    await put(root, "m/data/large.bin", large);
    await put(root, "m/data/same.bin", same);
    await put(root, "r/own/same-copy.bin", same);
    await put(root, "r/own/prefixed.bin", prefixed);
    const masterSide = await Workspace.open({ root: `${root}/m` });
    await masterSide.scan();
    const master = await startMaster({ workspace: masterSide, socketPath: `${root}/m.sock` });
    const replicaSide = await Workspace.open({ root: `${root}/r` });
    await replicaSide.scan();
    const { cas } = replicaSide;
    const ownChunks = new Set((await cas.manifest(sha256Hex(prefixed)))!.chunks.map((c) => c.hash));
    const replica = await startReplica({ workspace: replicaSide, connect: `${root}/m.sock` });
    const arrived = async (path: string, bytes: Uint8Array) => {
      await waitFor(`${path} on the replica`, () => sameBytes(`${root}/r/${path}`, bytes));
      await waitFor(
        `${path} recorded`,
        () => replicaSide.store.latest(path)?.hash === sha256Hex(bytes),
      );
    };
    try {
      await arrived("data/large.bin", large);
      await arrived("data/same.bin", same);
      // The latest version's chunks stay: the next small edit fetches only what it changes.
      assert.notEqual(await cas.manifest(sha256Hex(large)), null);
      // The master edits both: one byte in the large file, the other replaced.
      // (In its first chunk, the one the replica's own prefixed copy does not share.)
      const edited = large.slice();
      edited[100] = edited[100]! ^ 0xff;
      await masterSide.writeBytes("data/large.bin", edited);
      await masterSide.writeBytes("data/same.bin", new TextEncoder().encode("small now\n"));
      await arrived("data/large.bin", edited);
      await arrived("data/same.bin", new TextEncoder().encode("small now\n"));
      // Looked at again (as the watcher does right after a write, its time too recent to
      // trust), the file is hashed, not stored again.
      await replicaSide.scan();
      // The replaced version's manifest and the chunks only it used are gone; those the
      // new version shares, and those the replica's own file uses, stay.
      const oldChunks = (await masterSide.cas.manifest(sha256Hex(large)))!.chunks;
      const newChunks = new Set(
        (await masterSide.cas.manifest(sha256Hex(edited)))!.chunks.map((c) => c.hash),
      );
      await waitFor(
        "the replaced version out of the replica's CAS",
        async () => (await cas.manifest(sha256Hex(large))) === null,
      );
      assert.notEqual(await cas.manifest(sha256Hex(edited)), null);
      let gone = 0;
      for (const { hash } of oldChunks) {
        const kept = newChunks.has(hash) || ownChunks.has(hash);
        assert.equal(await cas.hasObject(hash), kept, `chunk ${hash}`);
        if (!kept) gone++;
      }
      assert.ok(gone > 0, "the replaced version had a chunk of its own");
      // A replaced content the replica holds itself (its own copy of the bytes) stays.
      assert.notEqual(await cas.manifest(sha256Hex(same)), null);
      // The replaced version is read through the master as any other.
      assert.equal(sha256Hex(await cas.readBytes(sha256Hex(large))), sha256Hex(large));
    } finally {
      await replica.close();
      await master.close();
      await replicaSide.close();
      await masterSide.close();
    }
  }));

Deno.test("a local-sync replica keeps a copy of the master's content", () =>
  withTempDir(async (root) => {
    const { master, replicaSide, close } = await synced(root, "local-sync");
    try {
      await master.close();
      for (const bytes of Object.values(FILES)) {
        assert.deepEqual(await replicaSide.cas.readBytes(sha256Hex(bytes)), bytes);
      }
    } finally {
      await close();
    }
  }));
