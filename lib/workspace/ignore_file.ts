/** The ignore file whose change makes the workspace read its patterns again. */
export const IGNORE_FILE = ".chronicleignore";

/**
 * The lines of the workspace's {@linkcode IGNORE_FILE}, none when it does not exist.
 *
 * @param root The workspace root.
 * @returns Its lines.
 */
export async function readIgnoreFile(root: string): Promise<string[]> {
  try {
    return (await Deno.readTextFile(`${root}/${IGNORE_FILE}`)).split(/\r?\n/);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}
