/** Makes a temporary folder, runs `fn` in it, and removes it whatever happens. */
export async function withTempDir<T>(
  fn: (dir: string) => Promise<T>,
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
