/**
 * The snapshot commands: `snapshot`, `snapshots`, `diff`, `rollback`, `verify`, `txn`, and
 * `restore --to SEQ|TIME [PATH…]` (README).
 *
 * @module
 */
import { join } from "node:path";
import { PathError } from "../paths/mod.ts";
import {
  isSnapshotActionType,
  loadSnapshotConfig,
  openWorkspaceSnapshots,
  parseRestorePoint,
  restorePlanToJson,
  restoreResultToJson,
  rollbackResultToJson,
  SNAPSHOT_ACTION_TYPES,
  type SnapshotConfig,
  type SnapshotRecord,
  type Snapshots,
  snapshotToJson,
  type Transaction,
  transactionToJson,
  verifyReportToJson,
} from "../snapshot/mod.ts";
import type { Workspace, WorkspaceLayout } from "../workspace/mod.ts";
import { snapshotPatches } from "../history/mod.ts";
import { isPathDiff, pathDiffCommand, printSnapshotDiff } from "./diff_command.ts";
import { CliError, UsageError } from "./errors.ts";
import { askRunning, type ChangesJson, reportChanges } from "./live_writes.ts";
import { LOCATE_ARGS, locateFromArgs, openLocatedWorkspace } from "./locate_workspace.ts";
import { nonEmpty } from "./non_empty.ts";
import { formatMode, formatTime, printJson, println, table } from "./output.ts";
import { integerArg, parseCommandArgs } from "./parse_command_args.ts";
import { errorMessage } from "../log/mod.ts";

/** Flags every snapshot command accepts. */
const COMMON = {
  ...LOCATE_ARGS,
  json: { type: "boolean" },
  config: { type: "string" },
  "max-snapshots": { type: "string" },
  "max-age-days": { type: "string" },
  "no-snapshots": { type: "boolean" },
} as const;

interface CommonValues {
  C?: string | undefined;
  "data-dir"?: string | undefined;
  database?: string | undefined;
  "cas-dir"?: string | undefined;
  config?: string | undefined;
  "max-snapshots"?: string | undefined;
  "max-age-days"?: string | undefined;
  "no-snapshots"?: boolean | undefined;
}

/** Every snapshot command, by name, for `main.ts` to dispatch. */
export const snapshotCommands: Record<string, (args: string[]) => Promise<number>> = {
  snapshot: snapshotCommand,
  snapshots: snapshotsCommand,
  diff: diffCommand,
  rollback: rollbackCommand,
  verify: verifyCommand,
  txn: txnCommand,
};

/**
 * `chronicle snapshot ACTION_TYPE --path P [--destination D] [--txn ID]`: captures what the
 * action is about to change. Prints the new snapshot, or why none was taken.
 *
 * @param args The arguments after `snapshot`.
 * @returns The exit code.
 */
export async function snapshotCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("snapshot", args, {
    ...COMMON,
    path: { type: "string" },
    source: { type: "string" },
    destination: { type: "string" },
    txn: { type: "string" },
  });
  const [type, extra] = positionals;
  if (type === undefined || extra !== undefined || (values.path ?? values.source) === undefined) {
    throw new UsageError(
      "Usage: chronicle snapshot ACTION_TYPE --path P [--destination D] [--txn ID]",
    );
  }
  if (!isSnapshotActionType(type)) {
    throw new UsageError(
      `Unknown action type "${type}": expected one of ${SNAPSHOT_ACTION_TYPES.join(", ")}`,
    );
  }
  const payload: Record<string, string> = {};
  if (values.path !== undefined) payload.path = values.path;
  if (values.source !== undefined) payload.source = values.source;
  if (values.destination !== undefined) payload.destination = values.destination;
  return await withSnapshots(values, async (snapshots) => {
    const transactionId = values.txn ?? envValue("CHRONICLE_TXN");
    const snap = await snapshots.snapshot({ type, payload }, { transactionId });
    if (values.json) printJson(snap ? snapshotToJson(snap) : null);
    else if (snap) println(describeSnapshot(snap));
    else if (snapshots.offTheRecord) println("no snapshot: off the record");
    else println(`no snapshot: "${type}" changes no files`);
    return 0;
  });
}

/**
 * `chronicle snapshots [--txn ID] [--limit N]`: the retained snapshots, oldest first.
 *
 * @param args The arguments after `snapshots`.
 * @returns The exit code.
 */
export async function snapshotsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("snapshots", args, {
    ...COMMON,
    txn: { type: "string" },
    limit: { type: "string" },
  });
  if (positionals.length > 0) {
    throw new UsageError("Usage: chronicle snapshots [--txn ID] [--limit N]");
  }
  const limit = integerArg("--limit", values.limit);
  return await withSnapshots(values, (snapshots) => {
    const list = snapshots.list({ transactionId: values.txn, limit });
    if (values.json) {
      printJson(list.map(snapshotToJson));
    } else if (list.length === 0) {
      println("no snapshots");
    } else {
      const rows = list.map((s) => [
        `#${s.number}`,
        s.id.slice(0, 8),
        formatTime(s.timestamp),
        `${s.files.length} path${s.files.length === 1 ? "" : "s"}`,
        s.transactionId ? `txn ${s.transactionId.slice(0, 8)}` : "-",
        s.summary,
      ]);
      for (const line of table(rows)) println(line);
    }
    return Promise.resolve(0);
  });
}

/**
 * `chronicle diff ID [--patch]`: what changed between a snapshot and now, with `--patch`
 * each changed text file's unified diff; `chronicle diff PATH --from N [--to M]` (an
 * argument is a path when `--from` is given) goes to the path diff (`diff_command.ts`).
 *
 * @param args The arguments after `diff`.
 * @returns The exit code.
 */
export async function diffCommand(args: string[]): Promise<number> {
  if (isPathDiff(args)) return await pathDiffCommand(args);
  const { values, positionals } = parseCommandArgs("diff", args, {
    ...COMMON,
    patch: { type: "boolean" },
  });
  const id = single("diff SNAPSHOT_ID [--patch] (or PATH --from N)", positionals);
  return await withSnapshots(values, async (snapshots, workspace) => {
    const diff = await snapshots.diff(id).catch((error) => {
      // `diff notes.md` meant a path: say how to ask for that.
      if (workspace.store.latest(id) === undefined) throw error;
      throw new UsageError(
        `chronicle diff: "${id}" is a path, not a snapshot id: add --from N to compare its iterations`,
      );
    });
    const patches = values.patch
      ? await snapshotPatches(workspace.root, workspace.cas, diff.changes)
      : null;
    await printSnapshotDiff(diff, patches, values.json === true);
    return 0;
  });
}

/**
 * `chronicle rollback ID [--no-snapshots]`: puts what a snapshot captured back; prints
 * how to undo the rollback.
 *
 * @param args The arguments after `rollback`.
 * @returns The exit code: 1 when some path could not be restored.
 */
export async function rollbackCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("rollback", args, COMMON);
  const id = single("rollback ID", positionals);
  return await withSnapshots(values, async (snapshots, workspace) => {
    const target = snapshots.get(id);
    const otr = offTheRecord(values) ? "?otr=1" : "";
    const result = await askRunning<ChangesJson>(
      workspace.layout,
      `/snapshots/${target.id}/rollback${otr}`,
    ) ?? rollbackResultToJson(await snapshots.rollback(target.id)) as ChangesJson;
    const what = `rolled back snapshot ${target.id}`;
    return reportChanges((n) => `${what}: ${plural(n, "change")}`, result, values.json);
  });
}

/**
 * `chronicle verify [--no-content]`: checks the hash chain and the backed-up content.
 *
 * @param args The arguments after `verify`.
 * @returns The exit code: 1 on any integrity problem.
 */
export async function verifyCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("verify", args, {
    ...COMMON,
    "no-content": { type: "boolean" },
  });
  if (positionals.length > 0) throw new UsageError("Usage: chronicle verify [--no-content]");
  return await withSnapshots(values, async (snapshots) => {
    const report = await snapshots.verify({ content: !values["no-content"] });
    if (values.json) printJson(verifyReportToJson(report));
    if (report.ok) {
      if (!values.json) {
        const range = report.snapshots === 0
          ? "no snapshots"
          : `${report.snapshots} snapshots (#${report.head.anchorNumber} to #${report.head.headNumber})`;
        println(`chain intact: ${range}, ${report.contentChecked} content objects verified`);
      }
      return 0;
    }
    if (!values.json) { for (const problem of report.problems) println(problem.message); }
    console.error(`error: integrity check failed: ${plural(report.problems.length, "problem")}`);
    return 1;
  });
}

/**
 * `chronicle txn begin|commit ID|rollback ID|list|show ID`: transactions of snapshots.
 * `begin` prints only the new ID, for `T=$(chronicle txn begin)`.
 *
 * @param args The arguments after `txn`.
 * @returns The exit code.
 */
export async function txnCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("txn", args, COMMON);
  const [verb, id, extra] = positionals;
  const usage = "Usage: chronicle txn begin | commit ID | rollback ID | list | show ID";
  const needsId = verb === "commit" || verb === "rollback" || verb === "show";
  const known = needsId || verb === "begin" || verb === "list";
  if (!known || extra !== undefined || (needsId ? id === undefined : id !== undefined)) {
    throw new UsageError(usage);
  }
  return await withSnapshots(values, async (snapshots, workspace) => {
    switch (verb) {
      case "begin": {
        const transaction = snapshots.beginTransaction();
        if (values.json) printJson(transactionToJson(transaction));
        else println(transaction.id);
        return 0;
      }
      case "commit": {
        const transaction = snapshots.commit(id!);
        if (values.json) printJson(transactionToJson(transaction));
        else {println(
            `committed transaction ${transaction.id} (${
              plural(transaction.snapshots.length, "snapshot")
            })`,
          );}
        return 0;
      }
      case "rollback": {
        const otr = offTheRecord(values) ? "?otr=1" : "";
        const full = snapshots.transaction(id!).id;
        const result = await askRunning<ChangesJson>(
          workspace.layout,
          `/transactions/${full}/rollback${otr}`,
        ) ?? rollbackResultToJson(await snapshots.rollbackTransaction(full)) as ChangesJson;
        const transaction = result.transaction as { id: string; snapshots: string[] };
        const what = `rolled back transaction ${transaction.id} (${
          plural(transaction.snapshots.length, "snapshot")
        })`;
        return reportChanges((n) => `${what}: ${plural(n, "change")}`, result, values.json);
      }
      case "show": {
        const transaction = snapshots.transaction(id!);
        if (values.json) printJson(transactionToJson(transaction));
        else for (const line of describeTransaction(transaction)) println(line);
        return 0;
      }
      default: {
        const list = snapshots.transactions();
        if (values.json) printJson(list.map(transactionToJson));
        else if (list.length === 0) println("no transactions");
        else {
          const rows = list.map((t) => [
            t.id,
            t.status,
            formatTime(t.startedAt),
            plural(t.snapshots.length, "snapshot"),
          ]);
          for (const line of table(rows)) println(line);
        }
        return 0;
      }
    }
  });
}

/**
 * `chronicle restore --to SEQ|TIME [PATH…] [--dry-run] [--yes]`: shows what bringing the
 * workspace (or the paths) back to that moment changes, then does it as new iterations
 * after a snapshot of the paths it changes. Without `--yes` it asks on a terminal, and
 * refuses otherwise.
 *
 * @param args The arguments after `restore` (including `--to`).
 * @returns The exit code: 1 when some path could not be restored.
 */
export async function restoreToCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("restore", args, {
    ...COMMON,
    to: { type: "string" },
    "dry-run": { type: "boolean" },
    yes: { type: "boolean", short: "y" },
  });
  if (values.to === undefined) {
    throw new UsageError("Usage: chronicle restore --to SEQ|TIME [PATH...] [--dry-run] [--yes]");
  }
  let point;
  try {
    point = parseRestorePoint(values.to, Date.now());
  } catch (error) {
    throw new UsageError(`chronicle restore: ${errorMessage(error)}`);
  }
  return await withSnapshots(values, async (snapshots, workspace) => {
    const plan = snapshots.restorePlan(point, positionals);
    const when = workspace.store.bySequence(plan.sequence);
    const moment = `sequence ${plan.sequence}${when ? ` (${formatTime(when.timestamp)})` : ""}`;
    if (values.json && (values["dry-run"] || plan.changes.length === 0)) {
      printJson(restorePlanToJson(plan));
      return 0;
    }
    if (!values.json) {
      println(`restore to ${moment}: ${plural(plan.changes.length, "change")}`);
      const rows = plan.changes.map((c) => [
        c.action,
        c.path,
        c.after ? `${size(c.after.size)}, mode ${formatMode(c.after.mode)}` : "",
      ]);
      for (const line of table(rows)) println(`  ${line}`);
    }
    if (values["dry-run"] || plan.changes.length === 0) return 0;
    if (!values.yes && !confirm(plan.changes.length)) {
      if (!Deno.stdin.isTerminal()) {
        throw new UsageError(
          "chronicle restore: add --yes to apply these changes (or --dry-run to only show them)",
        );
      }
      println("nothing changed");
      return 1;
    }
    // The running Chronicle restores to the very sequence shown, not to "10m ago" again.
    const result = await askRunning<ChangesJson>(workspace.layout, "/restore", {
      to: plan.sequence,
      paths: positionals,
      off_the_record: offTheRecord(values),
    }) ?? restoreResultToJson(await snapshots.restoreTo(plan)) as ChangesJson;
    return reportChanges((n) => `restored ${plural(n, "path")} to ${moment}`, result, values.json);
  });
}

// --- helpers -----------------------------------------------------------------------------

/**
 * Opens the workspace (its write-through API records each rollback change once) and its
 * snapshot engine with the configured retention, runs `work`, and closes everything.
 */
async function withSnapshots(
  values: CommonValues,
  work: (snapshots: Snapshots, workspace: Workspace) => Promise<number>,
): Promise<number> {
  const layout = locateFromArgs(values);
  const config = await retention(values, layout);
  const workspace = await openLocatedWorkspace(layout);
  try {
    const snapshots = openWorkspaceSnapshots(workspace, {
      config,
      offTheRecord: offTheRecord(values),
    });
    return await work(snapshots, workspace);
  } catch (error) {
    if (error instanceof PathError) throw new CliError(error.message, { cause: error });
    throw error;
  } finally {
    await workspace.close();
  }
}

/**
 * Retention from `--config FILE` (else `CHRONICLE_CONFIG`, else `DATA/config.yaml`, as the
 * daemon reads it), then the environment, then the flags.
 */
async function retention(values: CommonValues, layout: WorkspaceLayout): Promise<SnapshotConfig> {
  const named = values.config ?? envValue("CHRONICLE_CONFIG");
  const file = named ??
    [join(layout.dataDir, "config.yaml")].find(isFile);
  const overrides = {
    max_snapshots: values["max-snapshots"] ?? envValue("CHRONICLE_MAX_SNAPSHOTS"),
    max_age_days: values["max-age-days"] ?? envValue("CHRONICLE_MAX_AGE_DAYS"),
  };
  try {
    return await loadSnapshotConfig({ file, required: named !== undefined, overrides });
  } catch (error) {
    throw new UsageError(errorMessage(error));
  }
}

function describeSnapshot(snap: SnapshotRecord): string {
  const txn = snap.transactionId ? ` in transaction ${snap.transactionId}` : "";
  return `snapshot ${snap.id} #${snap.number}: ${snap.summary} (${
    plural(snap.files.length, "path")
  })${txn}`;
}

function describeTransaction(transaction: Transaction): string[] {
  return [
    `transaction ${transaction.id}: ${transaction.status.replace("_", " ")}`,
    `started ${formatTime(transaction.startedAt)}`,
    ...(transaction.finishedAt === null ? [] : [`finished ${formatTime(transaction.finishedAt)}`]),
    ...transaction.snapshots.map((id) => `snapshot ${id}`),
  ];
}

function confirm(count: number): boolean {
  if (!Deno.stdin.isTerminal()) return false;
  const answer = prompt(`Apply ${plural(count, "change")}? [y/N]`);
  return answer !== null && /^y(es)?$/i.test(answer.trim());
}

function single(usage: string, positionals: string[]): string {
  const [value, extra] = positionals;
  if (value === undefined || extra !== undefined) throw new UsageError(`Usage: chronicle ${usage}`);
  return value;
}

function size(bytes: number | null): string {
  return bytes === null ? "" : `${bytes} bytes`;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

function envValue(name: string): string | undefined {
  try {
    return nonEmpty(Deno.env.get(name));
  } catch {
    return undefined; // no --allow-env: behave as if unset
  }
}

/** Whether snapshots are off (`--no-snapshots`, `CHRONICLE_NO_SNAPSHOTS`). */
function offTheRecord(values: CommonValues): boolean {
  return values["no-snapshots"] === true || isTrue(envValue("CHRONICLE_NO_SNAPSHOTS"));
}

function isTrue(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value);
}

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}
