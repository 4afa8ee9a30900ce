import { columns, openDatabase } from "../db/mod.ts";
import {
  ConflictLog,
  type MasterConflict,
  MasterConflicts,
  type SyncWaitResult,
  WriteJournal,
} from "../replication/mod.ts";
import { controlRequest, jsonOrFail, requireRunning } from "./control_client.ts";
import { CliError, UsageError } from "./errors.ts";
import { LOCATE_ARGS, locateFromArgs } from "./locate_workspace.ts";
import { formatTime, printJson, println, table } from "./output.ts";
import { connectionProblem } from "./status_command.ts";
import { integerArg, parseCommandArgs } from "./parse_command_args.ts";

/**
 * `chronicle sync --wait [--timeout SECONDS] [--json]`: on a replica, returns once it
 * holds everything the master held when asked (a barrier, PROTOCOL.md §5), e.g. before
 * running tests in a sandbox. Exit 0 when in sync, 1 when not within the timeout.
 *
 * @param args The arguments after `sync`.
 * @returns The exit code.
 * @throws {UsageError} Without `--wait` (other `sync` actions belong to local-sync).
 * @throws {CliError} When no Chronicle runs there, it is not a replica, or the wait times out.
 */
export async function syncWaitCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("sync", args, {
    ...LOCATE_ARGS,
    wait: { type: "boolean" },
    timeout: { type: "string" },
    json: { type: "boolean" },
  });
  if (!values.wait || positionals.length > 0) {
    throw new UsageError("Usage: chronicle sync --wait [--timeout SECONDS] [--json]");
  }
  const seconds = integerArg("--timeout", values.timeout) ?? 60;
  const layout = locateFromArgs(values);
  const response = await requireRunning(layout, `/sync/wait?timeout_ms=${seconds * 1000}`, {
    method: "POST",
  });
  const result = await jsonOrFail<SyncWaitResult>(response);
  if (values.json) printJson(result);
  if (!result.satisfied) {
    // "applied 6320 of the master's 6320" reads like success when the master is gone: ask
    // whether a connection is up, and say which it is (and why not, when known).
    const status = await controlRequest(layout, "/sync/status")
      .then((r) => r?.ok ? r.json() as Promise<Record<string, unknown>> : null)
      .catch(() => null);
    throw new CliError(syncWaitFailure(seconds, result, status));
  }
  if (!values.json) println(`in sync at master sequence ${result.masterSequence}`);
  return 0;
}

/**
 * What `sync --wait` says when the replica is not in sync in time.
 *
 * @param seconds The timeout given.
 * @param result The barrier's answer.
 * @param status The replica's `/sync/status` (camelCase keys), or `null` when unknown.
 * @returns The one-line reason.
 */
export function syncWaitFailure(
  seconds: number,
  result: SyncWaitResult,
  status: Record<string, unknown> | null,
): string {
  const prefix = `Not in sync within ${seconds} s`;
  if (status?.connected !== false) {
    return `${prefix}: applied ${result.appliedSequence} of the master's ${result.masterSequence}`;
  }
  const master = `"${status.master}"`;
  const problem = connectionProblem({
    connections: status.connections,
    last_connection_error: status.lastConnectionError,
  });
  if (problem !== undefined) {
    // It connected before: its master most likely went away since.
    const gone = Number(status.connections) > 0 ? ". Is the master running?" : "";
    return `${prefix}: no connection to the master ${master}: ${problem}${gone}`;
  }
  return `${prefix}: no connection to the master ${master} (this replica holds its sequence ${result.appliedSequence}; the master's last heard was ${result.masterSequence}). Is the master running?`;
}

/** Rows of each list `conflicts` shows without `--limit` or `--all`: the newest ones. */
export const CONFLICTS_DEFAULT_LIMIT = 1000;

/**
 * `chronicle conflicts [--limit N | --all] [--json]`: write-backs the master rejected (with
 * the reason and the hash of the content kept in the store) and local writes refused for
 * write-back (too large), the newest 1,000 of each unless told otherwise; people are told
 * when a list is cut, and `--json` adds `conflicts_total` and `refused_total`. Reads the
 * database, so it works whether or not Chronicle is running.
 *
 * @param args The arguments after `conflicts`.
 * @returns The exit code.
 * @throws {UsageError} For bad arguments.
 */
export function conflictsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("conflicts", args, {
    ...LOCATE_ARGS,
    limit: { type: "string" },
    all: { type: "boolean" },
    json: { type: "boolean" },
  });
  if (positionals.length > 0) {
    throw new UsageError("Usage: chronicle conflicts [--limit N | --all] [--json]");
  }
  if (values.all && values.limit !== undefined) {
    throw new UsageError("chronicle conflicts: give --limit N or --all, not both");
  }
  const asked = values.all ? undefined : integerArg("--limit", values.limit, 1) ??
    CONFLICTS_DEFAULT_LIMIT;
  const layout = locateFromArgs(values);
  const db = openDatabase(layout.database, { readOnly: true });
  try {
    const tables = new Set(
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all()
        .map((row) => columns(row).text("name")),
    );
    if (tables.has("master_conflicts") && !tables.has("replica_conflicts")) {
      const kept = new MasterConflicts(db);
      const total = kept.count();
      const conflicts = kept.list(asked ?? total);
      return Promise.resolve(printMasterConflicts(conflicts, total, values.json));
    }
    if (!tables.has("replica_conflicts")) {
      if (values.json) {
        printJson({ conflicts: [], refused: [], conflictsTotal: 0, refusedTotal: 0 });
      } else println("no conflicts (this workspace has never been a master or a replica)");
      return Promise.resolve(0);
    }
    const journal = new WriteJournal(db);
    const log = new ConflictLog(db);
    const conflictsTotal = log.counts().total;
    const refusedTotal = journal.counts().refused;
    const conflicts = log.list({ limit: asked ?? conflictsTotal });
    const refused = journal.refusals(asked ?? refusedTotal);
    if (values.json) {
      printJson({ conflicts, refused, conflictsTotal, refusedTotal });
      return Promise.resolve(0);
    }
    if (conflicts.length === 0 && refused.length === 0) {
      println("no conflicts");
      return Promise.resolve(0);
    }
    const rows = [["time", "path", "operation", "status", "kept content", "reason"]];
    for (const c of conflicts) {
      rows.push([
        formatTime(c.createdMs),
        c.path,
        c.operation,
        c.resolvedMs === null
          ? `unresolved${c.resolution ? ` (${c.resolution})` : ""}`
          : `resolved (${c.resolution ?? "by hand"})`,
        c.keptHash ?? "-",
        c.reason,
      ]);
    }
    for (const r of refused) {
      rows.push([
        formatTime(r.createdMs),
        r.path,
        r.operation,
        r.superseded ? "resolved (superseded)" : "refused here",
        r.hash ?? "-",
        r.reason ?? "",
      ]);
    }
    for (const line of table(rows)) println(line);
    printCut(conflicts.length, conflictsTotal, "conflicts");
    printCut(refused.length, refusedTotal, "refused writes");
    return Promise.resolve(0);
  } finally {
    db.close();
  }
}

/** Tells people a list was cut, and how to see the rest. */
function printCut(shown: number, total: number, what: string): void {
  if (shown < total) {
    println(`showing the newest ${shown} of ${total} ${what}; use --limit ${total} or --all`);
  }
}

/** Prints a master's kept rejections (`chronicle conflicts` on the agent host). */
function printMasterConflicts(
  conflicts: MasterConflict[],
  total: number,
  json: boolean | undefined,
): number {
  if (json) {
    printJson({ conflicts, refused: [], conflictsTotal: total, refusedTotal: 0 });
    return 0;
  }
  if (conflicts.length === 0) {
    println("no conflicts");
    return 0;
  }
  const rows = [["time", "sandbox", "path", "operation", "kept content", "reason"]];
  for (const c of conflicts) {
    rows.push([
      formatTime(c.createdMs),
      c.sandboxId,
      c.path,
      c.operation,
      c.keptHash ?? "-",
      c.reason,
    ]);
  }
  for (const line of table(rows)) println(line);
  printCut(conflicts.length, total, "conflicts");
  return 0;
}
