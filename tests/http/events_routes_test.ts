/**
 * `GET /events` (Server-Sent Events of iterations) on the real REST app over a real
 * workspace and store; formatEvent() and matchesFilter() by tables.
 */
import assert from "node:assert/strict";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import {
  createApp,
  EVENT_BATCH,
  eventsRoutes,
  type EventsRoutesOptions,
  filesRoutes,
  formatEvent,
  matchesFilter,
} from "../../lib/http/mod.ts";
import type { Iteration } from "../../lib/store/mod.ts";
import { Workspace } from "../../lib/workspace/mod.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

const text = (s: string) => new TextEncoder().encode(s);

/** Reads an event stream's events as they come. */
class EventReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #events: EventSourceMessage[] = [];
  readonly #parser = createParser({ onEvent: (event) => this.#events.push(event) });
  readonly #decoder = new TextDecoder();
  /** The chunks read so far, each as its events' count. */
  readonly chunks: number[] = [];
  done = false;

  constructor(body: ReadableStream<Uint8Array>) {
    this.#reader = body.getReader();
  }

  /** The next `count` events (keep-alive comments are not events). */
  async take(count: number): Promise<EventSourceMessage[]> {
    while (this.#events.length < count && !this.done) await this.readChunk();
    return this.#events.splice(0, count);
  }

  /** Reads one chunk of the body. */
  async readChunk(): Promise<void> {
    const before = this.#events.length;
    const { done, value } = await this.#reader.read();
    if (done) this.done = true;
    else this.#parser.feed(this.#decoder.decode(value, { stream: true }));
    this.chunks.push(this.#events.length - before);
  }

  cancel(): Promise<void> {
    return this.#reader.cancel();
  }
}

async function withEvents(
  work: (
    workspace: Workspace,
    request: (url: string, init?: RequestInit) => Promise<Response>,
  ) => Promise<void>,
  options: EventsRoutesOptions = {},
): Promise<void> {
  await withTempDir(async (root) => {
    const workspace = await Workspace.open({ root });
    try {
      const app = createApp({
        token: undefined,
        trustedCaller: true,
        routes: [filesRoutes(workspace), eventsRoutes(workspace.store, options)],
      });
      await work(workspace, (url, init) => Promise.resolve(app.request(url, init)));
    } finally {
      await workspace.close();
    }
  });
}

Deno.test("GET /events streams iterations after since: id, event: iteration, data as /changes shows it", () =>
  withEvents(async (workspace, request) => {
    await workspace.writeBytes("a.txt", text("one"));
    await workspace.writeBytes("b.txt", text("two"));
    await workspace.remove("a.txt");
    const response = await request("/events?since=1");
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type")!, /^text\/event-stream/);
    assert.equal(response.headers.get("x-chronicle-sequence"), "1");
    const reader = new EventReader(response.body!);
    const events = await reader.take(2);
    const changes = (await (await request("/changes?since=1")).json()).changes;
    assert.deepEqual(
      events.map((e) => ({ id: e.id, event: e.event, data: JSON.parse(e.data) })),
      changes.map((c: { sequence: number }) => ({
        id: String(c.sequence),
        event: "iteration",
        data: c,
      })),
    );
    await reader.cancel();
  }));

Deno.test("GET /events starts at now by default, and sends what is recorded later", () =>
  withEvents(async (workspace, request) => {
    await workspace.writeBytes("old.txt", text("before"));
    const response = await request("/events");
    assert.equal(response.headers.get("x-chronicle-sequence"), "1");
    const reader = new EventReader(response.body!);
    const next = reader.take(1);
    await workspace.writeBytes("new.txt", text("after"));
    const [event] = await next;
    assert.equal(JSON.parse(event!.data).path, "new.txt");
    assert.equal(event!.id, "2");
    await reader.cancel();
  }));

Deno.test("GET /events: Last-Event-ID takes the place of since, as an EventSource reconnecting sends it", () =>
  withEvents(async (workspace, request) => {
    for (const name of ["a", "b", "c"]) await workspace.writeBytes(`${name}.txt`, text(name));
    const response = await request("/events?since=0", { headers: { "Last-Event-ID": "2" } });
    const reader = new EventReader(response.body!);
    const [event] = await reader.take(1);
    assert.equal(event!.id, "3");
    await reader.cancel();
    // An empty Last-Event-ID (nothing received yet) leaves since in charge.
    const fresh = await request("/events?since=1", { headers: { "Last-Event-ID": "" } });
    const again = new EventReader(fresh.body!);
    assert.equal((await again.take(1))[0]!.id, "2");
    await again.cancel();
  }));

Deno.test("GET /events filters by path prefix and origin", () =>
  withEvents(async (workspace, request) => {
    await workspace.writeBytes("src/a.ts", text("a"));
    await workspace.writeBytes("docs/x.md", text("x"), { origin: "api" });
    await workspace.writeBytes("src/b.ts", text("b"), { origin: "api" });
    await workspace.writeBytes("src/c.ts", text("c"));
    const paths = async (query: string, count: number) => {
      const response = await request(`/events?since=0&${query}`);
      const reader = new EventReader(response.body!);
      const events = await reader.take(count);
      await reader.cancel();
      return events.map((e) => JSON.parse(e.data).path);
    };
    assert.deepEqual(await paths("path=src/", 3), ["src/a.ts", "src/b.ts", "src/c.ts"]);
    // The folder docs is made by the api write of docs/x.md, so it is the api's too.
    assert.deepEqual(await paths("origin=api", 3), ["docs", "docs/x.md", "src/b.ts"]);
    assert.deepEqual(await paths("origin=api&path=src", 1), ["src/b.ts"]);
  }));

Deno.test("GET /events sends a slow reader one batch at a time: what it has not taken stays in the store", () =>
  withEvents(async (workspace, request) => {
    const count = EVENT_BATCH * 3 + 5;
    await workspace.applyChanges(
      await Promise.all(Array.from({ length: count }, async (_, i) => {
        const { hash } = await workspace.cas.putBytes(text(`file ${i}`));
        return { path: `f${i}.txt`, hash, mode: 0o100644 };
      })),
    );
    const response = await request("/events?since=0");
    const reader = new EventReader(response.body!);
    const events = await reader.take(count);
    assert.equal(events.length, count);
    assert.deepEqual(
      events.map((e) => Number(e.id)),
      Array.from({ length: count }, (_, i) => i + 1),
    );
    assert.ok(Math.max(...reader.chunks) <= EVENT_BATCH, `chunks of ${reader.chunks}`);
    await reader.cancel();
  }));

Deno.test("GET /events ends every stream with event: end when the process shuts down", async () => {
  const shutdown = new AbortController();
  await withEvents(async (workspace, request) => {
    const response = await request("/events");
    const reader = new EventReader(response.body!);
    const next = reader.take(1);
    shutdown.abort();
    const [event] = await next;
    assert.deepEqual([event!.event, JSON.parse(event!.data)], ["end", { reason: "shutting down" }]);
    while (!reader.done) await reader.readChunk();
    await workspace.writeBytes("late.txt", text("after the end"));
  }, { signal: shutdown.signal });
});

Deno.test("GET /events refuses more streams than allowed, and a closed one frees its place", () =>
  withEvents(async (_workspace, request) => {
    const first = await request("/events");
    const second = await request("/events");
    assert.equal(second.status, 503);
    assert.equal((await second.json()).error.code, "too_many_streams");
    await first.body!.cancel();
    const third = await request("/events");
    assert.equal(third.status, 200);
    await third.body!.cancel();
  }, { maxStreams: 1 }));

Deno.test("GET /events refuses a bad since or Last-Event-ID", async (t) => {
  const cases = [
    { description: "negative since", url: "/events?since=-1", headers: {} },
    { description: "since not a number", url: "/events?since=abc", headers: {} },
    { description: "a fractional since", url: "/events?since=1.5", headers: {} },
    { description: "a bad Last-Event-ID", url: "/events", headers: { "Last-Event-ID": "x" } },
  ];
  await withEvents(async (_workspace, request) => {
    for (const { description, url, headers } of cases) {
      await t.step(description, async () => {
        const response = await request(url, { headers });
        assert.equal(response.status, 400);
        assert.equal((await response.json()).error.code, "bad_parameter");
      });
    }
  });
});

Deno.test("formatEvent() writes one event, its data on one line", async (t) => {
  const cases = [
    {
      description: "an iteration with its id",
      input: { event: "iteration", data: { path: "a\nb" }, id: 7 },
      expected: 'id: 7\nevent: iteration\ndata: {"path":"a\\nb"}\n\n',
    },
    {
      description: "an event without id",
      input: { event: "end", data: { reason: "shutting down" }, id: undefined },
      expected: 'event: end\ndata: {"reason":"shutting down"}\n\n',
    },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => {
      assert.equal(formatEvent(input.event, input.data, input.id), expected);
    });
  }
});

Deno.test("matchesFilter() keeps what every given filter allows", async (t) => {
  const iteration = { path: "src/a.ts", origin: "api" } as Iteration;
  const cases = [
    { description: "no filter", input: {}, expected: true },
    { description: "a matching prefix", input: { pathPrefix: "src/" }, expected: true },
    { description: "another prefix", input: { pathPrefix: "docs" }, expected: false },
    { description: "the origin", input: { origin: "api" }, expected: true },
    { description: "another origin", input: { origin: "local" }, expected: false },
    {
      description: "both, one failing",
      input: { pathPrefix: "src", origin: "local" },
      expected: false,
    },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => assert.equal(matchesFilter(iteration, input), expected));
  }
});
