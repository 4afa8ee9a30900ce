import assert from "node:assert/strict";
import { sha256Hex } from "../../lib/cas/mod.ts";
import { Workspace } from "../../lib/workspace/mod.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";

/**
 * The events a watcher of `sub/` sees while `write` runs, up to a sentinel file written
 * afterwards (one watch reports in order, so every earlier event has come by then).
 */
async function eventsDuring(root: string, write: () => Promise<unknown>): Promise<Deno.FsEvent[]> {
  // Only `sub/` is watched: a watch over the live database would break SQLite's locks.
  const watcher = Deno.watchFs(`${root}/sub`);
  const events: Deno.FsEvent[] = [];
  const pump = (async () => {
    for await (const event of watcher) events.push(event);
  })();
  try {
    await write();
    await Deno.writeTextFile(`${root}/sub/sentinel`, "done");
    await waitFor(
      "the sentinel's event",
      () => events.some((e) => e.paths.some((p) => p.endsWith("/sentinel"))),
    );
  } finally {
    watcher.close();
    await pump;
  }
  return events.filter((e) => !e.paths.some((p) => p.endsWith("/sentinel")));
}

for (
  const [visibleFirst, createOnly] of [[false, false], [true, false], [true, true]] as const
) {
  Deno.test(`a workspace write reaches a watched folder as one rename or link, nothing else (visibleFirst: ${visibleFirst}, createOnly: ${createOnly})`, () =>
    withTempDir(async (root) => {
      await Deno.mkdir(`${root}/sub`);
      const workspace = await Workspace.open({ root });
      try {
        const bytes = new TextEncoder().encode("a");
        const change = {
          path: "sub/a.txt",
          hash: sha256Hex(bytes),
          mode: 0o100644,
          bytes,
          createOnly,
        };
        const events = await eventsDuring(
          root,
          () => workspace.applyChanges([change], { visibleFirst }),
        );
        assert.ok(events.length > 0, "the new file is reported");
        for (const event of events) {
          assert.ok(
            event.paths.every((p) => p.endsWith("/sub/a.txt")),
            `no temp file shows: ${JSON.stringify(event)}`,
          );
          assert.notEqual(event.kind, "access", "no close-after-write in the watched folder");
          assert.notEqual(event.kind, "modify", "no write in the watched folder");
        }
        assert.equal(await Deno.readTextFile(`${root}/sub/a.txt`), "a");
      } finally {
        await workspace.close();
      }
    }));
}
