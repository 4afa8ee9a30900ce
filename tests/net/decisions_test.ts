/** The pure decisions of lib/net: admission, Host names, access rules, budgets. */
import {
  accessPolicy,
  admitConnection,
  type BudgetHolder,
  ByteBudget,
  defaultMaxConnections,
  isLoopbackHostHeader,
  type RequestHead,
} from "../../lib/net/mod.ts";
import { assertEquals } from "../_helpers/assert.ts";

function head(
  headers: Record<string, string>,
  target = "/files",
  method = "GET",
): RequestHead {
  return { method, target, header: (name) => headers[name.toLowerCase()] };
}

Deno.test("admitConnection refuses at the listener's cap, then at the process's", async (t) => {
  const table = [
    {
      description: "room everywhere",
      input: { listenerOpen: 0, listenerMax: 2, totalOpen: 0, totalMax: 4 },
      expected: null,
    },
    {
      description: "listener full",
      input: { listenerOpen: 2, listenerMax: 2, totalOpen: 2, totalMax: 4 },
      expected: "this listener already holds its maximum of 2 connections",
    },
    {
      description: "process full, listener not",
      input: { listenerOpen: 1, listenerMax: 2, totalOpen: 4, totalMax: 4 },
      expected: "Chronicle already holds its maximum of 4 connections",
    },
  ];
  for (const { description, input, expected } of table) {
    await t.step(description, () => assertEquals(admitConnection(input), expected));
  }
});

Deno.test("defaultMaxConnections follows the open-file limit, within 16 and 1,024", async (t) => {
  const table = [
    { description: "unknown limit: 1,024 assumed", input: null, expected: 696 },
    { description: "ulimit 256", input: 256, expected: 120 },
    { description: "ulimit 100 (almost nothing left)", input: 100, expected: 16 },
    { description: "ulimit 1,048,576", input: 1_048_576, expected: 1024 },
  ];
  for (const { description, input, expected } of table) {
    await t.step(description, () => assertEquals(defaultMaxConnections(input), expected));
  }
});

Deno.test("isLoopbackHostHeader accepts only loopback names", async (t) => {
  const table = [
    { description: "127.0.0.1 with port", input: "127.0.0.1:3000", expected: true },
    { description: "localhost", input: "localhost", expected: true },
    { description: "a .localhost name", input: "app.localhost:80", expected: true },
    { description: "IPv6 loopback", input: "[::1]:3000", expected: true },
    { description: "127/8", input: "127.1.2.3", expected: true },
    { description: "a rebinding name", input: "evil.example:3000", expected: false },
    { description: "localhost as a prefix", input: "localhost.evil.example", expected: false },
    { description: "another address", input: "10.0.0.1:3000", expected: false },
    { description: "missing", input: undefined, expected: false },
    { description: "garbage", input: "127.0.0.1:3000@evil", expected: false },
  ];
  for (const { description, input, expected } of table) {
    await t.step(description, () => assertEquals(isLoopbackHostHeader(input), expected));
  }
});

Deno.test("accessPolicy: Host check on loopback, token when asked, open probes", async (t) => {
  const loopback = accessPolicy({ loopback: true, token: "s3cret" });
  const guarded = accessPolicy({
    token: "s3cret",
    tokenForAll: true,
    open: (request) => request.target === "/health",
  });
  const ws = accessPolicy({ token: "s3cret", tokenForAll: true, tokenInQuery: true });
  const noToken = accessPolicy({ tokenForAll: true });
  const table = [
    {
      description: "loopback listener, loopback Host: served without a token",
      input: loopback(head({ host: "127.0.0.1:1" })),
      expected: null,
    },
    {
      description: "loopback listener, foreign Host: 403",
      input: loopback(head({ host: "evil.example" }))?.status,
      expected: 403,
    },
    {
      description: "token for all, none given: 401",
      input: guarded(head({ host: "h" }))?.message,
      expected: "Missing bearer token",
    },
    {
      description: "token for all, wrong one: 401",
      input: guarded(head({ authorization: "Bearer nope" }))?.message,
      expected: "Wrong bearer token",
    },
    {
      description: "token for all, right one",
      input: guarded(head({ authorization: "Bearer s3cret" })),
      expected: null,
    },
    {
      description: "an open probe needs no token",
      input: guarded(head({}, "/health")),
      expected: null,
    },
    {
      description: "?token= counts where allowed",
      input: ws(head({}, "/?token=s3cret")),
      expected: null,
    },
    {
      description: "?token= does not count elsewhere",
      input: guarded(head({}, "/files?token=s3cret"))?.status,
      expected: 401,
    },
    {
      description: "no token configured refuses everyone",
      input: noToken(head({ authorization: "Bearer anything" }))?.status,
      expected: 401,
    },
  ];
  for (const { description, input, expected } of table) {
    await t.step(description, () => assertEquals(input, expected));
  }
});

class Holder implements BudgetHolder {
  reason: string | null = null;
  constructor(readonly name: string) {}
  evict(reason: string): void {
    this.reason = reason;
  }
}

Deno.test("ByteBudget evicts a holder over its share, and the largest when all are over", async (t) => {
  await t.step("within both budgets nobody is evicted", () => {
    const budget = new ByteBudget({ perHolder: 10, total: 20 });
    const [a, b] = [new Holder("a"), new Holder("b")];
    assertEquals([budget.set(a, 10), budget.set(b, 10)], [true, true]);
    assertEquals([a.reason, b.reason, budget.total], [null, null, 20]);
  });
  await t.step("one holder past its share is evicted and releases its bytes", () => {
    const budget = new ByteBudget({ perHolder: 10, total: 100 });
    const a = new Holder("a");
    assertEquals(budget.set(a, 11), false);
    assertEquals(budget.total, 0);
    assertEquals(a.reason?.includes("per-connection budget of '10' bytes"), true);
  });
  await t.step("past the total, the largest goes, even when another pushed it over", () => {
    const budget = new ByteBudget({ perHolder: 10, total: 15 });
    const [big, small] = [new Holder("big"), new Holder("small")];
    budget.set(big, 9);
    assertEquals(budget.set(small, 7), true);
    assertEquals([big.reason !== null, small.reason, budget.total], [true, null, 7]);
  });
  await t.step("a holder that is itself the largest learns it was evicted", () => {
    const budget = new ByteBudget({ perHolder: 10, total: 15 });
    const [a, b] = [new Holder("a"), new Holder("b")];
    budget.set(a, 6);
    assertEquals(budget.set(b, 10), false);
    assertEquals([a.reason, budget.total], [null, 6]);
  });
  await t.step("setting 0 releases", () => {
    const budget = new ByteBudget({ perHolder: 10, total: 15 });
    const a = new Holder("a");
    budget.set(a, 8);
    budget.set(a, 0);
    assertEquals(budget.total, 0);
  });
});
