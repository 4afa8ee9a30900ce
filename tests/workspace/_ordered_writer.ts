/**
 * Writes files one after another, each modified later than the one before (as the file
 * system's clock tells: it waits for the clock to move past the last file's modification
 * time, on a scratch file outside the watched tree, before each write), each in one step.
 * Names are {@linkcode orderedName}: their path order is not their write order.
 *
 * Usage: `deno run -A _ordered_writer.ts <folder> <count> <scratch file>`
 */

/**
 * The name of the `k`th file of `count` written: a permutation (7919 is prime), so that
 * neither path order nor the order a folder lists them in is the write order.
 *
 * @param k Which file, from 0.
 * @param count How many are written.
 * @returns Its name.
 */
export function orderedName(k: number, count: number): string {
  return `f${String((k * 7919) % count).padStart(5, "0")}-${k}.txt`;
}

if (import.meta.main) {
  const [folder, count, scratch] = [Deno.args[0]!, Number(Deno.args[1]), Deno.args[2]!];
  let last = 0;
  for (let k = 0; k < count; k++) {
    for (;;) {
      Deno.writeFileSync(scratch, new Uint8Array());
      if (Deno.statSync(scratch).mtime!.getTime() > last) break;
    }
    // In one step (a temp file the watcher ignores, renamed into place): a look between
    // the creation and the write would find the file empty, a version of its own.
    const path = `${folder}/${orderedName(k, count)}`;
    Deno.writeTextFileSync(`${folder}/.${k}.chronicle-tmp`, `file ${k}`);
    Deno.renameSync(`${folder}/.${k}.chronicle-tmp`, path);
    last = Deno.statSync(path).mtime!.getTime();
  }
}
