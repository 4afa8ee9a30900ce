/**
 * The least the replication benchmark's initial sync could cost on this disk in this
 * runtime: one durable small write, and a durable copy of a tree with no record kept.
 *
 * @module
 */
import type { CorpusEntry } from "./corpora.ts";
import { runPeer, syncDisks } from "./peer_tool.ts";
import { formatNumber } from "./format.ts";
import { summarize } from "./timing.ts";

/**
 * What one durable small-file write costs on this disk (temp file, fsync, rename, fsync
 * of the folder), the way the CAS and the workspace write: every replicated file pays a
 * few of these, which bounds the replication figures.
 *
 * @param dir An empty folder to write in.
 * @returns A result line.
 */
export async function durableWriteFloor(dir: string): Promise<string> {
  const samples: number[] = [];
  const bytes = new Uint8Array(200);
  for (let i = 0; i < 50; i++) {
    const start = performance.now();
    const file = await Deno.open(`${dir}/t${i}`, { write: true, createNew: true });
    await file.write(bytes);
    await file.sync();
    file.close();
    await Deno.rename(`${dir}/t${i}`, `${dir}/f${i}`);
    const folder = await Deno.open(dir, { read: true });
    await folder.sync();
    folder.close();
    samples.push(performance.now() - start);
  }
  const summary = summarize(samples);
  return `durable small write on this disk (write, fsync, rename, fsync folder): p50 ${
    formatNumber(summary.p50, 2)
  } ms, p99 ${formatNumber(summary.p99, 2)} ms`;
}

/**
 * Copies the tree as the least a Deno process can while making each file whole and
 * durable as Chronicle does: read it, write it under a temp name, rename it into place,
 * then flush the file system once. No hashing, no store, no protocol: a floor for what
 * the initial sync's design costs in this runtime, measured beside the peers.
 *
 * @param source The tree.
 * @param target An empty folder.
 * @param entries The tree's entries, from `listTree`.
 */
export async function durableCopy(
  source: string,
  target: string,
  entries: CorpusEntry[],
): Promise<void> {
  for (const { path, kind } of entries) {
    const from = `${source}/${path}`;
    const to = `${target}/${path}`;
    if (kind === "dir") {
      Deno.mkdirSync(to, { recursive: true });
    } else if (kind === "symlink") {
      Deno.symlinkSync(Deno.readLinkSync(from), to);
    } else {
      const mode = (Deno.lstatSync(from).mode ?? 0o644) & 0o7777;
      const temp = `${to}.tmp`;
      Deno.writeFileSync(temp, Deno.readFileSync(from), { mode, createNew: true });
      Deno.renameSync(temp, to);
    }
  }
  if (!(await runPeer("sync", ["-f", target]))) await syncDisks(); // durable either way
}
