import { ok } from "node:assert/strict";
import { join, relative } from "node:path";
import { compileTasks, ROOT } from "./_deploy.ts";

/** Every module under `lib/` started as a Worker, relative to the repository root. */
function workerModules(): string[] {
  const found: string[] = [];
  const folders = [join(ROOT, "lib")];
  while (folders.length > 0) {
    const folder = folders.pop()!;
    for (const entry of Deno.readDirSync(folder)) {
      const path = join(folder, entry.name);
      if (entry.isDirectory) folders.push(path);
      else if (entry.name.endsWith(".ts")) {
        const text = Deno.readTextFileSync(path);
        for (
          const match of text.matchAll(/new Worker\(\s*new URL\("([^"]+)", import\.meta\.url\)/g)
        ) {
          found.push(relative(ROOT, join(folder, match[1]!)));
        }
      }
    }
  }
  return found;
}

// `deno compile` leaves a Worker's module out unless it is named with --include: the
// binaries would then fail where `deno run` works.
Deno.test("every compile task includes every Worker module the program starts", () => {
  const workers = workerModules();
  ok(workers.length > 0, "no Worker found: the search is broken");
  for (const [name, task] of compileTasks()) {
    for (const worker of workers) {
      ok(task.includes(` --include ${worker} `), `${name} lacks --include ${worker}`);
    }
  }
});
