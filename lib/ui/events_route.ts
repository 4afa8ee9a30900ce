import { Hono } from "hono";
import { changeEntry, HttpError } from "../http/mod.ts";
import type { Iteration, Store } from "../store/mod.ts";

/** Limits of the live feed, {@linkcode eventsRoute}. */
export interface EventsOptions {
  /**
   * Feeds open at once; one more is refused with 503.
   *
   * @default {16}
   */
  maxStreams?: number;
  /**
   * Iterations a feed may hold for a slow reader (and sends on connect); beyond it the
   * reader is told `reset` (reload the page) and the feed closes.
   *
   * @default {2000}
   */
  maxBacklog?: number;
  /**
   * Time between keep-alive comments.
   *
   * @default {15000}
   */
  heartbeatMs?: number;
}

/**
 * `GET /ui/api/events?since=SEQ`: a Server-Sent Events feed of the iterations recorded
 * after SEQ (`event: iterations`, `data: [{path, iteration, sequence, …}]`), in batches as
 * they are recorded; `event: reset` when the reader fell more than `maxBacklog` behind
 * (it reloads instead). Bounded in streams, memory and time between writes.
 *
 * @param store The store whose recordings are sent.
 * @param options The limits.
 * @returns The route, to mount at `/`.
 */
export function eventsRoute(store: Store, options: EventsOptions = {}): Hono {
  const maxStreams = options.maxStreams ?? 16;
  const maxBacklog = options.maxBacklog ?? 2000;
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  let open = 0;
  const app = new Hono();
  app.get("/ui/api/events", (c) => {
    const sinceText = c.req.query("since") ?? String(store.sequence());
    if (!/^\d+$/.test(sinceText) || !Number.isSafeInteger(Number(sinceText))) {
      throw new HttpError(
        400,
        "bad_parameter",
        `Invalid since "${sinceText}": expected an integer`,
      );
    }
    if (open >= maxStreams) {
      throw new HttpError(503, "busy", `Too many live feeds open (${maxStreams}); close a tab`);
    }
    open++;
    const encoder = new TextEncoder();
    let stop = () => {};
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        let closed = false;
        const send = (text: string) => {
          if (!closed) controller.enqueue(encoder.encode(text));
        };
        const reset = () => {
          send("event: reset\ndata: {}\n\n");
          stop();
          controller.close();
        };
        let last = Number(sinceText);
        const deliver = (iterations: Iteration[]) => {
          const fresh = iterations.filter((iteration) => iteration.sequence > last);
          if (fresh.length === 0) return;
          // A reader that does not drain its stream is cut off rather than buffered for.
          if ((controller.desiredSize ?? 0) < -maxBacklog * 256 || fresh.length > maxBacklog) {
            return reset();
          }
          last = fresh.at(-1)!.sequence;
          send(`event: iterations\ndata: ${JSON.stringify(fresh.map(changeEntry))}\n\n`);
        };
        const unsubscribe = store.onRecorded(deliver);
        const heartbeat = setInterval(() => send(": keep-alive\n\n"), heartbeatMs);
        stop = () => {
          if (closed) return;
          closed = true;
          open--;
          unsubscribe();
          clearInterval(heartbeat);
        };
        send(`event: hello\ndata: ${JSON.stringify({ sequence: store.sequence() })}\n\n`);
        const missed = store.changesSince(last, { limit: maxBacklog + 1 });
        if (missed.length > maxBacklog) reset();
        else deliver(missed);
      },
      cancel() {
        stop();
      },
    });
    return new Response(body, {
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-store",
        "x-accel-buffering": "no",
      },
    });
  });
  return app;
}
