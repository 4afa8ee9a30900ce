/**
 * The layering of `lib/`, checked on every run so it stays true: an area imports only
 * areas below it, and only through their `mod.ts`. The table is the design; a new area
 * takes its place in it.
 *
 * @module
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { dirname, join, relative } from "node:path";
import { PROJECT_ROOT } from "./_helpers/processes.ts";

/**
 * Each area's layer: it may import areas of lower layers only. Pure helpers at the
 * bottom, storage above them, the workspace and its history above that, the protocols
 * and surfaces next, and the process and the command line on top.
 */
const LAYERS: Record<string, number> = {
  log: 0,
  paths: 1,
  concurrency: 1,
  memory: 1,
  disk: 1,
  db: 1,
  wire: 1,
  filter: 1,
  metrics: 2,
  net: 1,
  textdiff: 1,
  localsync: 1,
  store: 2,
  cas: 2,
  workspace: 3,
  snapshot: 4,
  checkpoint: 4,
  history: 5,
  objectstore: 5,
  config: 5,
  http: 6,
  replication: 6,
  mcp: 7,
  ui: 7,
  daemon: 8,
  cli: 9,
};

/**
 * Areas held to fewer areas than their layer allows: each imports only the areas it is
 * built on. The workspace records changes; it must not reach the database, the wire or
 * the network directly (issue #22).
 */
const BUILT_ON: Record<string, readonly string[]> = {
  workspace: ["cas", "concurrency", "disk", "filter", "log", "paths", "store"],
};

/** One import of one file of `lib/`, relative to the project root. */
interface Import {
  from: string;
  to: string;
}

/** The relative imports (static, re-exports and dynamic) of a source text. */
export function importSpecifiers(source: string): string[] {
  const out: string[] = [];
  const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["'](\.[^"']+)["']/gm;
  for (const match of source.matchAll(pattern)) out.push(match[1]!);
  return out;
}

/**
 * What is wrong with one import: a side door (into another area past its `mod.ts`), an
 * upward or sideways import (to an area of the same or a higher layer), or an area the
 * table does not know. `null` when it is fine.
 */
export function importProblem({ from, to }: Import): string | null {
  const area = (path: string) => path.startsWith("lib/") ? path.split("/")[1]! : null;
  const source = area(from);
  const target = area(to);
  if (source === null || target === null || source === target) return null;
  for (const name of [source, target]) {
    if (!(name in LAYERS)) return `lib/${name} has no layer: add it to LAYERS`;
  }
  if (to !== `lib/${target}/mod.ts`) {
    return `${from} imports ${to}: another area is reached only through lib/${target}/mod.ts`;
  }
  if (LAYERS[target]! >= LAYERS[source]!) {
    return `${from} imports lib/${target} (layer ${LAYERS[target]}), not below lib/${source} ` +
      `(layer ${LAYERS[source]})`;
  }
  const builtOn = BUILT_ON[source];
  if (builtOn !== undefined && !builtOn.includes(target)) {
    return `${from} imports lib/${target}: lib/${source} is built on ${builtOn.join(", ")} only`;
  }
  return null;
}

async function libImports(): Promise<Import[]> {
  const out: Import[] = [];
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(join(PROJECT_ROOT, dir))) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) await walk(path);
      else if (entry.isFile && path.endsWith(".ts")) {
        const text = await Deno.readTextFile(join(PROJECT_ROOT, path));
        for (const specifier of importSpecifiers(text)) {
          const target = relative(PROJECT_ROOT, join(PROJECT_ROOT, dirname(path), specifier));
          out.push({ from: path, to: target });
        }
      }
    }
  };
  await walk("lib");
  return out;
}

Deno.test("importProblem() allows downward imports through mod.ts only", async (t) => {
  const table: { description: string; input: Import; expected: string | null }[] = [
    {
      description: "within an area",
      input: { from: "lib/cas/cas.ts", to: "lib/cas/_atomic.ts" },
      expected: null,
    },
    {
      description: "down, through mod.ts",
      input: { from: "lib/cas/cas.ts", to: "lib/disk/mod.ts" },
      expected: null,
    },
    {
      description: "a side door",
      input: { from: "lib/snapshot/types.ts", to: "lib/store/types.ts" },
      expected:
        "lib/snapshot/types.ts imports lib/store/types.ts: another area is reached only through lib/store/mod.ts",
    },
    {
      description: "upward",
      input: { from: "lib/config/resolve.ts", to: "lib/cli/mod.ts" },
      expected: "lib/config/resolve.ts imports lib/cli (layer 9), not below lib/config (layer 5)",
    },
    {
      description: "sideways",
      input: { from: "lib/replication/x.ts", to: "lib/http/mod.ts" },
      expected:
        "lib/replication/x.ts imports lib/http (layer 6), not below lib/replication (layer 6)",
    },
    {
      description: "an area with no layer",
      input: { from: "lib/newthing/x.ts", to: "lib/log/mod.ts" },
      expected: "lib/newthing has no layer: add it to LAYERS",
    },
    {
      description: "into the workspace, through mod.ts",
      input: { from: "lib/replication/master.ts", to: "lib/workspace/mod.ts" },
      expected: null,
    },
    {
      description: "into the workspace, through a side door",
      input: { from: "lib/cli/locate_workspace.ts", to: "lib/workspace/layout.ts" },
      expected:
        "lib/cli/locate_workspace.ts imports lib/workspace/layout.ts: another area is reached only through lib/workspace/mod.ts",
    },
    {
      description: "into an internal module of the workspace",
      input: { from: "lib/http/app.ts", to: "lib/workspace/_recorder.ts" },
      expected:
        "lib/http/app.ts imports lib/workspace/_recorder.ts: another area is reached only through lib/workspace/mod.ts",
    },
    {
      description: "within the workspace",
      input: { from: "lib/workspace/workspace.ts", to: "lib/workspace/_recorder.ts" },
      expected: null,
    },
    {
      description: "the workspace down to an area it is built on, through mod.ts",
      input: { from: "lib/workspace/_recorder.ts", to: "lib/store/mod.ts" },
      expected: null,
    },
    {
      description: "the workspace down, through a side door",
      input: { from: "lib/workspace/workspace.ts", to: "lib/store/store.ts" },
      expected:
        "lib/workspace/workspace.ts imports lib/store/store.ts: another area is reached only through lib/store/mod.ts",
    },
    {
      description: "the workspace upward",
      input: { from: "lib/workspace/workspace.ts", to: "lib/replication/mod.ts" },
      expected:
        "lib/workspace/workspace.ts imports lib/replication (layer 6), not below lib/workspace (layer 3)",
    },
    {
      description: "the workspace down to a lower area it is not built on",
      input: { from: "lib/workspace/workspace.ts", to: "lib/db/mod.ts" },
      expected:
        "lib/workspace/workspace.ts imports lib/db: lib/workspace is built on cas, concurrency, disk, filter, log, paths, store only",
    },
    {
      description: "areas unrelated to the workspace",
      input: { from: "lib/http/app.ts", to: "lib/snapshot/mod.ts" },
      expected: null,
    },
    {
      description: "outside lib",
      input: { from: "lib/daemon/version.ts", to: "deno.json" },
      expected: null,
    },
  ];
  for (const { description, input, expected } of table) {
    await t.step(description, () => strictEqual(importProblem(input), expected));
  }
});

Deno.test("importSpecifiers() finds static, re-exported and dynamic imports", () => {
  const source = [
    'import { a } from "../a/mod.ts";',
    'import type { B } from "./b.ts";',
    'export { c } from "../c/mod.ts";',
    'const d = await import("./d.ts");',
    'import "./side_effect.ts";',
    'import { e } from "npm:e";',
  ].join("\n");
  deepStrictEqual(importSpecifiers(source), [
    "../a/mod.ts",
    "./b.ts",
    "../c/mod.ts",
    "./d.ts",
    "./side_effect.ts",
  ]);
});

Deno.test("lib/ imports only lower areas, and only through their mod.ts", async () => {
  const imports = await libImports();
  // The reader finds the workspace's own imports: an empty reading would pass anything.
  ok(imports.some((edge) => edge.from === "lib/workspace/workspace.ts"));
  ok(imports.some((edge) => edge.to === "lib/workspace/mod.ts"));
  const problems = imports.map(importProblem).filter((problem) => problem !== null);
  deepStrictEqual(problems, []);
});

Deno.test("every area of lib/ has a mod.ts and a layer", async () => {
  const problems: string[] = [];
  for await (const entry of Deno.readDir(join(PROJECT_ROOT, "lib"))) {
    if (!entry.isDirectory) continue;
    if (!(entry.name in LAYERS)) problems.push(`lib/${entry.name} has no layer`);
    try {
      await Deno.lstat(join(PROJECT_ROOT, "lib", entry.name, "mod.ts"));
    } catch {
      problems.push(`lib/${entry.name} has no mod.ts`);
    }
  }
  deepStrictEqual(problems.sort(), []);
});
