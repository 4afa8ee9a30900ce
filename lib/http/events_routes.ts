import { Hono } from "hono";
import type { Routes } from "../net/mod.ts";
import type { Iteration, Store } from "../store/mod.ts";
import { HttpError } from "./errors.ts";
import { changeEntry } from "./files_routes.ts";

/** Options for {@linkcode eventsRoutes}. */
export interface EventsRoutesOptions {
  /** Aborted when the process shuts down: every stream sends `event: end` and closes. */
  signal?: AbortSignal;
  /** Most event streams open at once; more are refused with 503. @default {64} */
  maxStreams?: number;
  /** Time between keep-alive comments on a quiet stream. @default {15000} */
  keepAliveMs?: number;
}

/** What one stream sends: iterations after `since`, matching the filters. */
export interface EventFilter {
  /** Only paths starting with this text. @default {every path} */
  pathPrefix?: string | undefined;
  /** Only iterations of this origin. @default {every origin} */
  origin?: string | undefined;
}

/**
 * Iterations read from the store per turn of a stream: the most a stream holds in memory
 * before its reader takes it. A slow reader only delays the next read; what it has not
 * been sent yet stays in the database, behind its cursor.
 */
export const EVENT_BATCH = 256;
const DEFAULT_MAX_STREAMS = 64;
const DEFAULT_KEEP_ALIVE_MS = 15_000;
const encoder = new TextEncoder();

/**
 * `GET /events?since=SEQ&path=PREFIX&origin=X`: the iterations recorded after SEQ (by
 * default, from now on), live, as Server-Sent Events. Each is
 *
 * ```text
 * id: SEQUENCE
 * event: iteration
 * data: {"path",…} (one line: the iteration as GET /changes shows it)
 * ```
 *
 * followed by a blank line. A `Last-Event-ID` header (an `EventSource` reconnecting)
 * takes the place of `since`. Quiet streams get a `: keep-alive` comment now and then;
 * at shutdown every stream gets `event: end` (`data: {"reason":"shutting down"}`) and
 * closes. The answer's `X-Chronicle-Sequence` header is the sequence the stream starts
 * after.
 *
 * @param store The store whose iterations are streamed.
 * @param options Shutdown signal and limits.
 * @returns The route, to mount at `/`.
 */
export function eventsRoutes(store: Store, options: EventsRoutesOptions = {}): Routes {
  const app = new Hono();
  const maxStreams = options.maxStreams ?? DEFAULT_MAX_STREAMS;
  let open = 0;
  app.get("/events", (c) => {
    const since = sequenceParameter(c.req.header("last-event-id"), "Last-Event-ID") ??
      sequenceParameter(c.req.query("since"), "since") ?? store.sequence();
    const filter = { pathPrefix: c.req.query("path"), origin: c.req.query("origin") };
    if (open >= maxStreams) {
      throw new HttpError(
        503,
        "too_many_streams",
        `Already ${open} event streams open, the most allowed: close one and try again`,
      );
    }
    open++;
    const body = iterationEvents(store, since, filter, {
      ...options,
      onClose: () => open--,
    });
    return new Response(body, {
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        "x-chronicle-sequence": String(since),
      },
    });
  });
  return app;
}

/**
 * One Server-Sent Event, as {@linkcode eventsRoutes} writes it. Pure.
 *
 * @param event The event's type.
 * @param data Its data, written as one line of JSON.
 * @param id Its id (the sequence), if any.
 * @returns The event's text, ending in a blank line.
 *
 * @example An iteration event
 * ```ts
 * import { strictEqual } from "node:assert/strict";
 * import { formatEvent } from "./events_routes.ts";
 * strictEqual(formatEvent("iteration", { a: 1 }, 7), 'id: 7\nevent: iteration\ndata: {"a":1}\n\n');
 * ```
 */
export function formatEvent(event: string, data: unknown, id?: number): string {
  const idLine = id === undefined ? "" : `id: ${id}\n`;
  // JSON.stringify escapes newlines inside strings, so the data is always one line.
  return `${idLine}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * Whether an iteration passes a stream's filters. Pure.
 *
 * @param iteration The iteration.
 * @param filter The filters.
 * @returns Whether to send it.
 */
export function matchesFilter(iteration: Iteration, filter: EventFilter): boolean {
  if (filter.origin !== undefined && iteration.origin !== filter.origin) return false;
  return filter.pathPrefix === undefined || iteration.path.startsWith(filter.pathPrefix);
}

/**
 * The stream of one `GET /events`: pulled by its reader, one batch of at most
 * {@linkcode EVENT_BATCH} iterations a turn, read from the store after its cursor; when
 * it has caught up, it waits for the store to record more (or the keep-alive, or the
 * shutdown).
 */
function iterationEvents(
  store: Store,
  since: number,
  filter: EventFilter,
  options: EventsRoutesOptions & { onClose: () => void },
): ReadableStream<Uint8Array> {
  let cursor = since;
  let closed = false;
  let fresh = true; // something may be waiting in the store
  let wake: (() => void) | undefined;
  const nudge = () => {
    fresh = true;
    wake?.();
  };
  const unsubscribe = store.onRecorded(nudge);
  const signal = options.signal;
  signal?.addEventListener("abort", nudge);
  const close = () => {
    if (closed) return;
    closed = true;
    unsubscribe();
    signal?.removeEventListener("abort", nudge);
    wake?.();
    options.onClose();
  };
  const keepAliveMs = options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(`retry: 1000\n: iterations after sequence ${since}\n\n`));
    },
    async pull(controller) {
      while (!closed) {
        if (signal?.aborted || !store.db.isOpen) {
          controller.enqueue(encoder.encode(formatEvent("end", { reason: "shutting down" })));
          controller.close();
          close();
          return;
        }
        if (fresh) {
          fresh = false;
          const batch = store.changesSince(cursor, { limit: EVENT_BATCH });
          if (batch.length === EVENT_BATCH) fresh = true; // more behind it
          if (batch.length > 0) {
            cursor = batch[batch.length - 1]!.sequence;
            const text = batch.filter((it) => matchesFilter(it, filter))
              .map((it) => formatEvent("iteration", changeEntry(it), it.sequence)).join("");
            if (text !== "") {
              controller.enqueue(encoder.encode(text));
              return;
            }
            continue;
          }
        }
        let timer: ReturnType<typeof setTimeout> | undefined;
        const woken = await new Promise<boolean>((resolve) => {
          wake = () => resolve(true);
          timer = setTimeout(() => resolve(false), keepAliveMs);
        });
        wake = undefined;
        clearTimeout(timer);
        if (!woken && !closed) {
          controller.enqueue(encoder.encode(": keep-alive\n\n"));
          return;
        }
      }
    },
    cancel() {
      close();
    },
  });
}

function sequenceParameter(text: string | undefined, name: string): number | undefined {
  if (text === undefined || text === "") return undefined;
  const value = Number(text);
  if (!/^\d{1,16}$/.test(text) || !Number.isSafeInteger(value)) {
    throw new HttpError(
      400,
      "bad_parameter",
      `Invalid ${name} "${text}": expected a sequence >= 0`,
    );
  }
  return value;
}
