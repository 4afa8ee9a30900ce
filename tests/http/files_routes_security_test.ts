/**
 * The REST file routes under attack (issue #16 items 3, 4, 10): raw request paths sent
 * over TCP as written, PUT onto links, and errors that must be 4xx without internal paths.
 */
import assert from "node:assert/strict";
import { lstatOrNullSync } from "../../lib/disk/mod.ts";
import { listTree, rawRequest, withRestServer } from "./_rest_server.ts";

Deno.test("PUT /files with dot segments in the raw path is refused with 400 and writes nothing", () =>
  withRestServer(async ({ base, root, port }) => {
    const before = listTree(base);
    const cases = [
      "/files/a/b/../../../../outside_secret",
      "/files/../../etc/passwd",
      "/files/%2e%2e/%2e%2e/etc/passwd",
      "/files/%2E%2E/x",
      "/files/a/%2e/b",
      "/files/./a",
      "/files/a//b",
      "/files/a%2F..%2F..%2Fx",
      "/files/a/..",
      "/files/..%2f..%2fetc%2fpasswd",
    ];
    for (const target of cases) {
      const response = await rawRequest(port, "PUT", target, "pwned");
      assert.equal(response.status, 400, `${target}: ${response.body}`);
      const error = JSON.parse(response.body).error;
      assert.match(error.code, /^bad_/, target);
      assert.ok(!response.body.includes(base), `${target} leaks a server path: ${response.body}`);
    }
    assert.deepEqual(listTree(base), before, "nothing written anywhere");
    for (const name of ["e_secret", "sswd", "etc", "outside_secret", "x"]) {
      assert.equal(lstatOrNullSync(`${root}/${name}`), null, name);
    }
  }));

Deno.test("GET and DELETE with dot segments in the raw path are refused with 400", () =>
  withRestServer(async ({ port }) => {
    for (const method of ["GET", "DELETE"]) {
      for (const target of ["/files/../../etc/passwd", "/files/%2e%2e/x", "/files/a/../b"]) {
        const response = await rawRequest(port, method, target);
        assert.equal(response.status, 400, `${method} ${target}: ${response.body}`);
      }
    }
  }));

Deno.test("PUT onto a symlink is refused with 409 and leaves the link as it was", () =>
  withRestServer(
    async ({ root, base, port }) => {
      for (const body of ["new content", "/etc", "../../outside"]) {
        const response = await rawRequest(port, "PUT", "/files/L2", body);
        assert.equal(response.status, 409, response.body);
        assert.equal(JSON.parse(response.body).error.code, "forbidden");
        assert.ok(!response.body.includes(base), response.body);
        assert.equal(Deno.readLinkSync(`${root}/L2`), "target.txt");
        assert.equal(Deno.readTextFileSync(`${root}/target.txt`), "target");
      }
      // Deleting the link removes the link only; a file can then be put there.
      assert.equal((await rawRequest(port, "DELETE", "/files/L2")).status, 200);
      assert.equal(Deno.readTextFileSync(`${root}/target.txt`), "target");
      const put = await rawRequest(port, "PUT", "/files/L2", "a file now");
      assert.equal(put.status, 201, put.body);
      assert.equal(JSON.parse(put.body).mode, 0o100644);
      assert.ok(Deno.lstatSync(`${root}/L2`).isFile);
    },
    async (root) => {
      await Deno.writeTextFile(`${root}/target.txt`, "target");
      await Deno.symlink("target.txt", `${root}/L2`);
    },
  ));

Deno.test("REST write errors are 4xx with a clear message and no server path", () =>
  withRestServer(
    async ({ base, outside, port }) => {
      const cases = [
        { description: "a 300-character name", target: `/files/${"n".repeat(300)}`, status: 400 },
        { description: "a name of 256 bytes", target: `/files/d/${"é".repeat(128)}`, status: 400 },
        { description: "under a linked folder", target: "/files/linked/pwned.txt", status: 409 },
        { description: "under a file", target: "/files/plain.txt/child", status: 409 },
        {
          description: "a mode that is not a file's",
          target: "/files/m.txt?mode=9999",
          status: 400,
        },
        { description: "the data folder", target: "/files/.chronicle/chronicle.db", status: 400 },
      ];
      for (const { description, target, status } of cases) {
        const response = await rawRequest(port, "PUT", target, "x");
        assert.equal(response.status, status, `${description}: ${response.body}`);
        const error = JSON.parse(response.body).error;
        assert.ok(error.message.length > 0, description);
        assert.ok(!response.body.includes(base), `${description} leaks: ${response.body}`);
        assert.ok(!response.body.includes(".chronicle/cas"), `${description}: ${response.body}`);
      }
      assert.deepEqual([...Deno.readDirSync(outside)].map((e) => e.name), ["secret.txt"]);
    },
    async (root, outside) => {
      await Deno.symlink(outside, `${root}/linked`);
      await Deno.writeTextFile(`${root}/plain.txt`, "plain");
    },
  ));
