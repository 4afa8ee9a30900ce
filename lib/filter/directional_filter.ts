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

  readonly #options: DirectionalFilterOptions;

  private constructor(
    local: PathFilter,
    toReplica: PathFilter,
    toMaster: PathFilter,
    options: DirectionalFilterOptions,
  ) {
    this.local = local;
    this.toReplica = toReplica;
    this.toMaster = toMaster;
    this.#options = options;
  }

  /** Builds the three filters from defaults, shared patterns and per-direction patterns. */
  static create(options: DirectionalFilterOptions = {}): DirectionalFilter {
    const lists = patternLists(options);
    return new DirectionalFilter(
      new PathFilter(lists.local),
      new PathFilter(lists.toReplica),
      new PathFilter(lists.toMaster),
      options,
    );
  }

  /**
   * Replaces the shared patterns (`--ignore` and `.chronicleignore`), keeping the
   * defaults, the data folder and the per-direction ones; every holder of the three
   * filters sees the change at once.
   *
   * @param patterns The shared patterns now.
   */
  setPatterns(patterns: string[]): void {
    const lists = patternLists({ ...this.#options, patterns });
    this.local.replace(lists.local);
    this.toReplica.replace(lists.toReplica);
    this.toMaster.replace(lists.toMaster);
  }
}

function patternLists(options: DirectionalFilterOptions) {
  const base = [...DEFAULT_PATTERNS, ...(options.patterns ?? [])];
  if (options.dataDir) base.push(`/${options.dataDir}/`);
  return {
    local: base,
    toReplica: [...base, ...(options.toReplica ?? [])],
    toMaster: [...base, ...(options.toMaster ?? [])],
  };
}
