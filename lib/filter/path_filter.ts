import ignore, { type Ignore } from "ignore";
import { compilePattern, type FastMatcher, fastMatches } from "./compile_pattern.ts";

/**
 * A set of gitignore-style patterns. Simple patterns (exact names, `*.ext`, `name*`,
 * `*text*`, folder prefixes) are answered by fast string tests; the rest by a full gitignore
 * matcher (`npm:ignore`), built lazily on first use. With any negation (`!pattern`),
 * order matters, so the full matcher decides everything.
 */
export class PathFilter {
  #patterns: readonly string[];
  #compiled: { fast: FastMatcher[]; full: Ignore | undefined } | undefined;

  /**
   * Compiles gitignore-style patterns lazily, on the first match.
   *
   * @param patterns Gitignore lines; blanks and `#` comments are skipped.
   */
  constructor(patterns: Iterable<string> = []) {
    this.#patterns = [...patterns];
  }

  /**
   * Replaces the patterns: every holder of this filter sees the new ones at once (a
   * `.chronicleignore` edited while Chronicle runs).
   *
   * @param patterns Gitignore lines; blanks and `#` comments are skipped.
   */
  replace(patterns: Iterable<string>): void {
    this.#patterns = [...patterns];
    this.#compiled = undefined;
  }

  /**
   * Whether `path` is excluded.
   *
   * @param path A normalized workspace-relative path.
   * @param isDir Whether `path` names a folder (dir-only patterns such as `build/`).
   */
  ignores(path: string, isDir = false): boolean {
    if (path === "") return false;
    const { fast, full } = this.#compile();
    // Split once for all the matchers, not once each: every path a sync writes is tried.
    let segments: string[] | undefined;
    for (const matcher of fast) {
      if (matcher.kind !== "contents" && matcher.kind !== "prefix") segments ??= path.split("/");
      if (fastMatches(matcher, path, isDir, segments)) return true;
    }
    return full ? full.ignores(isDir ? path + "/" : path) : false;
  }

  #compile(): { fast: FastMatcher[]; full: Ignore | undefined } {
    if (this.#compiled) return this.#compiled;
    const fast: FastMatcher[] = [];
    const rest: string[] = [];
    const ordered = this.#patterns.some((line) => line.trimStart().startsWith("!"));
    for (const line of this.#patterns) {
      const matcher = ordered ? undefined : compilePattern(line);
      if (matcher === null) continue;
      if (matcher) fast.push(matcher);
      else rest.push(line);
    }
    // Case-sensitive, as git is on Linux and as the fast tests are.
    const full = rest.length > 0
      ? ignore({ allowRelativePaths: true, ignorecase: false }).add(rest)
      : undefined;
    this.#compiled = { fast, full };
    return this.#compiled;
  }
}
