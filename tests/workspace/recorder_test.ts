import assert from "node:assert/strict";
import { Cas } from "../../lib/cas/mod.ts";
import { DirectionalFilter } from "../../lib/filter/mod.ts";
import { Store } from "../../lib/store/mod.ts";
import { Recorder } from "../../lib/workspace/_recorder.ts";
import { put, withTempDir } from "../_helpers/temp_dir.ts";

/** A recorder over a store and CAS of their own, beside the tree it records. */
async function withRecorder(
  run: (recorder: Recorder, root: string, store: Store) => Promise<void>,
): Promise<void> {
  await withTempDir(async (dir) => {
    const root = `${dir}/tree`;
    await Deno.mkdir(root);
    const store = Store.open(`${dir}/chronicle.db`);
    const cas = await Cas.open(`${dir}/cas`);
    const recorder = new Recorder({
      root,
      store,
      cas,
      filter: DirectionalFilter.create(),
      origin: "local",
      onIgnoreFile: () => {},
      report: () => {},
      holdPipes: () => {},
      gone: () => null,
    });
    try {
      await run(recorder, root, store);
    } finally {
      store.close();
    }
  });
}

/** Sets a file's modification time to `at` (epoch ms). */
function touch(root: string, path: string, at: number): void {
  Deno.utimeSync(`${root}/${path}`, new Date(at), new Date(at));
}

Deno.test("capture() leaves a file found in a folder and changed since foundChangedAfter to its own event", async (t) => {
  const now = Date.now();
  const began = now - 30_000;
  await t.step(
    "found by the walk: left; named, older or set ahead: recorded",
    () =>
      withRecorder(async (recorder, root) => {
        await put(root, "burst/older", "written before the capture began");
        await put(root, "burst/since", "written while the folder was walked");
        await put(root, "burst/named", "its own event is in this batch");
        await put(root, "burst/ahead", "a time set ahead, by an archive");
        touch(root, "burst/older", began - 10_000);
        touch(root, "burst/since", now - 5_000);
        touch(root, "burst/named", now - 5_000);
        touch(root, "burst/ahead", now + 3_600_000);
        const { recorded } = await recorder.capture(["burst", "burst/named"], {
          inChangeOrder: true,
          foundChangedAfter: began,
        });
        assert.deepEqual(recorded.map((iteration) => iteration.path).sort(), [
          "burst",
          "burst/ahead",
          "burst/named",
          "burst/older",
        ]);
      }),
  );
  await t.step(
    "without it, the walk records all it finds",
    () =>
      withRecorder(async (recorder, root) => {
        await put(root, "burst/since", "written while the folder was walked");
        touch(root, "burst/since", now - 5_000);
        const { recorded } = await recorder.capture(["burst"], { inChangeOrder: true });
        assert.deepEqual(recorded.map((iteration) => iteration.path), ["burst", "burst/since"]);
      }),
  );
  await t.step(
    "a recorded file left so is not taken for deleted",
    () =>
      withRecorder(async (recorder, root, store) => {
        await put(root, "burst/since", "first");
        await recorder.capture(["burst"]);
        await put(root, "burst/since", "second, while the folder was walked");
        touch(root, "burst/since", now - 5_000);
        const { recorded } = await recorder.capture(["burst"], { foundChangedAfter: began });
        assert.deepEqual(recorded, []);
        assert.equal(store.latest("burst/since")?.deleted, false);
      }),
  );
});
