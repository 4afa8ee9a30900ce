import assert from "node:assert/strict";
import { forEachLimited, SerialQueue, TaskLimiter } from "../../lib/concurrency/mod.ts";

/** Resolves on a later turn of the event loop, so that tasks really overlap. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

Deno.test("forEachLimited runs every item, never more than the limit at once", async () => {
  let running = 0;
  let most = 0;
  const done: number[] = [];
  await forEachLimited(Array.from({ length: 50 }, (_, i) => i), 4, async (item) => {
    most = Math.max(most, ++running);
    await tick();
    running--;
    done.push(item);
  });
  assert.equal(most, 4);
  assert.deepEqual(done.sort((a, b) => a - b), Array.from({ length: 50 }, (_, i) => i));
});

Deno.test("forEachLimited rejects with the first error and starts nothing after it", async () => {
  const started: number[] = [];
  await assert.rejects(
    forEachLimited(Array.from({ length: 100 }, (_, i) => i), 3, async (item) => {
      started.push(item);
      await tick();
      if (item === 5) throw new Error("item 5 failed");
    }),
    /item 5 failed/,
  );
  assert.ok(started.length < 10, `started ${started.length} items`);
});

Deno.test("TaskLimiter lets at most its limit run, first come first served", async () => {
  const limiter = new TaskLimiter(2);
  let running = 0;
  let most = 0;
  const order: number[] = [];
  await Promise.all(Array.from({ length: 8 }, (_, i) =>
    limiter.run(async () => {
      order.push(i);
      most = Math.max(most, ++running);
      await tick();
      running--;
    })));
  assert.equal(most, 2);
  assert.deepEqual(order, [0, 1, 2, 3, 4, 5, 6, 7]);
});

Deno.test("SerialQueue runs tasks one at a time in order, and a failure does not stop the rest", async () => {
  const queue = new SerialQueue();
  const order: string[] = [];
  const first = queue.run(async () => {
    await tick();
    order.push("first");
  });
  const failing = queue.run(() => Promise.reject(new Error("boom")));
  const third = queue.run(() => {
    order.push("third");
    return Promise.resolve(3);
  });
  await first;
  await assert.rejects(failing, /boom/);
  assert.equal(await third, 3);
  await queue.idle();
  assert.deepEqual(order, ["first", "third"]);
});

Deno.test("SerialQueue tells how many tasks wait to start", async () => {
  const queue = new SerialQueue();
  const seen: number[] = [];
  const first = queue.run(async () => {
    seen.push(queue.waiting);
    await tick();
  });
  const second = queue.run(() => Promise.reject(new Error("boom")));
  const third = queue.run(() => Promise.resolve(seen.push(queue.waiting)));
  assert.equal(queue.waiting, 3, "none started yet");
  await first;
  await assert.rejects(second);
  await third;
  assert.deepEqual(seen, [2, 0]);
  assert.equal(queue.waiting, 0);
});

Deno.test("TaskLimiter with a budget keeps the running weights within it, one task whatever its weight", async () => {
  const limiter = new TaskLimiter(10, 100);
  let weightRunning = 0;
  let mostWeight = 0;
  let tasksRunning = 0;
  let mostTasks = 0;
  const order: number[] = [];
  const weights = [60, 30, 30, 250, 10, 10, 10, 90, 5];
  await Promise.all(weights.map((weight, i) =>
    limiter.run(async () => {
      order.push(i);
      weightRunning += weight;
      tasksRunning++;
      mostWeight = Math.max(mostWeight, weight > 100 ? 0 : weightRunning);
      mostTasks = Math.max(mostTasks, tasksRunning);
      if (weight > 100) assert.equal(tasksRunning, 1, "an oversized task runs alone");
      await tick();
      await tick();
      weightRunning -= weight;
      tasksRunning--;
    }, weight)
  ));
  assert.ok(mostWeight <= 100, `at most the budget at once, saw ${mostWeight}`);
  assert.ok(mostTasks >= 3, "small tasks share the budget");
  assert.deepEqual(order, weights.map((_, i) => i), "first come first served");
  assert.equal(limiter.pending, 0);
});

Deno.test("TaskLimiter gives a failed task's weight back, and refuses impossible limits and weights", async () => {
  const limiter = new TaskLimiter(4, 100);
  await assert.rejects(limiter.run(() => Promise.reject(new Error("boom")), 80), /boom/);
  // Two halves run side by side only if the failed task's 80 came back.
  let running = 0;
  let most = 0;
  const half = () =>
    limiter.run(async () => {
      most = Math.max(most, ++running);
      await tick();
      running--;
    }, 50);
  await Promise.all([half(), half()]);
  assert.equal(most, 2, "the whole budget is free again");
  await assert.rejects(limiter.run(() => Promise.resolve(), -1), RangeError);
  await assert.rejects(limiter.run(() => Promise.resolve(), NaN), RangeError);
  assert.throws(() => new TaskLimiter(0), RangeError);
  assert.throws(() => new TaskLimiter(2, -5), RangeError);
  assert.equal(limiter.pending, 0);
});
