import { deepStrictEqual, rejects, strictEqual, throws } from "node:assert/strict";
import {
  parseS3Location,
  S3_ATTEMPTS,
  S3Client,
  type S3Error,
  s3RetryDelay,
} from "../../lib/objectstore/mod.ts";
import { S3Server } from "./_s3_server.ts";

Deno.test("parseS3Location() reads a bucket and a prefix, and refuses the rest", async (t) => {
  const table: { description: string; input: string; expected: unknown }[] = [
    { description: "bucket only", input: "s3://fleet", expected: { bucket: "fleet", prefix: "" } },
    {
      description: "bucket and /",
      input: "s3://fleet/",
      expected: { bucket: "fleet", prefix: "" },
    },
    {
      description: "a prefix",
      input: "s3://fleet/agents/a1",
      expected: { bucket: "fleet", prefix: "agents/a1/" },
    },
    {
      description: "a prefix ending in /",
      input: "s3://fleet/agents/a1/",
      expected: { bucket: "fleet", prefix: "agents/a1/" },
    },
    { description: "not s3", input: "https://fleet/a", expected: TypeError },
    { description: "uppercase bucket", input: "s3://Fleet/a", expected: TypeError },
    { description: "a .. segment", input: "s3://fleet/a/../b", expected: TypeError },
    { description: "an empty segment", input: "s3://fleet/a//b", expected: TypeError },
  ];
  for (const { description, input, expected } of table) {
    await t.step(description, () => {
      if (expected === TypeError) throws(() => parseS3Location(input), TypeError);
      else deepStrictEqual(parseS3Location(input), expected);
    });
  }
});

Deno.test("S3Client() refuses missing credentials before anything is sent", () => {
  throws(
    () => new S3Client({ bucket: "b", credentials: { accessKeyId: "", secretAccessKey: "" } }),
    /AWS_ACCESS_KEY_ID/,
  );
});

Deno.test("S3Client puts, gets, heads, lists and deletes on a real S3 server", async () => {
  const server = await S3Server.start();
  try {
    const client = server.client();
    const bytes = new TextEncoder().encode("hello, bucket");
    await client.putObject("a/one.txt", bytes);
    await client.putObject("a/two.txt", new Uint8Array(0));
    await client.putObject("b/three.txt", bytes);
    deepStrictEqual(await client.getObject("a/one.txt"), bytes);
    deepStrictEqual(await client.headObject("a/one.txt"), { size: bytes.length });
    strictEqual(await client.getObject("a/missing"), null);
    strictEqual(await client.headObject("a/missing"), null);
    deepStrictEqual(await Array.fromAsync(client.listKeys("a/")), ["a/one.txt", "a/two.txt"]);
    await client.deleteObject("a/one.txt");
    await client.deleteObject("a/one.txt"); // deleting what is gone succeeds
    deepStrictEqual(await Array.fromAsync(client.listKeys("a/")), ["a/two.txt"]);

    const wrong = new S3Client({
      bucket: server.bucket,
      endpoint: server.endpoint,
      credentials: { accessKeyId: "NOT-A-KEY", secretAccessKey: "not-the-secret" },
    });
    await rejects(wrong.putObject("x", bytes), (e: S3Error) => {
      strictEqual(e.status, 403);
      strictEqual(e.message.includes("not-the-secret"), false, "no secret in the message");
      return true;
    });
  } finally {
    await server.close();
  }
});

Deno.test("S3Client says plainly when nothing answers", async () => {
  const server = await S3Server.start();
  const client = server.client();
  await server.close();
  await rejects(client.getObject("a"), (error: S3Error) => {
    strictEqual(error.status, 0);
    strictEqual(error.message.startsWith("Object store GET a: no answer"), true, error.message);
    return true;
  });
});

Deno.test("s3RetryDelay() retries what S3 calls transient, with backoff, a bounded number of times", async (t) => {
  const table: { description: string; input: [number, number, number]; expected: number | null }[] =
    [
      { description: "an internal error (500)", input: [1, 500, 0], expected: 50 },
      { description: "SlowDown (503), later attempt", input: [2, 503, 0], expected: 100 },
      { description: "the most jitter", input: [2, 503, 0.999], expected: 200 },
      { description: "too many requests (429)", input: [1, 429, 0.5], expected: 75 },
      { description: "nobody answered", input: [1, 0, 0], expected: 50 },
      { description: "the last attempt", input: [S3_ATTEMPTS, 500, 0], expected: null },
      { description: "not found (404) is an answer", input: [1, 404, 0], expected: null },
      { description: "forbidden (403) is an answer", input: [1, 403, 0], expected: null },
      { description: "success", input: [1, 200, 0], expected: null },
    ];
  for (const { description, input, expected } of table) {
    await t.step(description, () => strictEqual(s3RetryDelay(...input), expected));
  }
});

Deno.test("S3Client sends a request again when the service fails for a moment, and gives up after a few tries", async () => {
  // A real HTTP server on loopback that fails the first `failures` requests for each key.
  const requests = new Map<string, number>();
  const failures: Record<string, number> = { "/b/flaky": 2, "/b/down": Infinity, "/b/gone": 0 };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    const path = new URL(request.url).pathname;
    const count = (requests.get(path) ?? 0) + 1;
    requests.set(path, count);
    if (count <= (failures[path] ?? 0)) return new Response("busy", { status: 503 });
    if (path === "/b/gone") return new Response(null, { status: 404 });
    return new Response("ok", { status: 200 });
  });
  try {
    const client = new S3Client({
      bucket: "b",
      endpoint: `http://127.0.0.1:${server.addr.port}`,
      credentials: { accessKeyId: "k", secretAccessKey: "s" },
    });
    deepStrictEqual(await client.headObject("flaky"), { size: 2 });
    strictEqual(requests.get("/b/flaky"), 3, "two failures, then the answer");
    await rejects(client.headObject("down"), (error: S3Error) => error.status === 503);
    strictEqual(requests.get("/b/down"), S3_ATTEMPTS, "given up after the last attempt");
    strictEqual(await client.headObject("gone"), null);
    strictEqual(requests.get("/b/gone"), 1, "a 404 is an answer: asked once");
  } finally {
    await server.shutdown();
  }
});
