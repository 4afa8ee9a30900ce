/**
 * Whether a request's `Host` header names this loopback listener: `127.0.0.1`,
 * `localhost` or `[::1]` with the listener's port. Anything else is a page on another
 * origin reaching the listener through DNS rebinding, and is refused. Pure.
 *
 * @param host The `Host` header (`null` when absent).
 * @param port The listener's port.
 * @returns Whether to serve the request.
 * @example
 * ```ts
 * import { loopbackHostAllowed } from "./host_check.ts";
 * if (!loopbackHostAllowed("127.0.0.1:8080", 8080)) throw new Error("refused");
 * if (loopbackHostAllowed("evil.example:8080", 8080)) throw new Error("allowed");
 * ```
 */
export function loopbackHostAllowed(host: string | null, port: number): boolean {
  if (host === null) return false;
  const names = ["127.0.0.1", "localhost", "[::1]"];
  return names.some((name) => host.toLowerCase() === `${name}:${port}`);
}
