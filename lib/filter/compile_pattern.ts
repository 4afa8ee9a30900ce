/**
 * A gitignore pattern reduced to a cheap test, when its meaning allows. Every fast kind
 * keeps gitignore semantics: a pattern without a slash matches a path segment at any
 * depth, and a matched folder excludes everything beneath it.
 */
export type FastMatcher =
  | { kind: "segment"; name: string; dirOnly: boolean } // `name`, `name/`
  | { kind: "suffix"; suffix: string; dirOnly: boolean } // `*.ext`
  | { kind: "contains"; text: string; dirOnly: boolean } // `*text*`
  | { kind: "start"; start: string; dirOnly: boolean } // `name*`
  | { kind: "prefix"; prefix: string; dirOnly: boolean } // `/dir`, `dir/sub`, `/dir/`
  | { kind: "contents"; prefix: string }; // `dir/**`: everything beneath, not the folder itself

const GLOB = /[*?[\]\\!]/;

/**
 * Classifies one pattern line. Returns `undefined` for a pattern only the full gitignore
 * matcher can decide (negations, globs inside names, `**` in the middle, escapes), and
 * `null` for a blank line or a comment.
 *
 * @example Classifying
 * ```ts
 * import { compilePattern } from "./compile_pattern.ts";
 * compilePattern("*.pyc"); // { kind: "suffix", suffix: ".pyc", dirOnly: false }
 * ```
 */
export function compilePattern(line: string): FastMatcher | null | undefined {
  const trimmed = line.replace(/(?<!\\)\s+$/, "");
  if (trimmed === "" || trimmed.startsWith("#")) return null;
  if (trimmed.startsWith("!")) return undefined;
  const dirOnly = trimmed.endsWith("/");
  let body = dirOnly ? trimmed.slice(0, -1) : trimmed;
  if (body.endsWith("/**")) {
    const inside = anchoredPrefix(body.slice(0, -3), false);
    return inside && { kind: "contents", prefix: inside.prefix };
  }
  const anchored = body.includes("/");
  if (anchored) {
    body = body.startsWith("/") ? body.slice(1) : body;
    return anchoredPrefix(body, dirOnly);
  }
  if (!GLOB.test(body)) return { kind: "segment", name: body, dirOnly };
  const inner = body.slice(1);
  if (body.startsWith("*") && !GLOB.test(inner)) return { kind: "suffix", suffix: inner, dirOnly };
  const head = body.slice(0, -1);
  if (body.endsWith("*") && !GLOB.test(head)) return { kind: "start", start: head, dirOnly };
  const middle = body.slice(1, -1);
  if (body.length > 2 && body.startsWith("*") && body.endsWith("*") && !GLOB.test(middle)) {
    return { kind: "contains", text: middle, dirOnly };
  }
  return undefined;
}

function anchoredPrefix(
  body: string,
  dirOnly: boolean,
): { kind: "prefix"; prefix: string; dirOnly: boolean } | undefined {
  const prefix = body.startsWith("/") ? body.slice(1) : body;
  if (prefix === "" || GLOB.test(prefix) || prefix.split("/").some((s) => s === "" || s === "..")) {
    return undefined;
  }
  return { kind: "prefix", prefix, dirOnly };
}

/**
 * Whether a fast matcher excludes `path` (normalized, relative). `isDir` says whether
 * `path` itself is a folder. `segments`, `path` split at `/`, lets a caller trying many
 * matchers on one path split it once.
 */
export function fastMatches(
  matcher: FastMatcher,
  path: string,
  isDir: boolean,
  segments?: readonly string[],
): boolean {
  if (matcher.kind === "contents") return path.startsWith(matcher.prefix + "/");
  if (matcher.kind === "prefix") {
    if (path.startsWith(matcher.prefix + "/")) return true;
    return path === matcher.prefix && (!matcher.dirOnly || isDir);
  }
  const parts = segments ?? path.split("/");
  const last = parts.length - 1;
  for (let index = 0; index <= last; index++) {
    // A dir-only pattern matches the final segment only when the path is a folder.
    if (matcher.dirOnly && index === last && !isDir) break;
    if (segmentMatches(matcher, parts[index]!)) return true;
  }
  return false;
}

function segmentMatches(matcher: FastMatcher, segment: string): boolean {
  switch (matcher.kind) {
    case "segment":
      return segment === matcher.name;
    case "suffix":
      return segment.endsWith(matcher.suffix);
    case "contains":
      return segment.includes(matcher.text);
    case "start":
      return segment.startsWith(matcher.start);
    case "prefix":
    case "contents":
      return false;
  }
}
