import assert from "node:assert/strict";
import { join } from "node:path";
import { Cas } from "../../lib/cas/mod.ts";
import { openDatabase } from "../../lib/db/mod.ts";
import { openReplicaTables, type ReplicaTables } from "../../lib/replication/mod.ts";
import {
  type Timers,
  WritebackLoop,
  WritebackTimeoutError,
} from "../../lib/replication/writeback_loop.ts";
import { REMOVAL_QUIET_MS } from "../../lib/replication/removal_hold.ts";
import type { WireMessage, WriteBackMessage } from "../../lib/wire/mod.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";

/** Timers fired by hand: each armed one is kept, with whether it was cleared since. */
class ManualTimers implements Timers {
  readonly armed: Array<{ fire: () => void; ms: number; cleared: boolean }> = [];

  set(fire: () => void, ms: number): number {
    return this.armed.push({ fire, ms, cleared: false }) - 1;
  }

  clear(timer: unknown): void {
    if (typeof timer === "number") this.armed[timer]!.cleared = true;
  }

  /** The timers armed and not cleared. */
  live(): Array<{ fire: () => void; ms: number }> {
    return this.armed.filter((timer) => !timer.cleared);
  }
}

/** A loop over a real journal and CAS whose `send` records each batch, unanswered. */
async function loopWith(
  root: string,
  answerTimeoutMs = 60_000,
  onResolved: () => void = () => {},
  timers?: Timers,
  removals: { quietMs?: number; gone?: () => boolean } = { quietMs: 0 },
): Promise<
  { loop: WritebackLoop; tables: ReplicaTables; sent: WriteBackMessage[]; close(): void }
> {
  const db = openDatabase(join(root, "replica.db"));
  const tables = openReplicaTables(db);
  const cas = await Cas.open(join(root, "cas"), { db });
  const sent: WriteBackMessage[] = [];
  const loop = new WritebackLoop({
    journal: tables.journal,
    cas,
    sandboxId: "sandbox-1",
    send: (message: WireMessage) => {
      if (message.type === "WriteBack") sent.push(message);
      return Promise.resolve();
    },
    maxContentBytes: 1024 * 1024,
    onResolved,
    onRefused: () => {},
    answerTimeoutMs,
    ...(timers ? { timers } : {}),
    // Removals go at once here but where their holding is the test's subject.
    ...(removals.quietMs === undefined ? {} : { removalQuietMs: removals.quietMs }),
    ...(removals.gone ? { workspaceGone: removals.gone } : {}),
  });
  return { loop, tables, sent, close: () => db.close() };
}

function journalDeletion(tables: ReplicaTables, path: string): number {
  const [entry] = tables.journal.append([{
    sourceSeq: 1,
    path,
    operation: "delete",
    newPath: null,
    hash: null,
    size: 0,
    mode: 0,
    deleted: true,
    masterSeen: 0,
  }]);
  return entry!.localSeq;
}

function sentPaths(sent: WriteBackMessage[]): string[][] {
  return sent.map((batch) => batch.entries.map((entry) => entry.filepath));
}

Deno.test("write-back batches are sent while earlier ones await their answer, each entry once, at most four in flight", () =>
  withTempDir(async (root) => {
    const { loop, tables, sent, close } = await loopWith(root);
    const running = loop.run();
    try {
      const seqs: number[] = [];
      for (let i = 1; i <= 5; i++) {
        seqs.push(journalDeletion(tables, `f${i}.txt`));
        if (i <= 4) await waitFor(`batch ${i} sent`, () => sent.length === i);
      }
      assert.deepEqual(sentPaths(sent), [["f1.txt"], ["f2.txt"], ["f3.txt"], ["f4.txt"]]);
      // The window is full: f5 waits for the first answer, then goes alone.
      loop.onResult({ type: "WriteBackResult", accepted: [[BigInt(seqs[0]!), 10n]], rejected: [] });
      await waitFor("batch 5 sent", () => sent.length === 5);
      assert.deepEqual(sentPaths(sent)[4], ["f5.txt"]);
      for (const [i, seq] of seqs.slice(1).entries()) {
        loop.onResult({
          type: "WriteBackResult",
          accepted: [[BigInt(seq), BigInt(11 + i)]],
          rejected: [],
        });
      }
      await waitFor("every entry answered", () => tables.journal.open().length === 0);
    } finally {
      loop.stop();
      await running;
      close();
    }
  }));

Deno.test("an unanswered write-back batch ends the loop with a timeout", () =>
  withTempDir(async (root) => {
    const { loop, tables, sent, close } = await loopWith(root, 200);
    try {
      const running = loop.run();
      journalDeletion(tables, "a.txt");
      await assert.rejects(running, WritebackTimeoutError);
      assert.equal(sent.length, 1);
      assert.equal(tables.journal.open().length, 1, "the entry stays open for the next connection");
    } finally {
      loop.stop();
      close();
    }
  }));

Deno.test("a failure while recording an answer ends the loop instead of escaping it", () =>
  withTempDir(async (root) => {
    const { loop, tables, close } = await loopWith(root, 60_000, () => {
      throw new Error("disk full while recording");
    });
    try {
      const running = loop.run();
      const seq = journalDeletion(tables, "a.txt");
      await waitFor("the batch sent", () => tables.journal.open()[0]?.state === "sent");
      loop.onResult({ type: "WriteBackResult", accepted: [[BigInt(seq), 1n]], rejected: [] });
      await assert.rejects(running, /disk full while recording/);
    } finally {
      loop.stop();
      close();
    }
  }));

Deno.test("the answer timeout runs from when a batch becomes the oldest in flight", () =>
  withTempDir(async (root) => {
    const timers = new ManualTimers();
    const { loop, tables, sent, close } = await loopWith(root, 3_000, () => {}, timers);
    try {
      const running = loop.run();
      running.catch(() => {}); // awaited below
      const first = journalDeletion(tables, "a.txt");
      await waitFor("batch 1 sent", () => sent.length === 1);
      assert.deepEqual(timers.live().map((timer) => timer.ms), [3_000], "armed for batch 1");
      const forFirst = timers.live()[0];
      journalDeletion(tables, "b.txt");
      await waitFor("batch 2 sent", () => sent.length === 2);
      assert.deepEqual(timers.live(), [forFirst], "batch 2 waits behind batch 1: not timed yet");
      loop.onResult({ type: "WriteBackResult", accepted: [[BigInt(first), 1n]], rejected: [] });
      const forSecond = timers.live();
      assert.equal(forSecond.length, 1);
      assert.notEqual(forSecond[0], forFirst, "timed afresh from its answer on");
      assert.equal(forSecond[0]!.ms, 3_000);
      forSecond[0]!.fire();
      await assert.rejects(running, WritebackTimeoutError);
    } finally {
      loop.stop();
      close();
    }
  }));

Deno.test("removals wait until none came for a moment, and never go once the folder is gone", () =>
  withTempDir(async (root) => {
    const timers = new ManualTimers();
    let gone = false;
    let looks = 0; // how often the loop asked whether the folder is gone
    const { loop, tables, sent, close } = await loopWith(root, 60_000, () => {}, timers, {
      gone: () => (looks++, gone),
    });
    try {
      const running = loop.run();
      running.catch(() => {});
      journalDeletion(tables, "a.txt");
      await waitFor(
        "the removal held, its wake armed",
        () => timers.live().some((timer) => timer.ms > 0 && timer.ms <= REMOVAL_QUIET_MS),
      );
      assert.equal(sent.length, 0, "held");
      timers.live().find((timer) => timer.ms <= REMOVAL_QUIET_MS)!.fire();
      // Fired early by the test: still within the quiet time, so it waits again, then goes.
      await waitFor("sent once quiet", () => {
        const wake = timers.live().find((timer) => timer.ms <= REMOVAL_QUIET_MS);
        wake?.fire();
        return sent.length === 1;
      }, { timeoutMs: REMOVAL_QUIET_MS * 10 });
      assert.deepEqual(sentPaths(sent), [["a.txt"]]);
      gone = true;
      const before = looks;
      journalDeletion(tables, "b.txt");
      await waitFor("the loop to look at b.txt's removal", () => looks > before);
      assert.equal(sent.length, 1, "the folder is gone: never sent");
      assert.ok(!timers.live().some((timer) => timer.ms <= REMOVAL_QUIET_MS), "nor woken for");
    } finally {
      loop.stop();
      close();
    }
  }));
