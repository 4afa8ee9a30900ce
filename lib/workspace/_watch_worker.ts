/**
 * The worker of `WatchThread` (see `_watch_thread.ts`): the OS watches of one workspace,
 * taken off the main thread. Deno holds few events per watch and drops the rest while
 * the thread that reads them is busy; here they are read at once, and handed to the main
 * thread in batches it acknowledges. Internal to `lib/workspace`. It imports nothing: its
 * thread's memory stays small.
 *
 * Messages in: `{ type: "backlog", count }` (first), `{ type: "watch", id, request, path,
 * recursive, onlyLinksUnder? }`, `{ type: "unwatch", id }`, `{ type: "ack", count }`,
 * `{ type: "close" }`.
 * Out: `{ type: "watched", id, request, error?: { notFound, message } }`, `{ type: "events",
 * events }` (each `{ id, kind, paths, flag? }`; `id` "/", no watch's, with flag "rescan"
 * when events were dropped here), `{ type: "ended", id, message }`, `{ type: "closed" }`.
 *
 * @module
 */
/// <reference lib="deno.worker" />

/**
 * Events handed over and not acknowledged, at most: past it, events are dropped. Set by the
 * first message (`WatchThread`'s `EVENT_BACKLOG` unless told otherwise).
 */
let backlog = 1;

/** Events handed over and not acknowledged below which the main thread counts as keeping up. */
const KEEPING_UP = 64;

interface OutEvent {
  id: string;
  kind: string;
  paths: string[];
  flag?: string;
}

const watchers = new Map<string, Deno.FsWatcher>();
let pending: OutEvent[] = [];
let unacknowledged = 0;
/** Events were dropped since the last batch: the next one opens with a report of it. */
let dropped = false;
let flushScheduled = false;
let closed = false;

function add(event: OutEvent): void {
  if (unacknowledged + pending.length >= backlog) {
    dropped = true;
    return;
  }
  pending.push(event);
  scheduleFlush();
}

/**
 * Hands what is pending over soon: at once while the main thread keeps up (a change's
 * latency: a timer's turn cost about 2 ms more each time), else at this thread's next turn,
 * with what else came meanwhile (the main thread is behind, busy with earlier batches).
 */
function scheduleFlush(): void {
  if (flushScheduled) return;
  flushScheduled = true;
  if (unacknowledged < KEEPING_UP) queueMicrotask(flush);
  else setTimeout(flush, 0);
}

function flush(): void {
  flushScheduled = false;
  if (closed) return;
  if (dropped && unacknowledged + pending.length < backlog) {
    dropped = false;
    pending.push({ id: "/", kind: "other", paths: [], flag: "rescan" });
  }
  if (pending.length === 0) return;
  unacknowledged += pending.length;
  self.postMessage({ type: "events", events: pending });
  pending = [];
}

/**
 * Whether an event is of a symbolic link under `folder` (absolute), all its paths there.
 * RACE: a link replaced since by something else is left out; that change has its own event.
 */
function ofLinkUnder(folder: string, paths: readonly string[]): boolean {
  const prefix = `${folder}/`;
  if (paths.length === 0 || !paths.every((path) => path.startsWith(prefix))) return false;
  return paths.some((path) => {
    try {
      return Deno.lstatSync(path).isSymlink;
    } catch {
      return false; // gone: a watch of the workspace reports a removal
    }
  });
}

async function pump(
  id: string,
  watcher: Deno.FsWatcher,
  onlyLinksUnder: string | undefined,
): Promise<void> {
  try {
    for await (const event of watcher) {
      if (onlyLinksUnder !== undefined && !ofLinkUnder(onlyLinksUnder, event.paths)) continue;
      add({
        id,
        kind: event.kind,
        paths: event.paths,
        ...(event.flag === undefined ? {} : { flag: event.flag }),
      });
    }
  } catch (error) {
    if (watchers.get(id) !== watcher) return; // unwatched or replaced meanwhile
    watchers.delete(id);
    try {
      watcher.close();
    } catch { /* closed already */ }
    flush(); // what it reported before it ended, first
    self.postMessage({ type: "ended", id, message: String((error as Error)?.message ?? error) });
  }
}

function watch(
  id: string,
  request: number,
  path: string,
  recursive: boolean,
  onlyLinksUnder: string | undefined,
): void {
  watchers.get(id)?.close();
  watchers.delete(id);
  try {
    const watcher = Deno.watchFs(path, { recursive });
    watchers.set(id, watcher);
    pump(id, watcher, onlyLinksUnder);
    self.postMessage({ type: "watched", id, request });
  } catch (error) {
    self.postMessage({
      type: "watched",
      id,
      request,
      error: {
        notFound: error instanceof Deno.errors.NotFound,
        message: String((error as Error)?.message ?? error),
      },
    });
  }
}

self.onmessage = (event: MessageEvent) => {
  const message = event.data as {
    type: string;
    id?: string;
    request?: number;
    path?: string;
    recursive?: boolean;
    onlyLinksUnder?: string;
    count?: number;
  };
  switch (message.type) {
    case "backlog":
      backlog = message.count ?? backlog;
      return;
    case "watch":
      return watch(
        message.id!,
        message.request!,
        message.path!,
        message.recursive ?? false,
        message.onlyLinksUnder,
      );
    case "unwatch": {
      const watcher = watchers.get(message.id!);
      watchers.delete(message.id!);
      watcher?.close();
      return;
    }
    case "ack":
      unacknowledged = Math.max(0, unacknowledged - (message.count ?? 0));
      if (dropped || pending.length > 0) scheduleFlush();
      return;
    case "close":
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
      closed = true;
      self.postMessage({ type: "closed" });
      return;
  }
};
