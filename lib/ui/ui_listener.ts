import { type HttpListener, type ListenerLimit, sameSecret, serveHttp } from "../net/mod.ts";
import { log } from "../log/mod.ts";
import { loopbackHostAllowed } from "./host_check.ts";
import { isUiAsset, UI_HEADERS } from "./static_routes.ts";

/** Where a started UI listener answers. */
export interface UiListenerInfo {
  /** The page's address, the token in its fragment. */
  url: string;
  /** The listener's port on 127.0.0.1. */
  port: number;
}

/** A loopback listener for the UI, started on demand by `chronicle ui`. */
export interface UiListener {
  /** Opens the listener (once; later calls return the same one). */
  open(): Promise<UiListenerInfo>;
  /** Closes it, if open. */
  close(): Promise<void>;
}

/**
 * A loopback listener on 127.0.0.1 with a port of its own and a token made when it opens
 * (never stored, printed once by `chronicle ui`). Every request must name the listener in
 * `Host` (DNS rebinding), and everything but the page's static assets needs the token as
 * a bearer header, reads included: the UI reads with it too, and a cookie is never used,
 * so another site cannot act for the user.
 *
 * @param handler The REST application (the one `--http` serves, its writes checked against `token`).
 * @returns The listener, not yet open.
 */
export function uiListener(
  handler: (token: string) => (request: Request) => Response | Promise<Response>,
  options: UiListenerOptions,
): UiListener {
  let opening: Promise<{ server: HttpListener; info: UiListenerInfo }> | undefined;
  const start = async () => {
    const token = randomToken();
    const inner = handler(token);
    let port = 0;
    // A listener like every other: its connections count against the process's limits.
    const server = await serveHttp({
      address: { hostname: "127.0.0.1", port: 0 },
      fetch: (request) => guard(request, port, token) ?? inner(request),
      limit: options.limit,
      ...(options.handshakeTimeoutMs ? { handshakeTimeoutMs: options.handshakeTimeoutMs } : {}),
      ...(options.idleTimeoutMs ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
    });
    port = server.port!;
    log("info", "UI listening", { address: `127.0.0.1:${port}` });
    return { server, info: { port, url: `http://127.0.0.1:${port}/ui/#token=${token}` } };
  };
  return {
    async open() {
      opening ??= start().catch((error) => {
        opening = undefined;
        throw error;
      });
      return (await opening).info;
    },
    async close() {
      const open = opening;
      opening = undefined;
      if (open) await (await open.catch(() => null))?.server.close();
    },
  };
}

/** Options for {@linkcode uiListener}. */
export interface UiListenerOptions {
  /** Its share of the process's connections. */
  limit: ListenerLimit;
  /** Milliseconds a new connection has to send a request head. @default {10000} */
  handshakeTimeoutMs?: number;
  /** Milliseconds an idle connection is kept. @default {60000} */
  idleTimeoutMs?: number;
}

/**
 * The UI listener's checks before routing: the `Host` header, then the token for every
 * request but the static assets. Pure.
 *
 * @param request The request.
 * @param port The listener's port.
 * @param token The listener's token.
 * @returns A refusal, or `undefined` to serve the request.
 */
export function guard(request: Request, port: number, token: string): Response | undefined {
  if (!loopbackHostAllowed(request.headers.get("host"), port)) {
    return refuse(
      421,
      "bad_host",
      `This listener answers only to 127.0.0.1:${port} or localhost:${port}`,
    );
  }
  const path = new URL(request.url).pathname;
  if (request.method === "GET" && isUiAsset(path)) return undefined;
  const header = request.headers.get("authorization") ?? "";
  const given = header.startsWith("Bearer ") ? header.slice("Bearer ".length) : "";
  if (!sameSecret(given, token)) {
    return refuse(
      401,
      "unauthorized",
      given === "" ? "Missing bearer token" : "Wrong bearer token",
    );
  }
  return undefined;
}

function refuse(status: number, code: string, message: string): Response {
  return Response.json({ error: { code, message } }, { status, headers: UI_HEADERS });
}

function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}
