import assert from "node:assert/strict";
import { Workspace } from "../../lib/workspace/mod.ts";
import { put, withTempDir } from "../_helpers/temp_dir.ts";
import { LossProbe } from "../_helpers/loss_probe.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { orderedName } from "./_ordered_writer.ts";

const WRITER = new URL("./_ordered_writer.ts", import.meta.url).pathname;

/**
 * Blocks this process's event loop (and nothing else) until `path` exists.
 *
 * @throws {Error} After a minute without it (the writer failed).
 */
function blockUntilExists(path: string): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      Deno.lstatSync(path);
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`Timed out waiting for "${path}"`);
      Atomics.wait(pause, 0, 0, 1); // a synchronous millisecond: the event loop stays busy
    }
  }
}

Deno.test("Workspace records files in the order they were written, even when file events are lost", () =>
  withTempDir(async (root) => {
    await put(root, "src/first.txt", "the folder the writes go in");
    const scratch = await Deno.makeTempFile({ prefix: "chronicle-clock-" });
    const workspace = await Workspace.open({ root });
    const probe = new LossProbe(`${root}/src`);
    try {
      await workspace.scan();
      // A rescan only because events were lost: the safety rescan is minutes away. A
      // backlog of 100 events, smaller than Deno's queue (which the probe has).
      await workspace.watch({ debounceMs: 20, rescanMs: 600_000, eventBacklog: 100 });
      // Another process writes files one after another, each modified later than the one
      // before. This one's event loop is busy while the first `blocked` are written (the
      // watch thread drops their events past its backlog, and reports that it did; the
      // probe, whose queue is larger, losing events proves it), then free for the rest
      // (the watcher reports them at once): those must not be recorded before the lost
      // ones. On a loaded machine the OS may hand over too few events while the loop is
      // busy: then none are lost, and the writes are made again in another folder.
      const count = 900;
      const blocked = 600;
      for (let attempt = 0; probe.losses === 0; attempt++) {
        assert.ok(attempt < 5, "no burst of 5 overflowed Deno's queue of events");
        const folder = `src/run${attempt}`;
        await Deno.mkdir(`${root}/${folder}`);
        await waitFor("the folder's record", () => workspace.store.latest(folder));
        const writer = new Deno.Command(Deno.execPath(), {
          args: ["run", "-A", WRITER, `${root}/${folder}`, String(count), scratch],
          stdout: "null",
        }).spawn();
        blockUntilExists(`${root}/${folder}/${orderedName(blocked, count)}`);
        const status = await writer.status;
        assert.equal(status.code, 0, "the writer failed");
        const paths = Array.from({ length: count }, (_, k) => `${folder}/${orderedName(k, count)}`);
        await waitFor(
          "every file written recorded",
          () => paths.every((path) => workspace.store.latest(path)),
          { timeoutMs: 60_000 },
        );
        // Each written once, modified later than the one before: recorded in that order.
        const sequences = paths.map((path) => {
          const history = workspace.store.history(path);
          assert.equal(history.length, 1, `"${path}" recorded once`);
          return history[0]!.sequence;
        });
        for (let k = 1; k < count; k++) {
          assert.ok(
            sequences[k - 1]! < sequences[k]!,
            `file ${k - 1} ("${paths[k - 1]}", sequence ${sequences[k - 1]}) was not recorded ` +
              `before file ${k} ("${paths[k]}", sequence ${sequences[k]}); events lost: ${
                probe.losses > 0
              }`,
          );
        }
      }
    } finally {
      await probe.close();
      await workspace.close();
      await Deno.remove(scratch);
    }
  }));

/** Keeps this process's event loop busy for `ms` (nothing else of it runs meanwhile). */
function blockFor(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

Deno.test("Workspace records a change while file events are lost again and again, before the losses stop", () =>
  withTempDir(async (root) => {
    await put(root, "src/first.txt", "the folder the writes go in");
    const workspace = await Workspace.open({ root });
    const probe = new LossProbe(`${root}/src`);
    // Another process rewrites 200 files nonstop until told to stop.
    const writer = new Deno.Command("sh", {
      args: [
        "-c",
        "i=0; while [ ! -e stop ]; do echo $i > src/busy/f$((i % 200)).txt; i=$((i+1)); done",
      ],
      cwd: root,
    }).spawn();
    try {
      await Deno.mkdir(`${root}/src/busy`);
      await workspace.scan();
      await workspace.watch({ debounceMs: 20, rescanMs: 600_000, eventBacklog: 100 });
      // This process's event loop is busy most of the time, so its watcher loses events
      // again and again (past its backlog; the probe, whose queue is larger, proves it)
      // while the writer goes on. The target is written once they are being lost,
      // and recorded all the same, before the losses stop (they do not stop here): by the
      // scan after a loss, or as the watcher reported it, never held for good.
      const busy = { intervalMs: 10, timeoutMs: 60_000 };
      await waitFor("events lost", () => (blockFor(200), probe.losses > 0), busy);
      await put(root, "src/target.txt", "written while events are being lost");
      await waitFor("the target recorded while events are being lost", () => {
        blockFor(200);
        return workspace.store.latest("src/target.txt");
      }, busy);
    } finally {
      await Deno.writeFile(`${root}/stop`, new Uint8Array());
      await writer.status;
      await probe.close();
      await workspace.close();
    }
  }));
