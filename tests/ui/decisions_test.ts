import { assertEquals } from "../_helpers/assert.ts";
import { markBursts } from "../../lib/ui/bursts.ts";
import { contentKind } from "../../lib/ui/content_kind.ts";
import { loopbackHostAllowed } from "../../lib/ui/host_check.ts";
import { guard } from "../../lib/ui/ui_listener.ts";

const at = (timestamp: number, origin = "local") => ({ timestamp, origin });

Deno.test("markBursts: where bursts begin in a newest-first page", async (t) => {
  const cases = [
    { description: "an empty page", input: { page: [], newer: undefined }, expected: [] },
    {
      description: "the first row of the first page starts a burst",
      input: { page: [at(100_000), at(90_000)], newer: undefined },
      expected: [true, false],
    },
    {
      description: "a pause longer than the gap starts a new burst",
      input: { page: [at(100_000), at(60_000), at(50_000)], newer: undefined },
      expected: [true, true, false],
    },
    {
      description: "exactly the gap stays in the burst",
      input: { page: [at(100_000), at(70_000)], newer: undefined },
      expected: [true, false],
    },
    {
      description: "another origin starts a new burst",
      input: { page: [at(100_000), at(99_000, "sandbox-1")], newer: undefined },
      expected: [true, true],
    },
    {
      description: "a later page continues the burst of the row above it",
      input: { page: [at(95_000), at(20_000)], newer: at(100_000) },
      expected: [false, true],
    },
    {
      description: "a later page starts a burst after a pause",
      input: { page: [at(10_000)], newer: at(100_000) },
      expected: [true],
    },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => {
      assertEquals(markBursts(input.page, input.newer, 30_000), expected);
    });
  }
});

Deno.test("loopbackHostAllowed: only this listener's loopback names", async (t) => {
  const cases = [
    { description: "127.0.0.1 with the port", input: "127.0.0.1:8080", expected: true },
    { description: "localhost with the port", input: "localhost:8080", expected: true },
    { description: "LOCALHOST in capitals", input: "LOCALHOST:8080", expected: true },
    { description: "IPv6 loopback", input: "[::1]:8080", expected: true },
    { description: "another port", input: "127.0.0.1:9090", expected: false },
    { description: "no port", input: "localhost", expected: false },
    { description: "a rebinding name", input: "evil.example:8080", expected: false },
    { description: "a name ending like localhost", input: "notlocalhost:8080", expected: false },
    { description: "no header", input: null, expected: false },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => assertEquals(loopbackHostAllowed(input, 8080), expected));
  }
});

Deno.test("guard: Host first, then the token for all but the static assets", async (t) => {
  const token = "a".repeat(64);
  const cases = [
    {
      description: "the page without a token",
      input: { path: "/ui/", host: "127.0.0.1:7000", auth: undefined, method: "GET" },
      expected: undefined,
    },
    {
      description: "the script without a token",
      input: { path: "/ui/app.js", host: "localhost:7000", auth: undefined, method: "GET" },
      expected: undefined,
    },
    {
      description: "the page under a foreign Host",
      input: { path: "/ui/", host: "evil.example:7000", auth: undefined, method: "GET" },
      expected: 421,
    },
    {
      description: "a read without a token",
      input: { path: "/ui/api/timeline", host: "127.0.0.1:7000", auth: undefined, method: "GET" },
      expected: 401,
    },
    {
      description: "a write without a token",
      input: {
        path: "/snapshots/x/rollback",
        host: "127.0.0.1:7000",
        auth: undefined,
        method: "POST",
      },
      expected: 401,
    },
    {
      description: "a write with a wrong token",
      input: { path: "/files/a", host: "127.0.0.1:7000", auth: "Bearer nope", method: "PUT" },
      expected: 401,
    },
    {
      description: "a token in a cookie is not a token",
      input: {
        path: "/ui/api/tree",
        host: "127.0.0.1:7000",
        auth: undefined,
        method: "GET",
        cookie: `token=${token}`,
      },
      expected: 401,
    },
    {
      description: "a write with the token",
      input: { path: "/files/a", host: "127.0.0.1:7000", auth: `Bearer ${token}`, method: "PUT" },
      expected: undefined,
    },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => {
      const headers = new Headers({ host: input.host });
      if (input.auth) headers.set("authorization", input.auth);
      if ("cookie" in input && input.cookie) headers.set("cookie", input.cookie);
      const request = new Request(`http://127.0.0.1:7000${input.path}`, {
        method: input.method,
        headers,
      });
      assertEquals(guard(request, 7000, token)?.status, expected);
    });
  }
});

Deno.test("contentKind: text, images by signature, other binary", async (t) => {
  const bytes = (...values: number[]) => new Uint8Array(values);
  const cases = [
    {
      description: "UTF-8 text",
      input: { path: "a.md", bytes: new TextEncoder().encode("héllo\n") },
      expected: "text",
    },
    {
      description: "empty content is text",
      input: { path: "a", bytes: bytes() },
      expected: "text",
    },
    {
      description: "a PNG",
      input: { path: "x", bytes: bytes(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0) },
      expected: "image",
    },
    {
      description: "a JPEG",
      input: { path: "x.jpg", bytes: bytes(0xff, 0xd8, 0xff, 0xe0) },
      expected: "image",
    },
    {
      description: "a GIF",
      input: { path: "x", bytes: new TextEncoder().encode("GIF89a") },
      expected: "image",
    },
    {
      description: "a .png name with text inside is text",
      input: { path: "x.png", bytes: new TextEncoder().encode("not a png") },
      expected: "text",
    },
    {
      description: "SVG is text, never an image (it can hold script)",
      input: { path: "x.svg", bytes: new TextEncoder().encode("<svg/>") },
      expected: "text",
    },
    {
      description: "NUL bytes are binary",
      input: { path: "x.bin", bytes: bytes(0, 1, 2) },
      expected: "binary",
    },
    {
      description: "invalid UTF-8 is binary",
      input: { path: "x", bytes: bytes(0xc3, 0x28) },
      expected: "binary",
    },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(
      description,
      () => assertEquals(contentKind(input.path, input.bytes).kind, expected),
    );
  }
});
