/**
 * Which folders a batch of changes flushes its file systems through (see
 * `ChangeWriter`'s flush of a batch): one folder per device. A pure decision, given how to
 * look at a folder.
 *
 * @module
 */

/**
 * One folder of each file system these folders are on, to flush that file system
 * through. A folder whose device the batch's own checks found already is not looked at
 * again, but for the one of each device that is returned: it must still be there (it may
 * have been removed since; then the next one of that device is looked at). A folder
 * whose device is not known is looked at.
 *
 * @param folders Absolute folders, in the batch's order.
 * @param known The device of each folder, where the batch's checks found it.
 * @param look The device of a folder now, `null` when it is gone.
 * @returns One folder per device, in the order found.
 * @example
 * ```ts
 * const looks: string[] = [];
 * const targets = fileSystemsToFlush(["/w/a", "/w/b", "/w/m"], [1, 1, undefined], (f) => {
 *   looks.push(f);
 *   return f === "/w/m" ? 2 : 1;
 * });
 * // targets: ["/w/m", "/w/a"]; looks: ["/w/m", "/w/a"]
 * ```
 */
export function fileSystemsToFlush(
  folders: readonly string[],
  known: readonly (number | undefined)[],
  look: (folder: string) => number | null,
): string[] {
  const byDevice = new Map<number, string>();
  const lookAt = (folder: string): number | null => {
    const device = look(folder);
    if (device !== null && !byDevice.has(device)) byDevice.set(device, folder);
    return device;
  };
  const candidates = new Map<number, string[]>();
  for (const [at, folder] of folders.entries()) {
    const device = known[at];
    if (device === undefined) lookAt(folder);
    else if (candidates.has(device)) candidates.get(device)!.push(folder);
    else candidates.set(device, [folder]);
  }
  for (const [device, list] of candidates) {
    for (const folder of list) {
      if (byDevice.has(device) || lookAt(folder) === device) break;
    }
  }
  return [...byDevice.values()];
}
