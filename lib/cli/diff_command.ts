/**
 * `chronicle diff`: content diffs of a path's iterations (`diff PATH --from N [--to M]`),
 * and the printing of a snapshot's diff with its content patches (`diff ID [--patch]`,
 * run by `snapshot_commands.ts`). An argument is a path when `--from` is given, else a
 * snapshot id.
 *
 * @module
 */
import {
  diffIterations,
  type FilePatch,
  filePatchToJson,
  HistoryError,
  iterationDiffText,
  iterationDiffToJson,
} from "../history/mod.ts";
import { errorMessage } from "../log/mod.ts";
import { normalizeWorkspacePath, PathError } from "../paths/mod.ts";
import { diffToJson, type SnapshotDiff } from "../snapshot/mod.ts";
import { CliError, UsageError } from "./errors.ts";
import { LOCATE_ARGS, locateFromArgs, openLocatedWorkspace } from "./locate_workspace.ts";
import { formatMode, printJson, println, table } from "./output.ts";
import { integerArg, parseCommandArgs } from "./parse_command_args.ts";

/** Whether `chronicle diff ARGS` asks for a path's iterations (`--from` given). */
export function isPathDiff(args: string[]): boolean {
  return args.some((arg) => arg === "--from" || arg.startsWith("--from="));
}

/**
 * `chronicle diff PATH --from N [--to M] [--json]`: the unified diff between two
 * iterations of PATH, on stdout (notes first, as `note: …` lines), or its JSON.
 *
 * @param args The arguments after `diff`.
 * @returns The exit code.
 */
export async function pathDiffCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("diff", args, {
    ...LOCATE_ARGS,
    json: { type: "boolean" },
    from: { type: "string" },
    to: { type: "string" },
  });
  const [given, extra] = positionals;
  if (given === undefined || extra !== undefined || values.from === undefined) {
    throw new UsageError("Usage: chronicle diff PATH --from N [--to M] [--json]");
  }
  const from = integerArg("--from", values.from, 1)!;
  const to = integerArg("--to", values.to, 1);
  const layout = locateFromArgs(values);
  let path: string;
  try {
    path = normalizeWorkspacePath(given, { dataDir: layout.dataDirInside });
  } catch (error) {
    if (error instanceof PathError) throw new CliError(error.message);
    throw error;
  }
  const workspace = await openLocatedWorkspace(layout);
  try {
    const diff = await diffIterations(workspace.store, workspace.cas, path, { from, to });
    if (values.json) printJson(iterationDiffToJson(diff));
    else await writeText(iterationDiffText(diff));
    return 0;
  } catch (error) {
    if (error instanceof HistoryError) throw new CliError(error.message);
    throw new CliError(`Cannot diff "${path}": ${errorMessage(error)}`);
  } finally {
    await workspace.close();
  }
}

/**
 * Prints a snapshot's diff: a table of changed paths, then (with patches) each file's
 * unified diff or the note saying why there is none; or, with `json`, the diff's JSON
 * with a `patches` array when patches were asked for.
 *
 * @param diff The snapshot's diff against now.
 * @param patches The content patches, or `null` without `--patch`.
 * @param json Whether to print JSON.
 */
export async function printSnapshotDiff(
  diff: SnapshotDiff,
  patches: FilePatch[] | null,
  json: boolean,
): Promise<void> {
  if (json) {
    const patchJson = patches === null ? {} : { patches: patches.map(filePatchToJson) };
    printJson({ ...diffToJson(diff), ...patchJson });
    return;
  }
  if (diff.changes.length === 0) println(`no changes since snapshot ${diff.snapshotId}`);
  const rows = diff.changes.map((c) => [
    c.change,
    c.path,
    c.kind === "dir" && c.change !== "modified"
      ? "folder"
      : c.change === "created"
      ? size(c.afterSize)
      : c.change === "deleted"
      ? size(c.beforeSize)
      : modified(c.beforeSize, c.afterSize, c.beforeMode, c.afterMode),
  ]);
  for (const line of table(rows)) println(line);
  for (const patch of patches ?? []) {
    if (patch.note !== null) println(`note: ${patch.path}: ${patch.note}`);
    else if (patch.identical) println(`note: ${patch.path}: same content (mode only)`);
    else await writeText(patch.text);
  }
}

function size(bytes: number | null): string {
  return bytes === null ? "" : `${bytes} bytes`;
}

function modified(
  beforeSize: number | null,
  afterSize: number | null,
  beforeMode: number | null,
  afterMode: number | null,
): string {
  const parts = [`${size(beforeSize)} -> ${size(afterSize)}`];
  if (beforeMode !== afterMode && beforeMode !== null && afterMode !== null) {
    parts.push(`mode ${formatMode(beforeMode)} -> ${formatMode(afterMode)}`);
  }
  return parts.join(", ");
}

async function writeText(text: string): Promise<void> {
  const bytes = new TextEncoder().encode(text);
  let written = 0;
  while (written < bytes.length) written += await Deno.stdout.write(bytes.subarray(written));
}
