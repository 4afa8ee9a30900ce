/** A listening address split into its parts. */
export interface HostPort {
  /** Host name or IP address; an IPv6 address without brackets. */
  hostname: string;
  /** Port, 0 to 65535 (0 lets the system pick). */
  port: number;
}

/**
 * Splits and checks a `HOST:PORT` address such as `0.0.0.0:3002`, `localhost:8080` or
 * `[::1]:3002`.
 *
 * @param value The address as written.
 * @returns The hostname and port.
 * @throws {TypeError} When the host is missing or malformed or the port is not 0 to 65535.
 *
 * @example Splitting an address
 * ```ts
 * import { deepStrictEqual as assertEquals } from "node:assert/strict";
 * import { parseHostPort } from "./host_port.ts";
 * assertEquals(parseHostPort("[::1]:3002"), { hostname: "::1", port: 3002 });
 * ```
 */
export function parseHostPort(value: string): HostPort {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9._-]+)):(\d{1,5})$/.exec(value);
  if (!match) {
    throw new TypeError(`Expected HOST:PORT such as "127.0.0.1:3002", got "${value}"`);
  }
  const hostname = match[1] ?? match[2]!;
  const port = Number(match[3]);
  if (port > 65535) throw new TypeError(`Port ${port} in "${value}" is above 65535`);
  if (match[1] !== undefined && !match[1].includes(":")) {
    throw new TypeError(`Brackets in "${value}" are for IPv6 addresses only`);
  }
  return { hostname, port };
}

/**
 * Tells whether a listener on this host is reachable only from this machine.
 *
 * @param hostname A hostname as returned by {@linkcode parseHostPort}.
 * @returns True for `localhost`, `127.0.0.0/8` and `::1`.
 */
export function isLoopback(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === "localhost" || host === "::1" || host === "0:0:0:0:0:0:0:1") return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}
