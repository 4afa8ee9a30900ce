/**
 * A set of normalized workspace paths that tells, without scanning its members, whether a
 * path is in it, inside one of its members, or holds one of them. Pure.
 */
export class PathSet {
  readonly #members = new Set<string>();
  /** Every proper ancestor folder of every member. */
  readonly #ancestors = new Set<string>();

  /** The members, in the order they were added. */
  get paths(): string[] {
    return [...this.#members];
  }

  /** How many paths are in the set. */
  get size(): number {
    return this.#members.size;
  }

  /** Adds `path`. */
  add(path: string): void {
    if (this.#members.has(path)) return;
    this.#members.add(path);
    for (let slash = path.lastIndexOf("/"); slash > 0; slash = path.lastIndexOf("/", slash - 1)) {
      const ancestor = path.slice(0, slash);
      if (this.#ancestors.has(ancestor)) break; // its own ancestors are already there
      this.#ancestors.add(ancestor);
    }
  }

  /** Whether `path` is a member or inside one (`""`, the root, holds every path). */
  covers(path: string): boolean {
    if (this.#members.has("") || this.#members.has(path)) return true;
    for (let slash = path.lastIndexOf("/"); slash > 0; slash = path.lastIndexOf("/", slash - 1)) {
      if (this.#members.has(path.slice(0, slash))) return true;
    }
    return false;
  }

  /**
   * Whether `path` shares anything with a member: it is one, is inside one, or holds one.
   * Changes to unrelated paths can be made in any order, or at once.
   */
  overlaps(path: string): boolean {
    if (path === "") return this.#members.size > 0;
    return this.covers(path) || this.#ancestors.has(path);
  }
}
