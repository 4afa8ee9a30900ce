import { assertEquals, assertRejects } from "../_helpers/assert.ts";
import { sharedWork } from "../../lib/concurrency/mod.ts";

Deno.test("sharedWork: callers of one key share its work until it settles, failures included; then it starts again", async () => {
  const pending = new Map<string, Promise<number>>();
  let starts = 0;
  let fail = true;
  const work = (key: string) =>
    sharedWork(pending, key, async () => {
      const start = ++starts;
      await Promise.resolve();
      if (fail) throw new Error(`failed ${key}`);
      return start;
    });
  const failing = [work("a"), work("a")];
  for (const each of failing) await assertRejects(() => each, Error, "failed a");
  assertEquals([starts, pending.size], [1, 0], "one start, forgotten once settled");
  fail = false;
  assertEquals(await Promise.all([work("a"), work("a"), work("b")]), [2, 2, 3]);
  assertEquals(pending.size, 0);
});
