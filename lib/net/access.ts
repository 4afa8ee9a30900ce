import { timingSafeEqual } from "node:crypto";

/** What a listener knows of a request before serving or upgrading it. */
export interface RequestHead {
  /** `GET`, `PUT`, … */
  method: string;
  /** The path and query as sent, e.g. `/files/a.txt?x=1`. */
  target: string;
  /** Header lookup, case-insensitive; `undefined` when absent. */
  header(name: string): string | undefined;
}

/** A refused request: the HTTP status and a message saying what to do. */
export interface Refusal {
  /** 401, 403, 503, … */
  status: number;
  /** Machine-readable code, e.g. `unauthorized`. */
  code: string;
  /** One sentence for a person. */
  message: string;
}

/** Decides whether a listener serves a request: `null` to serve it, or why not. */
export type AccessCheck = (request: RequestHead) => Refusal | null;

/** Options for {@linkcode accessPolicy}. */
export interface AccessPolicyOptions {
  /** The bearer token, if one is configured. @default {undefined} */
  token?: string | undefined;
  /**
   * Whether every request needs the token (a non-loopback REST listener, a WebSocket
   * listener with a token). When false, only what `tokenFor` names needs it.
   * @default {false}
   */
  tokenForAll?: boolean;
  /** Requests that never need the token (liveness probes). @default {() => false} */
  open?: (request: RequestHead) => boolean;
  /**
   * Whether the listener is on a loopback address: then a request whose `Host` is not a
   * loopback name of it is refused (a web page's DNS rebinding). @default {false}
   */
  loopback?: boolean;
  /** Whether `?token=` in the query counts as the token (WebSocket clients). @default {false} */
  tokenInQuery?: boolean;
}

/**
 * The access rule of a listener, built by the daemon from its configuration and given to
 * each transport: a loopback listener refuses foreign `Host` headers (403), and a request
 * that needs the token and lacks it, or carries a wrong one, is refused (401).
 *
 * @param options See {@linkcode AccessPolicyOptions}.
 * @returns The check to run on each request head.
 *
 * @example A loopback REST listener
 * ```ts
 * import { strictEqual } from "node:assert/strict";
 * import { accessPolicy } from "./mod.ts";
 * const check = accessPolicy({ loopback: true });
 * const head = (host: string) => ({ method: "GET", target: "/files", header: (n: string) => n === "host" ? host : undefined });
 * strictEqual(check(head("127.0.0.1:3000")), null);
 * strictEqual(check(head("evil.example:3000"))?.status, 403);
 * ```
 */
export function accessPolicy(options: AccessPolicyOptions): AccessCheck {
  return (request) => {
    if (options.loopback && !isLoopbackHostHeader(request.header("host"))) {
      return {
        status: 403,
        code: "forbidden_host",
        message: `Host "${
          request.header("host") ?? ""
        }" is not a loopback name of this listener; use localhost or 127.0.0.1`,
      };
    }
    if (!options.tokenForAll || options.open?.(request)) return null;
    return tokenProblem(request, options.token, options.tokenInQuery ?? false);
  };
}

/**
 * Why a request's bearer token does not match `token`, or `null` when it does.
 *
 * @param request The request head.
 * @param token The configured token; `undefined` refuses every request.
 * @param inQuery Whether `?token=` may carry it.
 * @returns The refusal (401), or `null`.
 */
export function tokenProblem(
  request: RequestHead,
  token: string | undefined,
  inQuery: boolean,
): Refusal | null {
  if (token === undefined || token === "") {
    return {
      status: 401,
      code: "unauthorized",
      message: "This listener needs a token: start Chronicle with --token",
    };
  }
  const header = request.header("authorization") ?? "";
  let given = /^Bearer\s+(.+)$/i.exec(header)?.[1]?.trim();
  if (given === undefined && inQuery) {
    given = new URL(request.target, "http://x").searchParams.get("token") ?? undefined;
  }
  if (given === undefined) {
    return { status: 401, code: "unauthorized", message: "Missing bearer token" };
  }
  if (!sameSecret(given, token)) {
    return { status: 401, code: "unauthorized", message: "Wrong bearer token" };
  }
  return null;
}

/**
 * Whether a `Host` header names this machine's loopback: `localhost` (and
 * `*.localhost`), `127.0.0.0/8` or `[::1]`, with any port. A missing header is refused:
 * every HTTP/1.1 client sends one.
 *
 * @param host The `Host` header.
 * @returns True for a loopback name.
 */
export function isLoopbackHostHeader(host: string | undefined): boolean {
  if (host === undefined) return false;
  const value = host.trim().toLowerCase();
  const match = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(value);
  if (!match) return false;
  const name = match[1]!.replace(/\.$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  if (name === "[::1]" || name === "[0:0:0:0:0:0:0:1]") return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

/**
 * Compares secrets in constant time.
 *
 * @param given What the client sent.
 * @param expected The configured secret.
 * @returns Whether they are equal.
 */
export function sameSecret(given: string, expected: string): boolean {
  const a = new TextEncoder().encode(given);
  const b = new TextEncoder().encode(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
