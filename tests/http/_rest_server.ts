/**
 * A real REST server for security tests: a workspace in `base/ws` (so `base` holds what
 * lies "outside" it), served by `Deno.serve` on loopback port 0, and raw HTTP/1.1
 * requests written byte for byte over TCP, with no client normalizing the path.
 *
 * @module
 */
import { createApp, filesRoutes } from "../../lib/http/mod.ts";
import { Workspace } from "../../lib/workspace/mod.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

/** The token writes carry. */
export const TOKEN = "test-token";

/** A running server over a workspace. */
export interface RestFixture {
  /** Holds `ws/` and `outside/`. */
  base: string;
  /** The workspace root. */
  root: string;
  /** A folder outside the workspace, with `secret.txt` in it. */
  outside: string;
  workspace: Workspace;
  port: number;
}

/** Runs `fn` with a server; everything is stopped and removed after. */
export function withRestServer(
  fn: (fixture: RestFixture) => Promise<void>,
  prepare: (root: string, outside: string) => Promise<void> = () => Promise.resolve(),
): Promise<void> {
  return withTempDir(async (base) => {
    const root = `${base}/ws`;
    const outside = `${base}/outside`;
    await Deno.mkdir(root);
    await Deno.mkdir(outside);
    await Deno.writeTextFile(`${outside}/secret.txt`, "outside");
    await prepare(root, outside);
    const workspace = await Workspace.open({ root });
    await workspace.scan();
    const app = createApp({ token: TOKEN, trustedCaller: false, routes: [filesRoutes(workspace)] });
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      app.fetch,
    );
    try {
      await fn({ base, root, outside, workspace, port: server.addr.port });
    } finally {
      await server.shutdown();
      await workspace.close();
    }
  });
}

/** A raw HTTP answer. */
export interface RawResponse {
  status: number;
  body: string;
}

/**
 * Sends `method target` exactly as given (the request line is not parsed or normalized
 * by any client) with an optional body, and reads the whole answer.
 */
export async function rawRequest(
  port: number,
  method: string,
  target: string,
  body: Uint8Array | string = "",
): Promise<RawResponse> {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  const head = `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
    `Authorization: Bearer ${TOKEN}\r\nContent-Length: ${bytes.length}\r\n` +
    `Connection: close\r\n\r\n`;
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const request = new Uint8Array([...new TextEncoder().encode(head), ...bytes]);
    for (let at = 0; at < request.length;) at += await conn.write(request.subarray(at));
    const chunks: Uint8Array[] = [];
    const buffer = new Uint8Array(64 * 1024);
    for (let n = await conn.read(buffer); n !== null; n = await conn.read(buffer)) {
      chunks.push(buffer.slice(0, n));
    }
    return parseResponse(new TextDecoder().decode(concat(chunks)));
  } finally {
    try {
      conn.close();
    } catch { /* closed by the server */ }
  }
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

function parseResponse(text: string): RawResponse {
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? "0");
  const split = text.indexOf("\r\n\r\n");
  const head = split === -1 ? text : text.slice(0, split);
  let body = split === -1 ? "" : text.slice(split + 4);
  if (/^transfer-encoding:\s*chunked/im.test(head)) body = unchunk(body);
  return { status, body };
}

function unchunk(body: string): string {
  let out = "";
  let at = 0;
  while (at < body.length) {
    const eol = body.indexOf("\r\n", at);
    const size = parseInt(body.slice(at, eol), 16);
    if (!size) break;
    out += body.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
  return out;
}

/** Every file and link under `dir` (relative paths, links as `path -> target`), sorted. */
export function listTree(dir: string, prefix = ""): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const path = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isSymlink) out.push(`${path} -> ${Deno.readLinkSync(`${dir}/${entry.name}`)}`);
    else if (entry.isDirectory) out.push(`${path}/`, ...listTree(`${dir}/${entry.name}`, path));
    else {
      const info = Deno.statSync(`${dir}/${entry.name}`);
      out.push(`${path} ${info.size} ${(info.mode ?? 0).toString(8)}`);
    }
  }
  return out.sort();
}
