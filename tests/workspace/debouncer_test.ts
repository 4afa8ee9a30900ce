import assert from "node:assert/strict";
import { Debouncer } from "../../lib/workspace/mod.ts";
import { waitFor } from "../_helpers/wait_for.ts";

Deno.test("Debouncer batches a burst into one flush and caps the wait", async () => {
  const batches: string[][] = [];
  const debouncer = new Debouncer<string>(
    { quietMs: 30, maxWaitMs: 10_000 },
    (batch) => batches.push([...batch].sort()),
  );
  debouncer.add(["a", "b"]);
  debouncer.add(["b", "c"]);
  await waitFor("one flush", () => batches.length === 1);
  assert.deepEqual(batches, [["a", "b", "c"]]);

  const capped: number[] = [];
  const busy = new Debouncer<number>(
    { quietMs: 40, maxWaitMs: 150 },
    (batch) => capped.push(batch.size),
  );
  const feed = setInterval(() => busy.add([Date.now()]), 5);
  try {
    // Events never pause, so only the cap can produce this flush.
    await waitFor("a flush under continuous events", () => capped.length > 0);
  } finally {
    clearInterval(feed);
    busy.cancel();
  }
});

Deno.test("Debouncer.flushNow() hands over at once; empty adds do nothing", () => {
  const batches: number[] = [];
  const debouncer = new Debouncer<string>({ quietMs: 10_000 }, (batch) => batches.push(batch.size));
  debouncer.add([]);
  debouncer.flushNow();
  assert.deepEqual(batches, []);
  debouncer.add(["x"]);
  debouncer.flushNow();
  assert.deepEqual(batches, [1]);
  debouncer.cancel();
});

Deno.test("Debouncer.addReady() hands complete keys over at once; the others keep waiting", async () => {
  const batches: string[][] = [];
  const debouncer = new Debouncer<string>(
    { quietMs: 60_000 },
    (batch) => batches.push([...batch].sort()),
  );
  try {
    debouncer.add(["still-writing", "closed"]);
    debouncer.addReady(["closed", "also-closed"]);
    await waitFor("the ready keys", () => batches.length === 1);
    assert.deepEqual(batches, [["also-closed", "closed"]]);
    debouncer.addReady([]);
    debouncer.flushNow();
    assert.deepEqual(batches, [["also-closed", "closed"], ["still-writing"]]);
  } finally {
    debouncer.cancel();
  }
});

Deno.test("Debouncer: a ready key waits for the pending batch when told to, keeping the order", async () => {
  const batches: string[][] = [];
  const debouncer = new Debouncer<string>(
    {
      quietMs: 40,
      waitsFor: (pending, key) => [...pending].some((p) => key.startsWith(p + "/")),
    },
    (batch) => batches.push([...batch].sort()),
  );
  try {
    debouncer.add(["new-folder"]);
    debouncer.addReady(["new-folder/closed.txt", "elsewhere.txt"]);
    await waitFor("both flushes", () => batches.length === 2);
    assert.deepEqual(batches, [["elsewhere.txt"], ["new-folder", "new-folder/closed.txt"]]);
  } finally {
    debouncer.cancel();
  }
});
