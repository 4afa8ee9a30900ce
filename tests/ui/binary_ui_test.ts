/**
 * The UI from the agent binary: `bin/agent.ts` run with exactly the permissions
 * `deno task compile:agent` grants serves the page, its script and style (built into the
 * program, no file read at run time) under `--http`, and `chronicle-agent ui` opens the
 * loopback listener whose token reads the timeline and which refuses a foreign `Host`.
 */
import { assert, assertEquals } from "../_helpers/assert.ts";
import { controlJson } from "../_helpers/control_socket.ts";
import { freePort } from "../_helpers/processes.ts";
import { put, withTempDir } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { binaryCommand, runBinary, Running } from "../deploy/_deploy.ts";
import { UI_ASSETS } from "../../lib/ui/assets/bundle.ts";
import { CONTENT_SECURITY_POLICY } from "../../lib/ui/mod.ts";

Deno.test("the agent binary serves the UI's assets under --http and opens chronicle ui's listener", async () => {
  await withTempDir(async (root) => {
    const ws = `${root}/ws`;
    await put(ws, "hello.txt", "hello\n");
    const port = freePort();
    const agent = new Running(
      binaryCommand("agent", [ws, "--http", `127.0.0.1:${port}`], { CHRONICLE_TOKEN: "t0k3n" }),
    );
    try {
      await waitFor("the agent to be ready", async () => {
        const ready = await controlJson(`${ws}/.chronicle`, "/ready").catch(() => undefined);
        return ready?.status === 200;
      });
      for (const [name, body] of Object.entries(UI_ASSETS)) {
        const path = name === "index.html" ? "/ui/" : `/ui/${name}`;
        const response = await fetch(`http://127.0.0.1:${port}${path}`);
        assertEquals(response.status, 200, path);
        assertEquals(response.headers.get("content-security-policy"), CONTENT_SECURITY_POLICY);
        assertEquals(await response.text(), body, `${path} is the built-in asset`);
      }
      const ui = await runBinary("agent", ["ui", "-C", ws, "--json"]);
      assertEquals(ui.code, 0, ui.stderr);
      const { url } = JSON.parse(ui.stdout) as { url: string };
      const address = new URL(url);
      const token = address.hash.replace("#token=", "");
      // DNS rebinding: a page under another name that resolves to 127.0.0.1 is refused,
      // its static assets included.
      assertEquals(
        await rawStatus(Number(address.port), `evil.example:${address.port}`),
        421,
        "a foreign Host is refused",
      );
      assertEquals(await rawStatus(Number(address.port), `localhost:${address.port}`), 200);
      const refused = await fetch(new URL("api/timeline", address));
      assertEquals(refused.status, 401, "reads need the token on this listener");
      await refused.body?.cancel();
      const timeline = await fetch(new URL("api/timeline", address), {
        headers: { authorization: `Bearer ${token}` },
      });
      assertEquals(timeline.status, 200);
      const page = await timeline.json() as { items: { path: string }[] };
      assert(page.items.some((item) => item.path === "hello.txt"), JSON.stringify(page));
    } finally {
      assertEquals(await agent.stop(), 0, agent.stderr);
    }
  });
});

/** The status of `GET /ui/` sent by hand (fetch sets `Host` itself) with this `Host`. */
async function rawStatus(port: number, host: string): Promise<number> {
  const connection = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await connection.write(
      new TextEncoder().encode(`GET /ui/ HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`),
    );
    const buffer = new Uint8Array(64);
    let text = "";
    while (!text.includes("\r\n")) {
      const read = await connection.read(buffer);
      if (read === null) break;
      text += new TextDecoder().decode(buffer.subarray(0, read));
    }
    return Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
  } finally {
    connection.close();
  }
}
