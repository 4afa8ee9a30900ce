/**
 * A bounded, seeded fuzz of the REST API over raw TCP: random methods and raw paths built
 * from dot segments, percent-encoded dots and slashes, NUL, long names and the links in
 * the tree. Whatever comes, no answer is a 5xx, no body names a server path, and nothing
 * is written outside the workspace. Set `CHRONICLE_FUZZ_SEED` to replay a seed.
 */
import assert from "node:assert/strict";
import { lstatOrNullSync } from "../../lib/disk/mod.ts";
import { listTree, rawRequest, withRestServer } from "./_rest_server.ts";

/** Requests per run: bounded so the test stays a few seconds long. */
const REQUESTS = 400;

/** xorshift32: the same sequence for the same seed. */
function random(seed: number): () => number {
  let s = (seed | 0) || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 0x1_0000_0000;
  };
}

// Weighted towards the routes that write: most requests reach a handler.
const METHODS = ["PUT", "PUT", "PUT", "PUT", "GET", "GET", "DELETE", "DELETE", "POST", "HEAD"];
const SEGMENTS = [
  "a",
  "a",
  "b.txt",
  "new.txt",
  "new.txt",
  "d",
  "..",
  ".",
  "%2e%2e",
  "%2E%2e",
  "%2e",
  "..%2f..",
  "%2f",
  "a%2Fb",
  "%2F..%2F..%2Fetc",
  "%00",
  "a%00b",
  "x".repeat(300),
  "é".repeat(130),
  "link",
  "dirlink",
  "abslink",
  "plain.txt",
  "history",
  "at",
  "1",
  "0",
  "-1",
  ".chronicle",
  ".chronicleignore",
  "",
  "%zz",
  "%",
  "~",
];
const PREFIXES = [
  "/files/",
  "/files/",
  "/files/",
  "/files/",
  "/files/",
  "/files",
  "/",
  "/files/../",
];
const SUFFIXES = [
  "",
  "/history",
  "/at/1",
  "/at/0",
  "/at/99999999999999999999",
  "?mode=4755",
  "?mode=abc",
  "?mode=0755",
];

Deno.test("REST fuzz: random methods and raw paths never give a 5xx, leak a path or write outside", () =>
  withRestServer(
    async ({ base, root, outside, port }) => {
      const seed = Number(Deno.env.get("CHRONICLE_FUZZ_SEED") ?? "20261124");
      const next = random(seed);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
      const outsideBefore = listTree(outside);
      const baseEntries = () => [...Deno.readDirSync(base)].map((e) => e.name).sort();
      const baseBefore = baseEntries();
      for (let i = 0; i < REQUESTS; i++) {
        const count = 1 + Math.floor(next() * 3);
        const segments = Array.from({ length: count }, () => pick(SEGMENTS));
        const target = pick(PREFIXES) + segments.join("/") + pick(SUFFIXES);
        const method = pick(METHODS);
        const body = next() < 0.3 ? "/etc" : `body ${i}`;
        const response = await rawRequest(port, method, target, method === "GET" ? "" : body);
        const context = `seed ${seed}, request ${i}: ${method} ${target} -> ${response.status} ${
          response.body.slice(0, 300)
        }`;
        assert.ok(response.status >= 200 && response.status < 500, context);
        // A file's content is the workspace's (a link to the outside folder, as the agent
        // made it, is served as its target); error bodies must name no server path.
        if (response.status >= 400) {
          assert.ok(!response.body.includes(base), `leaks a server path: ${context}`);
          assert.ok(!response.body.includes("chronicle-tmp"), `leaks a temp name: ${context}`);
        }
      }
      assert.deepEqual(listTree(outside), outsideBefore, "the outside folder is untouched");
      assert.deepEqual(baseEntries(), baseBefore, "nothing new beside the workspace");
      // Links in the workspace are what they were: none rewritten, none made to leave it.
      // (A DELETE may remove a link, and a PUT then make a file there: both allowed.)
      if (lstatOrNullSync(`${root}/link`)?.isSymlink) {
        assert.equal(Deno.readLinkSync(`${root}/link`), "plain.txt");
      }
      if (lstatOrNullSync(`${root}/dirlink`)?.isSymlink) {
        assert.equal(Deno.readLinkSync(`${root}/dirlink`), outside);
      }
      for (const entry of listTree(root)) {
        const arrow = entry.indexOf(" -> ");
        if (arrow === -1) continue;
        const path = entry.slice(0, arrow);
        if (path === "dirlink" || path === "abslink") continue; // the agent's own, as made
        assert.ok(!entry.slice(arrow + 4).startsWith("/"), `a link made absolute: ${entry}`);
      }
    },
    async (root, outside) => {
      await Deno.writeTextFile(`${root}/plain.txt`, "plain");
      await Deno.mkdir(`${root}/a`);
      await Deno.writeTextFile(`${root}/a/b.txt`, "b");
      await Deno.symlink("plain.txt", `${root}/link`);
      await Deno.symlink(outside, `${root}/dirlink`);
      await Deno.symlink("/etc/hostname", `${root}/abslink`);
    },
  ));
