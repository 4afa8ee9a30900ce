/**
 * Calls `syncFileSystem` twice on a folder, for a test that runs it with a `sync` program
 * of its choosing: `deno run … _sync_twice.ts DIR`. Prints one JSON line per call:
 * `{"flushed":true|false}` or `{"error":"…"}`.
 *
 * @module
 */
import { syncFileSystem } from "../../lib/disk/mod.ts";

for (let call = 0; call < 2; call++) {
  try {
    console.log(JSON.stringify({ flushed: await syncFileSystem(Deno.args[0]!) }));
  } catch (error) {
    console.log(JSON.stringify({ error: (error as Error).message }));
  }
}
