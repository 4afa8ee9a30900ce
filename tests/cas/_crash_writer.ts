/**
 * Child process for crash_test.ts: writes objects into the store at `Deno.args[0]` without
 * end (whole objects of 0.5 to 3.5 MB and, every fifth, a 6 MB chunked content) until killed.
 */
import { Cas } from "../../lib/cas/mod.ts";
import { pseudoRandomBytes } from "./_helpers.ts";

const cas = await Cas.open(Deno.args[0]!);
for (let i = 1;; i++) {
  const size = i % 5 === 0 ? 6_000_000 : 500_000 + (i * 733_331) % 3_000_000;
  await cas.putBytes(pseudoRandomBytes(size, i));
}
