/**
 * Gitignore-style path filters: one set of patterns ({@linkcode PathFilter}) and the
 * per-direction filters replication uses ({@linkcode DirectionalFilter}). Pure.
 *
 * @module
 */
export { compilePattern, type FastMatcher } from "./compile_pattern.ts";
export { PathFilter } from "./path_filter.ts";
export { DirectionalFilter, type DirectionalFilterOptions } from "./directional_filter.ts";
