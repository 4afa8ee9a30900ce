/**
 * Web UI benchmark (issue 19): how long the first screen (the timeline's first page and
 * the tree's root) takes to draw in a real headless Chromium, from a loopback listener,
 * on a workspace of 100,000 files and as many iterations (5,000 in quick mode).
 *
 * The iterations are recorded straight into the store (the first screen reads no
 * content), in 100 folders of 1,000 files. The figure is the page's own
 * `chronicle:first-screen` mark, taken when both lists are in the DOM, relative to the
 * navigation's start, over several fresh loads. For scale, the same run times the raw
 * REST reads the screen is made of: `/ui/api/timeline?limit=100` and the tree's root page,
 * against `/changes?since=0&limit=100` (the oldest first page the REST API had).
 *
 * Run: `deno run -A bench/ui_bench.ts`
 *
 * @module
 */
import { join } from "node:path";
import { createApp } from "../lib/http/mod.ts";
import { eventsRoutes, filesRoutes } from "../lib/http/mod.ts";
import { DEFAULT_SNAPSHOT_CONFIG, openWorkspaceSnapshots } from "../lib/snapshot/mod.ts";
import type { NewIteration } from "../lib/store/mod.ts";
import { uiApiRoutes, uiStaticRoutes } from "../lib/ui/mod.ts";
import { Workspace } from "../lib/workspace/mod.ts";
import { CHROMIUM, launchChromium } from "../tests/_helpers/chromium.ts";
import {
  formatNumber,
  type LatencySummary,
  peerUnavailable,
  quickMode,
  summarize,
} from "./_lib/mod.ts";

/**
 * Runs the benchmark.
 *
 * @param quick Tiny sizes for CI.
 * @returns The lines to print.
 */
export async function run(quick: boolean): Promise<string[]> {
  const files = quick ? 5_000 : 100_000;
  const loads = quick ? 3 : 10;
  const lines: string[] = [];
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "chronicle-ui-bench-" }));
  const workspace = await Workspace.open({ root: join(root) });
  let server: Deno.HttpServer<Deno.NetAddr> | undefined;
  const events = new AbortController(); // ends the page's live feed before the shutdown
  try {
    record(workspace, files);
    const snapshots = openWorkspaceSnapshots(workspace, {
      config: DEFAULT_SNAPSHOT_CONFIG,
      offTheRecord: true,
    });
    const app = createApp({
      token: undefined,
      trustedCaller: false,
      routes: [
        filesRoutes(workspace),
        eventsRoutes(workspace.store, { signal: events.signal }),
        uiStaticRoutes(),
        uiApiRoutes({ workspace, snapshots }),
      ],
    });
    server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, app.fetch);
    const base = `http://127.0.0.1:${server.addr.port}`;
    const label = `${formatNumber(files)} files`;
    lines.push(
      timesLine(
        `GET /ui/api/timeline?limit=100, ${label}`,
        await fetchTimes(`${base}/ui/api/timeline?limit=100`),
      ),
    );
    lines.push(
      timesLine(
        `GET /ui/api/tree (root page), ${label}`,
        await fetchTimes(`${base}/ui/api/tree`),
      ),
    );
    lines.push(
      timesLine(`GET /ui/api/origins, ${label}`, await fetchTimes(`${base}/ui/api/origins`)),
    );
    lines.push(
      timesLine(
        `GET /changes?since=0&limit=100, ${label}`,
        await fetchTimes(`${base}/changes?since=0&limit=100`),
      ),
    );
    try {
      await Deno.stat(CHROMIUM);
    } catch {
      lines.push(`first screen in Chromium: ${peerUnavailable("chromium")}`);
      return lines;
    }
    const browser = await launchChromium();
    try {
      const samples: number[] = [];
      // One load first, not counted: Chromium compiles the script and warms its caches.
      for (let i = -1; i < loads; i++) {
        await browser.page.goto("about:blank");
        await browser.page.goto(`${base}/ui/`);
        const ms = await browser.page.waitFor<number>(
          "the first screen",
          `performance.getEntriesByName("chronicle:first-screen")[0]?.startTime`,
        );
        if (i >= 0) samples.push(ms);
      }
      lines.push(
        timesLine(`first screen in Chromium (timeline + tree), ${label}`, summarize(samples)),
      );
      const errors = browser.page.errors();
      if (errors.length > 0) throw new Error(`The page reported errors: ${errors.join("; ")}`);
    } finally {
      await browser.close();
    }
  } finally {
    events.abort();
    await server?.shutdown();
    await workspace.close();
    await Deno.remove(root, { recursive: true }).catch(() => undefined);
  }
  return lines;
}

/** Records `files` made-up files (one iteration each) in 100 folders, in batches. */
function record(workspace: Workspace, files: number): void {
  const batch: NewIteration[] = [];
  const start = Date.now() - files * 10;
  for (let i = 0; i < files; i++) {
    batch.push({
      path: `dir${String(i % 100).padStart(3, "0")}/file${i}.txt`,
      hash: i.toString(16).padStart(64, "0"),
      size: 100 + (i % 900),
      mode: 0o100644,
      deleted: false,
      origin: i % 3 === 0 ? "sandbox-1" : "local",
      timestamp: start + i * 10,
    });
    if (batch.length === 5_000) workspace.store.record(batch.splice(0));
  }
  if (batch.length > 0) workspace.store.record(batch);
}

/** E.g. `"<label>: p50 1.20 ms, p99 3.40 ms (20 loads, mean 1.50 ms)"`. */
function timesLine(label: string, summary: LatencySummary): string {
  return `${label}: p50 ${formatNumber(summary.p50, 1)} ms, p99 ${
    formatNumber(summary.p99, 1)
  } ms (${summary.count} loads, mean ${formatNumber(summary.mean, 1)} ms)`;
}

async function fetchTimes(url: string) {
  const samples: number[] = [];
  for (let i = 0; i < 20; i++) {
    const start = performance.now();
    const response = await fetch(url);
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`${url} answered ${response.status}`);
    samples.push(performance.now() - start);
  }
  return summarize(samples);
}

if (import.meta.main) {
  for (const line of await run(quickMode(Deno.args))) console.log(line);
}
