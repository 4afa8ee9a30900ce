import { dirname, join } from "node:path";
import { PathError } from "../paths/mod.ts";
import { errorMessage } from "../log/mod.ts";
import { linkedAncestor } from "./_fs.ts";
import { isMissing, syncDir } from "../disk/mod.ts";
import type { ApplyProblem, ApplyResult, ApplyStep, WorkspaceWriter } from "./types.ts";

/** Options for {@linkcode applySteps}. */
export interface ApplyOptions {
  /** Absolute workspace root. */
  root: string;
  /** Changes files and links (so each change is recorded once). */
  writer: WorkspaceWriter;
  /** Origin passed to the writer; the writer's own default when absent. */
  origin?: string | undefined;
}

/**
 * Carries out rollback or restore steps ({@linkcode planRollback}, `planRestore`) in
 * order. Files and links change through the writer; folders (which the store does not
 * track) are made, emptied and given their mode directly. A step that fails is recorded as
 * a problem and the others are still attempted; a folder is only removed once empty, so
 * nothing the plan did not know of is ever deleted.
 *
 * @param steps The steps, in the order {@linkcode planRollback} gave them.
 * @param options The root and the writer.
 * @returns The steps carried out and the problems.
 */
export async function applySteps(
  steps: readonly ApplyStep[],
  options: ApplyOptions,
): Promise<ApplyResult> {
  const applied: ApplyStep[] = [];
  const problems: ApplyProblem[] = [];
  const writeOptions = options.origin === undefined ? {} : { origin: options.origin };
  for (const step of steps) {
    try {
      // RACE: a change made between the capture that planned these steps and this step is
      // overwritten; the snapshot taken just before the rollback holds what was there then.
      await applyOne(step, options, writeOptions);
      applied.push(step);
    } catch (error) {
      problems.push({ path: step.path, message: `${step.op}: ${errorMessage(error)}` });
    }
  }
  return { applied, problems };
}

async function applyOne(
  step: ApplyStep,
  options: ApplyOptions,
  writeOptions: { origin?: string },
): Promise<void> {
  if (step.op === "write") {
    await options.writer.writeContent(step.path, step.hash, step.mode, writeOptions);
    return;
  }
  if (step.op === "remove" && step.kind !== "dir") {
    await options.writer.remove(step.path, writeOptions);
    return;
  }
  const link = await linkedAncestor(options.root, step.path);
  if (link !== undefined) {
    throw new PathError(step.path, `it lies beyond the symbolic link "${link}"`);
  }
  const absolute = join(options.root, step.path);
  switch (step.op) {
    case "remove":
      try {
        await Deno.remove(absolute);
      } catch (error) {
        if (isMissing(error)) return;
        throw error;
      }
      await syncDir(dirname(absolute));
      return;
    case "mkdir":
      await Deno.mkdir(absolute, { recursive: true });
      await syncDir(dirname(absolute));
      return;
    case "chmod":
      await Deno.chmod(absolute, step.mode & 0o7777);
      return;
  }
}
