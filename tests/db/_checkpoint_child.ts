/**
 * Child process for `background_checkpointer_test.ts`: commits numbered rows one
 * transaction at a time with a background checkpointer running, printing each number once
 * its commit returned, until it is killed.
 *
 * Run: `deno run -A tests/db/_checkpoint_child.ts DATABASE`
 *
 * @module
 */
import { BackgroundCheckpointer, inTransaction, openDatabase } from "../../lib/db/mod.ts";

const db = openDatabase(Deno.args[0]!);
db.exec("CREATE TABLE IF NOT EXISTS t (n INTEGER PRIMARY KEY, data BLOB NOT NULL)");
BackgroundCheckpointer.start(db, { intervalMs: 5 });
const insert = db.prepare("INSERT INTO t (n, data) VALUES (?, ?)");
const encoder = new TextEncoder();
for (let n = 1;; n++) {
  inTransaction(db, () => insert.run(n, new Uint8Array(4096).fill(n % 251)));
  Deno.stdout.writeSync(encoder.encode(`${n}\n`));
  // Lets the worker's messages in now and then, as a replica's event loop does.
  if (n % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 0));
}
