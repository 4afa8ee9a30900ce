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

Deno.test("SyncProgress says a sync cut short by its connection's end is not done, and how far it came", () => {
  const lines: string[] = [];
  const original = console.error;
  console.error = (line: string) => lines.push(line);
  try {
    const cut = new SyncProgress({ label: "initial sync", from: 0, to: 1000, tty: false });
    cut.update(180, 10);
    cut.finish(false);
    const done = new SyncProgress({ label: "initial sync", from: 0, to: 1000, tty: false });
    done.update(1000, 10);
    done.finish();
  } finally {
    console.error = original;
  }
  const summaries = lines.filter((line) => !/ (started|in progress) /.test(line));
  assertEquals(summaries.length, 2, lines.join("\n"));
  assertEquals(
    /initial sync cut short; .* sequence=180 of=1000/.test(summaries[0]!),
    true,
    summaries[0],
  );
  assertEquals(/initial sync done /.test(summaries[1]!), true, summaries[1]);
});
