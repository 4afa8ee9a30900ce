/**
 * Test helper: records iterations (content in the CAS first) as fast as it can until its
 * stdin closes, like a busy Chronicle. Prints "writing" once started.
 */
import { Cas } from "../../lib/cas/mod.ts";
import { S_IFREG, Store } from "../../lib/store/mod.ts";

const [database, casDir] = Deno.args;
if (!database || !casDir) throw new Error("Usage: _busy_writer.ts DATABASE CAS_DIR");
const store = Store.open(database);
const cas = await Cas.open(casDir);
let stop = false;
(async () => {
  for await (const _ of Deno.stdin.readable) { /* until closed */ }
  stop = true;
})();
console.log("writing");
for (let n = 0; !stop && n < 100_000; n++) {
  const stored = await cas.putBytes(new TextEncoder().encode(`busy ${n}`));
  store.record([
    {
      path: `busy/${n % 17}.txt`,
      hash: stored.hash,
      size: stored.size,
      mode: S_IFREG | 0o644,
      deleted: false,
    },
  ]);
}
store.close();
