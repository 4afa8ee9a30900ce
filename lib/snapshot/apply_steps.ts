import { dirname, join } from "node:path";
import { errorMessage } from "../log/mod.ts";
import { syncDir } from "../disk/mod.ts";
import { WorkspaceDisk } from "../workspace/mod.ts";
import type { ApplyProblem, ApplyResult, ApplyStep, WorkspaceWriter } from "./types.ts";

/** Options for {@linkcode applySteps}. */
export interface ApplyOptions {
  /** Absolute workspace root. */
  root: string;
  /** Changes files and links (so each change is recorded once). */
  writer: WorkspaceWriter;
  /** Origin passed to the writer; the writer's own default when absent. */
  origin?: string | undefined;
  /**
   * The executor for folders (made, emptied, given their mode).
   * @default {a `WorkspaceDisk` on `root`}
   */
  disk?: WorkspaceDisk;
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
  const disk = options.disk ?? new WorkspaceDisk(options.root);
  for (const step of steps) {
    try {
      // RACE: a change made between the capture that planned these steps and this step is
      // overwritten; the snapshot taken just before the rollback holds what was there then.
      await applyOne(step, options, disk, writeOptions);
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
  disk: WorkspaceDisk,
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
  const absolute = join(options.root, step.path);
  switch (step.op) {
    case "remove":
      // Only an empty folder: nothing the plan did not know of is ever deleted.
      if (await disk.remove(step.path, { recursive: false })) await syncDir(dirname(absolute));
      return;
    case "mkdir":
      await disk.mkdir(step.path);
      await syncDir(dirname(absolute));
      return;
    case "chmod":
      await disk.chmod(step.path, step.mode);
      return;
  }
}
