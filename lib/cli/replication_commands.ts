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
    // whether a connection is up, and say which it is.
    const status = await controlRequest(layout, "/sync/status")
      .then((r) => r?.ok ? r.json() as Promise<{ connected?: boolean; master?: string }> : null)
      .catch(() => null);
    throw new CliError(
      status?.connected === false
        ? `Not in sync within ${seconds} s: no connection to the master "${status.master}" (this replica holds its sequence ${result.appliedSequence}; the master's last heard was ${result.masterSequence}). Is the master running?`
        : `Not in sync within ${seconds} s: applied ${result.appliedSequence} of the master's ${result.masterSequence}`,
    );
  }
  if (!values.json) println(`in sync at master sequence ${result.masterSequence}`);
  return 0;
}

/**
 * `chronicle conflicts [--json]`: write-backs the master rejected (with the reason and
 * the hash of the content kept in the store) and local writes refused for write-back
 * (too large). Reads the database, so it works whether or not Chronicle is running.
 *
 * @param args The arguments after `conflicts`.
 * @returns The exit code.
 */
export function conflictsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("conflicts", args, {
    ...LOCATE_ARGS,
    json: { type: "boolean" },
  });
  if (positionals.length > 0) throw new UsageError("Usage: chronicle conflicts [--json]");
  const layout = locateFromArgs(values);
  const db = openDatabase(layout.database, { readOnly: true });
  try {
    const tables = new Set(
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all()
        .map((row) => columns(row).text("name")),
    );
    if (tables.has("master_conflicts") && !tables.has("replica_conflicts")) {
      return Promise.resolve(printMasterConflicts(new MasterConflicts(db).list(), values.json));
    }
    if (!tables.has("replica_conflicts")) {
      if (values.json) printJson({ conflicts: [], refused: [] });
      else println("no conflicts (this workspace has never been a master or a replica)");
      return Promise.resolve(0);
    }
    const conflicts = new ConflictLog(db).list();
    const refused = new WriteJournal(db).list("refused");
    if (values.json) {
      printJson({ conflicts, refused });
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
        c.resolution ? `resolved (${c.resolution})` : "unresolved",
        c.keptHash ?? "-",
        c.reason,
      ]);
    }
    for (const r of refused) {
      rows.push([
        formatTime(r.createdMs),
        r.path,
        r.operation,
        "refused here",
        r.hash ?? "-",
        r.reason ?? "",
      ]);
    }
    for (const line of table(rows)) println(line);
    return Promise.resolve(0);
  } finally {
    db.close();
  }
}

/** Prints a master's kept rejections (`chronicle conflicts` on the agent host). */
function printMasterConflicts(conflicts: MasterConflict[], json: boolean | undefined): number {
  if (json) {
    printJson({ conflicts, refused: [] });
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
  return 0;
}
