import { PathFilter } from "./path_filter.ts";

/** Options for {@linkcode DirectionalFilter.create}. */
export interface DirectionalFilterOptions {
  /** Patterns for both directions (`--ignore`, `.chronicleignore`). @default {[]} */
  patterns?: string[];
  /** Extra patterns for master → replica only. @default {[]} */
  toReplica?: string[];
  /** Extra patterns for replica → master only. @default {[]} */
  toMaster?: string[];
  /** Chronicle's data folder relative to the workspace, when it lies inside it. */
  dataDir?: string | undefined;
}

/**
 * Patterns every workspace excludes: git's own folder, and the temp files of Chronicle's
 * atomic writes (a crash can leave one behind). The data folder is added per workspace.
 */
const DEFAULT_PATTERNS: readonly string[] = [
  ".git/",
  "*.chronicle-tmp",
  ".chronicle-link-*", // symlink temp names of older versions
];

/**
 * What travels in each direction of replication, and what the
 * capture records: the `local` filter is what both directions share.
 */
export class DirectionalFilter {
  /** Excluded from recording and from both directions. */
  readonly local: PathFilter;
  /** Excluded from master → replica notifications. */
  readonly toReplica: PathFilter;
  /** Excluded from replica → master write-backs. */
  readonly toMaster: PathFilter;

  private constructor(local: PathFilter, toReplica: PathFilter, toMaster: PathFilter) {
    this.local = local;
    this.toReplica = toReplica;
    this.toMaster = toMaster;
  }

  /** Builds the three filters from defaults, shared patterns and per-direction patterns. */
  static create(options: DirectionalFilterOptions = {}): DirectionalFilter {
    const base = [...DEFAULT_PATTERNS, ...(options.patterns ?? [])];
    if (options.dataDir) base.push(`/${options.dataDir}/`);
    return new DirectionalFilter(
      new PathFilter(base),
      new PathFilter([...base, ...(options.toReplica ?? [])]),
      new PathFilter([...base, ...(options.toMaster ?? [])]),
    );
  }
}
