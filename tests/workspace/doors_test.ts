/**
 * The workspace area's doors (issue #22): other areas reach it only through its `mod.ts`,
 * and it reaches only the lower areas it is built on, each through its `mod.ts`. The rule
 * is a pure function tested by a table; then the real imports of `lib/` are read and
 * judged, so a side-door or upward import fails here.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/** The areas `lib/workspace` is built on: it may import these (through their `mod.ts`). */
const BELOW = ["cas", "concurrency", "disk", "filter", "log", "paths", "store"];

/** One import: the importing file and the file imported, both relative to `lib/`. */
interface ImportEdge {
  from: string;
  to: string;
}

/**
 * What is wrong with an import touching `lib/workspace`, or `null`.
 *
 * @param edge Both files relative to `lib/` (`workspace/workspace.ts`).
 * @returns The problem in words, or `null`.
 */
function workspaceDoorProblem({ from, to }: ImportEdge): string | null {
  const [fromArea] = from.split("/");
  const [toArea, ...rest] = to.split("/");
  const toFile = rest.join("/");
  if (fromArea !== "workspace" && toArea === "workspace" && toFile !== "mod.ts") {
    return `${from} bypasses lib/workspace/mod.ts (imports ${to})`;
  }
  if (fromArea !== "workspace" || toArea === "workspace") return null;
  if (!BELOW.includes(toArea!)) return `${from} imports ${to}: not an area below the workspace`;
  if (toFile !== "mod.ts") return `${from} bypasses lib/${toArea}/mod.ts (imports ${to})`;
  return null;
}

Deno.test("workspaceDoorProblem() lets only front doors and downward imports through", async (t) => {
  const cases = [
    {
      description: "another area through mod.ts",
      input: { from: "replication/master.ts", to: "workspace/mod.ts" },
      expected: null,
    },
    {
      description: "another area through a side door",
      input: { from: "cli/locate_workspace.ts", to: "workspace/layout.ts" },
      expected: "bypasses lib/workspace/mod.ts",
    },
    {
      description: "an internal module from outside",
      input: { from: "http/app.ts", to: "workspace/_recorder.ts" },
      expected: "bypasses lib/workspace/mod.ts",
    },
    {
      description: "inside the area",
      input: { from: "workspace/workspace.ts", to: "workspace/_recorder.ts" },
      expected: null,
    },
    {
      description: "down through mod.ts",
      input: { from: "workspace/_recorder.ts", to: "store/mod.ts" },
      expected: null,
    },
    {
      description: "down through a side door",
      input: { from: "workspace/workspace.ts", to: "store/store.ts" },
      expected: "bypasses lib/store/mod.ts",
    },
    {
      description: "upward",
      input: { from: "workspace/workspace.ts", to: "replication/mod.ts" },
      expected: "not an area below",
    },
    {
      description: "unrelated areas",
      input: { from: "http/app.ts", to: "snapshot/mod.ts" },
      expected: null,
    },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => {
      const problem = workspaceDoorProblem(input);
      if (expected === null) assert.equal(problem, null);
      else assert.ok(problem?.includes(expected), `${problem}`);
    });
  }
});

/** Every relative import of every `.ts` file under `lib/`, relative to `lib/`. */
async function libImports(lib: string): Promise<ImportEdge[]> {
  const edges: ImportEdge[] = [];
  const visit = async (folder: string) => {
    for await (const entry of Deno.readDir(folder)) {
      const path = join(folder, entry.name);
      if (entry.isDirectory) await visit(path);
      else if (entry.name.endsWith(".ts")) {
        const text = await Deno.readTextFile(path);
        // Static imports and re-exports (`import … from`, `export … from`, `import "…"`).
        for (const match of text.matchAll(/(?:from|import)\s+"(\.{1,2}\/[^"]+)"/g)) {
          edges.push({
            from: relative(lib, path),
            to: relative(lib, join(folder, match[1]!)),
          });
        }
      }
    }
  };
  await visit(lib);
  return edges;
}

Deno.test("lib/ imports respect the workspace area's doors", async () => {
  const lib = fileURLToPath(new URL("../../lib", import.meta.url));
  const edges = await libImports(lib);
  // The reader finds the workspace's own imports: an empty reading would pass anything.
  assert.ok(edges.some((edge) => edge.from === "workspace/workspace.ts"));
  assert.ok(edges.some((edge) => edge.to === "workspace/mod.ts"));
  const problems = edges.map(workspaceDoorProblem).filter((problem) => problem !== null);
  assert.deepEqual(problems, []);
});
