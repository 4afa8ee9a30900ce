import assert from "node:assert/strict";
import { join } from "node:path";
import { Cas, manifestProblem, sha256Hex } from "../../lib/cas/mod.ts";
import { listFiles, withTempDir } from "./_helpers.ts";

const DEADLINE_MS = 20_000;

Deno.test("Cas leaves only whole objects when its writer is killed with SIGKILL", async () => {
  await withTempDir(async (root) => {
    const writer = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-read",
        "--allow-write",
        join(import.meta.dirname!, "_crash_writer.ts"),
        root,
      ],
      stdout: "null",
      stderr: "piped",
    }).spawn();
    let killed = false;
    try {
      // Kill it mid-stream: once it has written a good number of objects.
      const deadline = Date.now() + DEADLINE_MS;
      for (;;) {
        const objects = await listFiles(join(root, "objects")).catch(() => []);
        if (objects.length >= 25) break;
        if (Date.now() > deadline) {
          assert.fail(`writer stored only ${objects.length} objects in time`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      writer.kill("SIGKILL");
      killed = true;
    } finally {
      if (!killed) writer.kill("SIGKILL");
      const status = await writer.status;
      const stderr = new TextDecoder().decode(await new Response(writer.stderr).arrayBuffer());
      assert.equal(status.signal, "SIGKILL", `writer ended otherwise: ${stderr}`);
    }

    for (const rel of await listFiles(join(root, "objects"))) {
      const bytes = await Deno.readFile(join(root, "objects", rel));
      assert.equal(sha256Hex(bytes), rel.split("/")[1], `objects/${rel} hashes to its name`);
    }
    for (const rel of await listFiles(join(root, "manifests"))) {
      const manifest = JSON.parse(await Deno.readTextFile(join(root, "manifests", rel)));
      assert.equal(manifestProblem(manifest), null, `manifests/${rel}`);
    }
    // What the killed writer left in tmp/ is swept once it has not been written for an hour
    // (whether its process still runs cannot be asked under the binaries' permissions).
    const hoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
    for (const rel of await listFiles(join(root, "tmp"))) {
      await Deno.utime(join(root, "tmp", rel), hoursAgo, hoursAgo);
    }
    const cas = await Cas.open(root);
    assert.deepEqual(await listFiles(join(root, "tmp")), [], "stray temp files swept on open");
    for (const rel of await listFiles(join(root, "manifests"))) {
      const hash = rel.split("/")[1]!.replace(".json", "");
      assert.equal(await cas.has(hash), true, "a manifest is written after all its chunks");
      assert.equal(sha256Hex(await cas.readBytes(hash)), hash);
    }
  });
});
