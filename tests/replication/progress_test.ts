/** Progress reporting of large syncs. */
import { assertEquals } from "./_assert.ts";
import { SyncProgress } from "../../lib/replication/progress.ts";
import { configureLogging } from "../../lib/log/mod.ts";

Deno.test("SyncProgress measures progress in master sequences", () => {
  configureLogging({ quiet: true });
  try {
    const progress = new SyncProgress({ label: "initial sync", from: 100, to: 1100, tty: false });
    assertEquals(progress.fraction, 0);
    progress.update(600, 10);
    assertEquals(progress.fraction, 0.5);
    progress.update(400, 10); // a replay crosses sequences in order; never goes back
    assertEquals(progress.fraction, 0.5);
    progress.update(5000, 10);
    assertEquals(progress.fraction, 1);
    progress.finish();
    const empty = new SyncProgress({ label: "catch-up", from: 7, to: 7, tty: false });
    assertEquals(empty.fraction, 1);
    empty.finish();
  } finally {
    configureLogging({});
  }
});
