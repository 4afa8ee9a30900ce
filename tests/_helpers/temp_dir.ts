/** Makes a temporary folder, runs `fn` in it, and removes it whatever happens. */
export async function withTempDir<T>(
  fn: (dir: string) => T | Promise<T>,
  prefix = "chronicle-test-",
): Promise<T> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix }));
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => undefined);
  }
}

/** Writes a file, creating its folders. */
export async function put(root: string, path: string, content: string | Uint8Array, mode?: number) {
  const full = `${root}/${path}`;
  await Deno.mkdir(full.slice(0, full.lastIndexOf("/")), { recursive: true });
  if (typeof content === "string") await Deno.writeTextFile(full, content);
  else await Deno.writeFile(full, content);
  if (mode !== undefined) await Deno.chmod(full, mode);
}

/**
 * Writes a file in one step, creating its folders: the content (and mode) go to a temp file
 * a watcher ignores (`*.chronicle-tmp`), renamed into place. {@linkcode put} truncates,
 * then writes: on a loaded machine a watcher's quiet time can pass in between, and the
 * empty file is recorded as a version of its own. Use this where a test counts versions
 * or checks which content was sent.
 */
export async function putAtomic(
  root: string,
  path: string,
  content: string | Uint8Array,
  mode?: number,
) {
  const full = `${root}/${path}`;
  const slash = full.lastIndexOf("/");
  await Deno.mkdir(full.slice(0, slash), { recursive: true });
  const temp = `${full.slice(0, slash)}/.${crypto.randomUUID()}.chronicle-tmp`;
  if (typeof content === "string") await Deno.writeTextFile(temp, content);
  else await Deno.writeFile(temp, content);
  if (mode !== undefined) await Deno.chmod(temp, mode);
  await Deno.rename(temp, full);
}

/** Reads a text file, `undefined` when it is missing. */
export async function readText(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}
