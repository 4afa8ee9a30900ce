/** `.chronicleignore` edited while Chronicle runs takes effect without a restart (issue #18). */
import assert from "node:assert/strict";
import { Workspace } from "../../lib/workspace/mod.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";

Deno.test("Workspace applies an edited .chronicleignore at once: new patterns hide, removed ones record again", () =>
  withTempDir(async (root) => {
    const workspace = await Workspace.open({ root, ignore: ["*.cfg-ignored"] });
    try {
      await Deno.writeTextFile(`${root}/.chronicleignore`, "*.secret\n");
      await workspace.capture([".chronicleignore"]);
      await workspace.settled();
      await Deno.writeTextFile(`${root}/keys.secret`, "k");
      await Deno.writeTextFile(`${root}/x.cfg-ignored`, "c");
      await Deno.writeTextFile(`${root}/plain.txt`, "p");
      await workspace.scan();
      assert.equal(workspace.store.latest("keys.secret"), undefined, "hidden by the new pattern");
      assert.equal(workspace.store.latest("x.cfg-ignored"), undefined, "--ignore still applies");
      assert.ok(workspace.store.latest("plain.txt"));

      // The pattern removed: the file it hid is recorded by the scan the change starts.
      await Deno.writeTextFile(`${root}/.chronicleignore`, "# nothing\n");
      await workspace.capture([".chronicleignore"]);
      await waitFor("keys.secret to be recorded", () => {
        return workspace.store.latest("keys.secret") !== undefined;
      });
      assert.equal(workspace.store.latest("x.cfg-ignored"), undefined, "--ignore is kept");
    } finally {
      await workspace.close();
    }
  }));

Deno.test("Workspace watching picks up a .chronicleignore edit without a restart", () =>
  withTempDir(async (root) => {
    const workspace = await Workspace.open({ root });
    try {
      await workspace.watch({ debounceMs: 10 });
      await Deno.writeTextFile(`${root}/.chronicleignore`, "build/\n");
      await waitFor(".chronicleignore to be recorded", () => {
        return workspace.store.latest(".chronicleignore") !== undefined;
      });
      await workspace.settled();
      await Deno.mkdir(`${root}/build`);
      await Deno.writeTextFile(`${root}/build/out.o`, "o");
      await Deno.writeTextFile(`${root}/src.c`, "c");
      await waitFor("src.c to be recorded", () => workspace.store.latest("src.c") !== undefined);
      await workspace.settled();
      assert.equal(workspace.store.latest("build/out.o"), undefined);
    } finally {
      await workspace.close();
    }
  }));

Deno.test("a folder a folder-only pattern leaves out is never recorded, by the watcher or by scans", () =>
  withTempDir(async (root) => {
    const workspace = await Workspace.open({ root, ignore: ["ignored/", "deps/"] });
    try {
      await workspace.watch({ rescanMs: 3_600_000 });
      Deno.mkdirSync(`${root}/ignored`);
      Deno.writeTextFileSync(`${root}/ignored/b.txt`, "b");
      Deno.mkdirSync(`${root}/app/deps`, { recursive: true });
      Deno.writeTextFileSync(`${root}/app/deps/c.txt`, "c");
      // A file named like the pattern is no folder: recorded.
      Deno.writeTextFileSync(`${root}/app/ignored`, "a file");
      await waitFor(
        "app/ignored recorded",
        () => workspace.store.latest("app/ignored") !== undefined,
      );
      await workspace.settled();
      await workspace.scan();
      await workspace.scan();
      for (const path of ["ignored", "ignored/b.txt", "app/deps", "app/deps/c.txt"]) {
        assert.deepEqual(workspace.store.history(path), [], path);
      }
      assert.ok(workspace.store.latest("app"));
    } finally {
      await workspace.close();
    }
  }));
