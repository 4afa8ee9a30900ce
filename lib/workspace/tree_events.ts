/**
 * What the tree watcher makes of the OS's events, and how long it waits before making a
 * failed watch again: its pure decisions (see `TreeWatcher`).
 *
 * @module
 */

/** One change the OS reported, with absolute paths. */
export type TreeEvent = Deno.FsEvent;

/**
 * What the watcher does with one event: `rescan` when events were lost (a `rescan` flag,
 * or an event of no known kind: the kernel's queue overflowed, or Deno's own, which holds
 * few events and drops the rest while the event loop is busy, as many files change during
 * a long synchronous step), `closed` when a writer closed a file with capture on close (its
 * write is complete), `changed` otherwise.
 */
export type TreeEventAction = "rescan" | "closed" | "changed";

/**
 * Decides what the watcher does with one event (see {@linkcode TreeEventAction}). Pure.
 *
 * @param event The event's kind and flag.
 * @param captureOnClose Whether a closed file is recorded without waiting for quiet.
 * @returns The action.
 * @example
 * ```ts
 * treeEventAction({ kind: "other", flag: "rescan" }, true); // "rescan"
 * ```
 */
export function treeEventAction(
  event: Pick<Deno.FsEvent, "kind" | "flag">,
  captureOnClose: boolean,
): TreeEventAction {
  if (event.flag === "rescan" || event.kind === "other") return "rescan";
  // Reads report nothing; "access" is a writer closing the file.
  return event.kind === "access" && captureOnClose ? "closed" : "changed";
}

/**
 * Whether an event the root's watch reports is only about what lies inside top-level
 * folders, which their own recursive watches report too: Deno hands every event to each
 * watch whose path is a prefix of the event's, the root's non-recursive one included, so
 * without this each change in a folder would be handled twice. Pure.
 *
 * @param root Absolute workspace root.
 * @param paths The event's absolute paths (none for a report of lost events).
 * @returns `true` when every path lies inside a top-level folder of `root`.
 * @example
 * ```ts
 * onlyInsideTopFolders("/ws", ["/ws/src/a.ts"]); // true: the watch of src/ reports it
 * onlyInsideTopFolders("/ws", ["/ws/src"]); // false: the root's own entry
 * ```
 */
export function onlyInsideTopFolders(root: string, paths: readonly string[]): boolean {
  const prefix = `${root}/`;
  return paths.length > 0 &&
    paths.every((path) => path.startsWith(prefix) && path.indexOf("/", prefix.length) !== -1);
}

/**
 * How long a watch that ended with an error waits before it is made again, given its
 * failures in a row: 100 ms, doubling, at most 30 s. Pure.
 *
 * @param failures Failures in a row, from 1.
 * @returns The delay, ms.
 * @example
 * ```ts
 * retryDelayMs(1); // 100
 * retryDelayMs(20); // 30000
 * ```
 */
export function retryDelayMs(failures: number): number {
  return Math.min(100 * 2 ** Math.max(0, failures - 1), 30_000);
}
