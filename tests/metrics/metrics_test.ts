import { deepStrictEqual as assertEquals, ok, strictEqual, throws } from "node:assert/strict";
import {
  Counter,
  createChronicleMetrics,
  defaultRegistry,
  Histogram,
  metrics,
  metricsRoutes,
  PROMETHEUS_CONTENT_TYPE,
  Registry,
} from "../../lib/metrics/mod.ts";
import { type Family, parsePrometheusText } from "./_prometheus_text.ts";

function families(text: string): Map<string, Family> {
  return parsePrometheusText(text);
}

Deno.test("Chronicle's metrics render as valid Prometheus text with every named family", () => {
  const registry = new Registry();
  const m = createChronicleMetrics(registry);
  m.iterations.inc(3);
  m.bytesStored.set(12_345);
  m.replicasConnected.set(2);
  m.replicaLag.set({ sandbox_id: "sbx-1" }, 4);
  m.replicaLag.set({ sandbox_id: 'we"ird\\id\nx' }, 0);
  m.writebacks.inc({ result: "accepted" }, 5);
  m.writebacks.inc({ result: "rejected" });
  m.conflicts.inc();
  for (const seconds of [0.0005, 0.003, 0.2, 42]) m.fetchLatency.observe(seconds);
  m.sequence.set(99);

  const parsed = families(registry.render());
  const expected: [string, string][] = [
    ["chronicle_iterations_total", "counter"],
    ["chronicle_bytes_stored", "gauge"],
    ["chronicle_replicas_connected", "gauge"],
    ["chronicle_replica_lag_sequences", "gauge"],
    ["chronicle_writebacks_total", "counter"],
    ["chronicle_conflicts_total", "counter"],
    ["chronicle_fetch_latency_seconds", "histogram"],
    ["chronicle_sequence", "gauge"],
    ["chronicle_objectstore_queued_objects", "gauge"],
    ["chronicle_objectstore_queued_bytes", "gauge"],
    ["chronicle_objectstore_uploaded_bytes_total", "counter"],
    ["chronicle_objectstore_upload_failures_total", "counter"],
    ["chronicle_objectstore_upload_bytes_per_second", "gauge"],
    ["chronicle_heap_collections_total", "counter"],
    ["chronicle_heap_collection_seconds_total", "counter"],
    ["chronicle_heap_keeper_running", "gauge"],
  ];
  assertEquals([...parsed.keys()], expected.map(([name]) => name));
  for (const [name, type] of expected) {
    strictEqual(parsed.get(name)?.type, type, name);
    ok(parsed.get(name)?.help, `${name} has HELP`);
  }
  const value = (name: string, labels: Record<string, string> = {}) =>
    [...parsed.values()].flatMap((family) => family.samples).find((sample) =>
      sample.name === name && JSON.stringify(sample.labels) === JSON.stringify(labels)
    )?.value;
  strictEqual(value("chronicle_iterations_total"), 3);
  strictEqual(value("chronicle_bytes_stored"), 12_345);
  strictEqual(value("chronicle_replica_lag_sequences", { sandbox_id: "sbx-1" }), 4);
  strictEqual(value("chronicle_replica_lag_sequences", { sandbox_id: 'we"ird\\id\nx' }), 0);
  strictEqual(value("chronicle_writebacks_total", { result: "accepted" }), 5);
  strictEqual(value("chronicle_writebacks_total", { result: "rejected" }), 1);
  strictEqual(value("chronicle_fetch_latency_seconds_count"), 4);
  strictEqual(value("chronicle_fetch_latency_seconds_sum"), 0.0005 + 0.003 + 0.2 + 42);
  strictEqual(value("chronicle_fetch_latency_seconds_bucket", { le: "0.001" }), 1);
  strictEqual(value("chronicle_fetch_latency_seconds_bucket", { le: "0.005" }), 2);
  strictEqual(value("chronicle_fetch_latency_seconds_bucket", { le: "10" }), 3);
  strictEqual(value("chronicle_fetch_latency_seconds_bucket", { le: "+Inf" }), 4);
  strictEqual(value("chronicle_sequence"), 99);
});

Deno.test("a fresh registry of Chronicle's metrics is valid and shows zeros", () => {
  const registry = new Registry();
  createChronicleMetrics(registry);
  const text = registry.render();
  const parsed = families(text);
  strictEqual(parsed.get("chronicle_replica_lag_sequences")?.samples.length, 0);
  ok(text.includes('chronicle_writebacks_total{result="rejected"} 0\n'));
  ok(text.includes('chronicle_fetch_latency_seconds_bucket{le="+Inf"} 0\n'));
  ok(text.includes("chronicle_fetch_latency_seconds_count 0\n"));
});

Deno.test("the default registry holds the module-level metrics", () => {
  strictEqual(defaultRegistry.get("chronicle_sequence"), metrics.sequence);
  families(defaultRegistry.render());
});

Deno.test("the exposition escapes label values and HELP text exactly", () => {
  const registry = new Registry();
  registry.gauge({ name: "g", help: "back\\slash and\nnewline", labelNames: ["v"] })
    .set({ v: 'a"b\\c\nd' }, -1.5);
  registry.gauge({ name: "special", help: "Specials", labelNames: ["k"] }).set(
    { k: "inf" },
    Infinity,
  );
  const text = registry.render();
  strictEqual(
    text.split("\n").slice(0, 3).join("\n"),
    '# HELP g back\\\\slash and\\nnewline\n# TYPE g gauge\ng{v="a\\"b\\\\c\\nd"} -1.5',
  );
  ok(text.includes('special{k="inf"} +Inf\n'));
  const parsed = families(text);
  strictEqual(parsed.get("g")?.help, "back\\slash and\nnewline");
  assertEquals(parsed.get("g")?.samples[0], { name: "g", labels: { v: 'a"b\\c\nd' }, value: -1.5 });
});

Deno.test("a labelled histogram keeps one cumulative series per label set", () => {
  const registry = new Registry();
  const histogram = registry.histogram<"op">({
    name: "op_seconds",
    help: "Op time",
    labelNames: ["op"],
    buckets: [1, 2],
  });
  histogram.observe({ op: "a" }, 1);
  histogram.observe({ op: "a" }, 1.5);
  histogram.observe({ op: "b" }, 3);
  assertEquals(histogram.get({ op: "a" }), {
    buckets: [{ le: 1, count: 1 }, { le: 2, count: 2 }, { le: Infinity, count: 2 }],
    sum: 2.5,
    count: 2,
  });
  const parsed = families(registry.render());
  strictEqual(parsed.get("op_seconds")?.samples.length, 2 * (3 + 2));
  const stop = histogram.startTimer({ op: "c" });
  const seconds = stop();
  ok(seconds >= 0);
  strictEqual(histogram.get({ op: "c" }).count, 1);
  strictEqual(histogram.get({ op: "c" }).sum, seconds);
});

Deno.test("collectors run before every render", () => {
  const registry = new Registry();
  const gauge = registry.gauge({ name: "from_store", help: "Read at scrape time" });
  let reads = 0;
  const remove = registry.addCollector(() => gauge.set(++reads * 10));
  ok(registry.render().includes("from_store 10\n"));
  ok(registry.render().includes("from_store 20\n"));
  remove();
  ok(registry.render().includes("from_store 20\n"));
});

Deno.test("a counter raised to running totals follows them and never goes down", async (t) => {
  const cases = [
    { description: "from zero", input: [5], expected: 5 },
    { description: "growing totals", input: [5, 8, 20], expected: 20 },
    { description: "a smaller total is ignored", input: [10, 4], expected: 10 },
    { description: "the same total twice", input: [7, 7], expected: 7 },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => {
      const counter = new Counter({ name: "sent_bytes_total", help: "Bytes sent." });
      for (const total of input) counter.raiseTo(total);
      strictEqual(counter.get(), expected);
    });
  }
  throws(() => new Counter({ name: "x_total", help: "x" }).raiseTo(NaN), RangeError);
});

Deno.test("gauges go up, down and away; reset returns to zero", () => {
  const registry = new Registry();
  const lag = registry.gauge<"sandbox_id">({
    name: "lag",
    help: "Lag",
    labelNames: ["sandbox_id"],
  });
  lag.inc({ sandbox_id: "a" }, 5);
  lag.dec({ sandbox_id: "a" }, 2);
  strictEqual(lag.get({ sandbox_id: "a" }), 3);
  lag.remove({ sandbox_id: "a" });
  strictEqual(registry.render(), "# HELP lag Lag\n# TYPE lag gauge\n");
  const total = registry.counter({ name: "t_total", help: "T" });
  total.inc(2);
  registry.resetAll();
  strictEqual(total.get(), 0);
});

Deno.test("metrics reject bad names, labels and values", async (t) => {
  const table: {
    description: string;
    act: () => unknown;
    error: new (...args: never[]) => Error;
    message: string;
  }[] = [
    {
      description: "bad metric name",
      act: () => new Counter({ name: "9x", help: "" }),
      error: TypeError,
      message: 'Invalid metric name "9x"',
    },
    {
      description: "bad label name",
      act: () => new Counter({ name: "x", help: "", labelNames: ["a-b"] }),
      error: TypeError,
      message: 'Invalid label name "a-b" for metric "x"',
    },
    {
      description: "reserved label prefix",
      act: () => new Counter({ name: "x", help: "", labelNames: ["__a"] }),
      error: TypeError,
      message: 'Invalid label name "__a" for metric "x"',
    },
    {
      description: "repeated label",
      act: () => new Counter({ name: "x", help: "", labelNames: ["a", "a"] }),
      error: TypeError,
      message: 'Label name "a" repeats for metric "x"',
    },
    {
      description: "le on a histogram",
      act: () => new Histogram({ name: "h", help: "", labelNames: ["le"] }),
      error: TypeError,
      message: 'Label name "le" is reserved for metric "h"',
    },
    {
      description: "unsorted buckets",
      act: () => new Histogram({ name: "h", help: "", buckets: [2, 1] }),
      error: TypeError,
      message: 'Buckets of histogram "h" must be finite and increasing',
    },
    {
      description: "no buckets",
      act: () => new Histogram({ name: "h", help: "", buckets: [] }),
      error: TypeError,
      message: 'Histogram "h" needs at least one bucket',
    },
    {
      description: "missing label",
      act: () =>
        new Counter<"a" | "b">({ name: "x", help: "", labelNames: ["a", "b"] }).inc(
          { a: "1" } as { a: string; b: string },
        ),
      error: TypeError,
      message: 'Metric "x" takes "a", "b", got "a"',
    },
    {
      description: "labels on an unlabelled metric",
      act: () => new Counter({ name: "x", help: "" }).inc({ a: "1" } as never),
      error: TypeError,
      message: 'Metric "x" takes no labels, got "a"',
    },
    {
      description: "non-string label",
      act: () =>
        new Counter<"a">({ name: "x", help: "", labelNames: ["a"] }).inc({
          a: 1 as unknown as string,
        }),
      error: TypeError,
      message: 'Label "a" of metric "x" must be a string, got number',
    },
    {
      description: "negative counter increment",
      act: () => new Counter({ name: "x", help: "" }).inc(-1),
      error: RangeError,
      message: 'Counter "x" can only grow, got -1',
    },
    {
      description: "NaN observation",
      act: () => new Histogram({ name: "h", help: "" }).observe(NaN),
      error: RangeError,
      message: 'Histogram "h" needs a number, got NaN',
    },
    {
      description: "duplicate registration",
      act: () => {
        const registry = new Registry();
        registry.gauge({ name: "x", help: "" });
        registry.counter({ name: "x", help: "" });
      },
      error: TypeError,
      message: 'Metric "x" is already registered',
    },
  ];
  for (const row of table) {
    await t.step(row.description, () => {
      throws(row.act, (error: unknown) => {
        ok(error instanceof row.error, `${error} is a ${row.error.name}`);
        strictEqual((error as Error).message, row.message);
        return true;
      });
    });
  }
});

Deno.test("the strict reader rejects malformed exposition text", async (t) => {
  const table: { description: string; text: string; message: string }[] = [
    { description: "no final newline", text: "a 1", message: "Text must end with a newline" },
    { description: "bad value", text: "a one\n", message: 'Line 1: "one" is not a number' },
    { description: "bad escape", text: 'a{b="\\t"} 1\n', message: 'Line 1: invalid escape "\\t"' },
    {
      description: "unterminated label",
      text: 'a{b="x} 1\n',
      message: "Line 1: unterminated label value",
    },
    {
      description: "split group",
      text: 'a 1\nb 1\na{x="1"} 2\n',
      message: 'Line 3: metric "a" appears in two groups',
    },
    {
      description: "TYPE after samples",
      text: "a 1\n# TYPE a gauge\n",
      message: 'Line 2: TYPE for "a" after its samples or twice',
    },
    {
      description: "unknown type",
      text: "# TYPE a meter\n",
      message: 'Line 1: unknown type "meter"',
    },
    { description: "duplicate series", text: "a 1\na 2\n", message: "Line 2: duplicate series" },
    {
      description: "histogram without +Inf",
      text: '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n',
      message: "No +Inf bucket last",
    },
    {
      description: "histogram counts decreasing",
      text: '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n',
      message: "Bucket counts decrease",
    },
    {
      description: "negative counter",
      text: "# TYPE c counter\nc -1\n",
      message: 'Counter "c" has value -1',
    },
  ];
  for (const row of table) {
    await t.step(row.description, () => {
      throws(() => parsePrometheusText(row.text), (error: unknown) => {
        ok((error as Error).message.startsWith(row.message), (error as Error).message);
        return true;
      });
    });
  }
});

Deno.test("metricsRoutes() serves GET /metrics with the exposition content type", async () => {
  const registry = new Registry();
  createChronicleMetrics(registry).sequence.set(7);
  const response = await metricsRoutes(registry).request("/metrics");
  strictEqual(response.status, 200);
  strictEqual(response.headers.get("content-type"), PROMETHEUS_CONTENT_TYPE);
  const parsed = families(await response.text());
  strictEqual(parsed.get("chronicle_sequence")?.samples[0]?.value, 7);
});

Deno.test("GET /metrics answers over a real socket", async () => {
  const registry = new Registry();
  createChronicleMetrics(registry).replicasConnected.set(1);
  const app = metricsRoutes(registry);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, app.fetch);
  try {
    const response = await fetch(`http://127.0.0.1:${server.addr.port}/metrics`);
    const parsed = families(await response.text());
    strictEqual(parsed.get("chronicle_replicas_connected")?.samples[0]?.value, 1);
  } finally {
    await server.shutdown();
  }
});
