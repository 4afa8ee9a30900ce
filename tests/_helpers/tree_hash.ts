import { createHash } from "node:crypto";

/**
 * Describes a folder's files and links as `path -> kind:mode:sha256`, skipping the given
 * top-level names (e.g. the data folder). Two trees are identical when these are equal.
 */
export async function treeHashes(
  root: string,
  skip: string[] = [".chronicle"],
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (dir: string, prefix: string) => {
    for await (const entry of Deno.readDir(dir)) {
      const path = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
      if (prefix === "" && skip.includes(entry.name)) continue;
      const full = `${dir}/${entry.name}`;
      const info = await Deno.lstat(full);
      if (info.isDirectory) await walk(full, path);
      else if (info.isSymlink) out[path] = `link:${await Deno.readLink(full)}`;
      else {
        const hash = createHash("sha256").update(await Deno.readFile(full)).digest("hex");
        out[path] = `file:${((info.mode ?? 0) & 0o777).toString(8)}:${hash}`;
      }
    }
  };
  await walk(root, "");
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
}
