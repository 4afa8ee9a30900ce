/**
 * The worker of `BackgroundCheckpointer` (see `background_checkpointer.ts`): its own
 * connection to one database, checkpointing the WAL every `intervalMs` (PASSIVE: never
 * waiting for, nor blocking, the connection that writes). Internal to `lib/db`.
 *
 * Messages in: `{ type: "start", path, intervalMs }`, then `{ type: "stop" }`. Out:
 * `{ type: "failed", message }` (it then stops), `{ type: "stopped" }`.
 *
 * @module
 */
/// <reference lib="deno.worker" />
import type { DatabaseSync } from "node:sqlite";
import { openDatabase } from "./open_database.ts";

let db: DatabaseSync | null = null;
let timer: ReturnType<typeof setInterval> | undefined;

function stop(): void {
  clearInterval(timer);
  timer = undefined;
  try {
    db?.close();
  } catch { /* closing is all that is left to do */ }
  db = null;
}

function checkpoint(): void {
  if (db === null) return;
  try {
    db.prepare("PRAGMA wal_checkpoint(PASSIVE)").get();
  } catch (error) {
    stop();
    self.postMessage({ type: "failed", message: String((error as Error)?.message ?? error) });
  }
}

self.onmessage = (event: MessageEvent) => {
  const message = event.data as { type: string; path?: string; intervalMs?: number };
  if (message.type === "start" && db === null) {
    try {
      db = openDatabase(message.path!);
      // This connection only checkpoints: it never waits for the writer's locks.
      db.exec("PRAGMA busy_timeout = 0");
      timer = setInterval(checkpoint, message.intervalMs ?? 1000);
    } catch (error) {
      stop();
      self.postMessage({ type: "failed", message: String((error as Error)?.message ?? error) });
    }
  } else if (message.type === "stop") {
    checkpoint(); // what the writer committed last is copied too
    stop();
    self.postMessage({ type: "stopped" });
  }
};
