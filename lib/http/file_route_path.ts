/** A `/files/…` request split into the file and the operation on it. */
export type FileRoute =
  | { op: "content"; path: string }
  | { op: "history"; path: string }
  | { op: "diff"; path: string }
  | { op: "at"; path: string; iteration: number };

/**
 * Splits the raw (still percent-encoded) part of a URL after `/files/`. A trailing
 * `/history`, `/diff` or `/at/{n}` is always the operation; a file whose own name ends that way
 * is reached with its slashes sent as `%2F` (README, REST API). Pure.
 *
 * @throws {TypeError} For malformed percent-encoding or a bad iteration number.
 */
export function parseFileRoute(rawTail: string): FileRoute {
  const at = /^(.*)\/at\/([^/]+)$/.exec(rawTail);
  if (at) {
    const iteration = Number(at[2]);
    if (!/^[1-9][0-9]{0,15}$/.test(at[2]!) || !Number.isSafeInteger(iteration)) {
      throw new TypeError(`Invalid iteration "${decode(at[2]!)}": expected a positive integer`);
    }
    return { op: "at", path: decode(at[1]!), iteration };
  }
  if (rawTail.endsWith("/history")) {
    return { op: "history", path: decode(rawTail.slice(0, -"/history".length)) };
  }
  if (rawTail.endsWith("/diff")) {
    return { op: "diff", path: decode(rawTail.slice(0, -"/diff".length)) };
  }
  return { op: "content", path: decode(rawTail) };
}

function decode(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new TypeError(`Invalid percent-encoding in "${raw}"`);
  }
}
