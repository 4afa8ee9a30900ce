import assert from "node:assert/strict";
import { type TreeEventAction, treeEventAction, Workspace } from "../../lib/workspace/mod.ts";
import { put, withTempDir } from "../_helpers/temp_dir.ts";
import { LossProbe } from "../_helpers/loss_probe.ts";
import { waitFor } from "../_helpers/wait_for.ts";

Deno.test("treeEventAction() rescans when events were lost, records a closed file at once", async (t) => {
  const table: Array<{
    description: string;
    input: { event: Pick<Deno.FsEvent, "kind" | "flag">; captureOnClose: boolean };
    expected: TreeEventAction;
  }> = [
    {
      description: "Deno's queue overflowed (what it reports then)",
      input: { event: { kind: "any", flag: "rescan" }, captureOnClose: true },
      expected: "rescan",
    },
    {
      description: "the kernel's queue overflowed (inotify's IN_Q_OVERFLOW, as notify reports it)",
      input: { event: { kind: "other", flag: "rescan" }, captureOnClose: false },
      expected: "rescan",
    },
    {
      description: "an event of no known kind",
      input: { event: { kind: "other" }, captureOnClose: false },
      expected: "rescan",
    },
    {
      description: "a writer closed a file, with capture on close",
      input: { event: { kind: "access" }, captureOnClose: true },
      expected: "closed",
    },
    {
      description: "a writer closed a file, without capture on close",
      input: { event: { kind: "access" }, captureOnClose: false },
      expected: "changed",
    },
    {
      description: "a creation",
      input: { event: { kind: "create" }, captureOnClose: true },
      expected: "changed",
    },
    {
      description: "a removal",
      input: { event: { kind: "remove" }, captureOnClose: true },
      expected: "changed",
    },
  ];
  for (const { description, input, expected } of table) {
    await t.step(description, () => {
      assert.equal(treeEventAction(input.event, input.captureOnClose), expected);
    });
  }
});

Deno.test("Workspace records what changed while events were lost (its backlog overflowed), and keeps watching", () =>
  withTempDir(async (root) => {
    await put(root, "src/a.txt", "a");
    await put(root, "src/b.txt", "b");
    await put(root, "src/many/first.txt", "the folder the bursts write in");
    const workspace = await Workspace.open({ root });
    const probe = new LossProbe(`${root}/src`);
    try {
      await workspace.scan();
      // A rescan only because events were lost: the safety rescan is minutes away. A
      // backlog of 100 events, smaller than Deno's queue (which the probe has).
      await workspace.watch({ debounceMs: 20, rescanMs: 600_000, eventBacklog: 100 });
      await put(root, "src/seen.txt", "before the burst");
      await waitFor("the watcher's record", () => workspace.store.latest("src/seen.txt"));
      await workspace.settled();

      // Another process changes many files while this one's event loop is busy (here,
      // waiting for it synchronously): the watch thread hands over events the loop does
      // not handle, up to its backlog, drops the rest and reports that it did, as when a
      // capture holds the event loop during a burst of changes. The probe, whose queue is
      // larger, losing events proves the workspace lost some. On a loaded machine the OS
      // may hand over too few of the events while the loop is busy: then none are lost,
      // and the burst is made again.
      const many = 2000;
      let files = 1;
      for (let attempt = 0; probe.losses === 0; attempt++) {
        assert.ok(attempt < 5, "no burst of 5 overflowed Deno's queue of events");
        const burst = [
          `for i in $(seq 1 ${many}); do echo "file $i" > src/many/f${attempt}-$i.txt; done`,
          ...(attempt === 0
            ? [`echo "a, edited while events were lost" > src/a.txt`, "rm src/b.txt"]
            : []),
        ].join("; ");
        const done = new Deno.Command("sh", { args: ["-c", burst], cwd: root }).outputSync();
        assert.equal(done.code, 0, new TextDecoder().decode(done.stderr));
        files += many;
        await waitFor(
          "what changed while events were lost",
          () =>
            workspace.store.latest("src/a.txt")?.iteration === 2 &&
            workspace.store.latest("src/b.txt")?.deleted &&
            // The folder, first.txt and the bursts' files.
            workspace.store.list({ dir: "src/many" }).length === files + 1,
        );
      }
      const a = workspace.store.latest("src/a.txt")!;
      assert.equal(
        new TextDecoder().decode(await workspace.cas.readBytes(a.hash)),
        "a, edited while events were lost\n",
      );

      // The watcher goes on after the loss.
      await put(root, "src/many/after.txt", "after the burst");
      await waitFor("the watcher's record", () => workspace.store.latest("src/many/after.txt"));
    } finally {
      await probe.close();
      await workspace.close();
    }
  }));
