import { PROBLEMS_KEPT } from "../replication/mod.ts";
import { Store } from "../store/mod.ts";
import type { WorkspaceLayout } from "../workspace/mod.ts";
import { controlRequest } from "./control_client.ts";
import { LOCATE_ARGS, locateFromArgs } from "./locate_workspace.ts";
import {
  formatBytes,
  formatDuration,
  formatTime,
  printJson,
  println,
  snakeCaseKeys,
  table,
} from "./output.ts";
import { parseCommandArgs } from "./parse_command_args.ts";

/**
 * `chronicle status [--json]`: for a running Chronicle, its pid, uptime, role, sequence,
 * replicas (acked sequence, lag) or master, pending write-backs and conflicts; otherwise
 * what the store holds. `--json` keys are snake_case, times UTC.
 *
 * @param args The arguments after `status`.
 * @returns 0.
 */
export async function statusCommand(args: string[]): Promise<number> {
  const { values } = parseCommandArgs("status", args, {
    ...LOCATE_ARGS,
    json: { type: "boolean" },
  });
  const layout = locateFromArgs(values);
  const live = await controlRequest(layout, "/status");
  const raw = live?.ok ? await live.json() as Record<string, unknown> : offlineStatus(layout);
  const status = statusView(raw);
  if (values.json) printJson(status);
  else for (const line of describeStatus(status, Date.now())) println(line);
  return 0;
}

function offlineStatus(layout: WorkspaceLayout): Record<string, unknown> {
  const store = Store.open(layout.database);
  try {
    return {
      running: false,
      workspace: layout.root,
      role: store.getMeta("role") ?? "standalone",
      sequence: store.sequence(),
      ...store.stats(),
    };
  } finally {
    store.close();
  }
}

/** What `status --json` prints: `/status` in snake_case, epoch-ms times as UTC ISO strings. */
export type StatusView = Record<string, unknown>;

/** The paths not applied that `status` lists (the newest); `--json` has them all. */
const NOT_APPLIED_SHOWN = 10;

/**
 * Turns the running process's `/status` (or the offline summary) into the `status --json`
 * shape: snake_case keys, and `last_seen_ms`/`created_ms` epoch times as UTC ISO strings
 * named without `_ms`.
 *
 * @param raw The status as served.
 * @returns The view.
 */
export function statusView(raw: Record<string, unknown>): StatusView {
  const convert = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(convert);
    if (value === null || typeof value !== "object") return value;
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      const time = /^(last_seen|created|started)_ms$/.exec(key);
      if (time && typeof item === "number") {
        out[time[1] === "started" ? "started_at" : time[1]!] = new Date(item).toISOString();
      } else out[key] = convert(item);
    }
    return out;
  };
  return convert(snakeCaseKeys(raw)) as StatusView;
}

/**
 * The lines `status` prints for people, local times.
 *
 * @param status The view from {@linkcode statusView}.
 * @param now Epoch ms, for ages.
 * @returns The lines.
 */
export function describeStatus(status: StatusView, now: number): string[] {
  const lines: string[] = [];
  const field = (name: string, value: unknown) =>
    lines.push(`${`${name}:`.padEnd(18)}${String(value)}`);
  const running = status.running === true;
  field("workspace", status.workspace);
  if (running) {
    const started = typeof status.started_at === "string" ? Date.parse(status.started_at) : NaN;
    field(
      "chronicle",
      `running, pid ${status.pid ?? "?"}${
        Number.isNaN(started)
          ? ""
          : `, up ${formatDuration(now - started)} (since ${formatTime(started)})`
      }`,
    );
  } else field("chronicle", "not running");
  field("role", status.role);
  field("sequence", status.sequence);
  field(
    "files",
    `${status.paths ?? 0} (${formatBytes(Number(status.bytes ?? 0))}), ${
      status.iterations ?? 0
    } iterations`,
  );
  const replication = status.replication as Record<string, unknown> | null | undefined;
  if (!running || !replication) return lines;
  if (Array.isArray(replication.replicas)) {
    const listeners = [replication.socket_path, replication.ws_address].filter((x) => x);
    field("listening", listeners.length ? listeners.join(", ") : "-");
    const replicas = replication.replicas as Record<string, unknown>[];
    if (replicas.length === 0) {
      field("replicas", "none yet");
      return lines;
    }
    lines.push("");
    const rows = replicas.map((r) => [
      String(r.sandbox_id),
      r.connected ? "yes" : "no",
      String(r.acked_sequence),
      String(r.lag),
      typeof r.last_seen === "string" ? formatTime(Date.parse(r.last_seen)) : "-",
      String(r.remote ?? "-"),
    ]);
    lines.push(...table(rows, ["REPLICA", "CONNECTED", "ACKED", "LAG", "LAST SEEN", "FROM"]));
    return lines;
  }
  const applied = Number(replication.applied_sequence);
  const master = Number(replication.master_sequence);
  field(
    "master",
    `${replication.master} (${
      replication.connected ? "connected" : "disconnected"
    }, ${replication.state})`,
  );
  const heard = replication.connected === true || Number(replication.connections) > 0;
  if (replication.connected !== true) {
    const problem = connectionProblem(replication);
    if (problem) field("connection", problem);
  }
  field("sandbox id", replication.sandbox_id);
  field(
    "applied",
    heard
      ? `${applied} of the master's ${master} (lag ${Math.max(0, master - applied)})`
      : `${applied} (nothing heard from the master yet)`,
  );
  field("pending uploads", replication.pending_write_backs);
  // The list is the newest 100; a Chronicle older than conflict_count has only the list.
  const listed = Array.isArray(replication.conflicts) ? replication.conflicts.length : 0;
  const conflicts = typeof replication.conflict_count === "number"
    ? replication.conflict_count
    : listed;
  // Resolved ones are counted too (a sandbox's are resolved at once): how many wait is said.
  const open = replication.open_conflict_count;
  const waiting = typeof open !== "number" ? "" : open === 0 ? ", none open" : `, ${open} open`;
  field("conflicts", conflicts === 0 ? "none" : `${conflicts}${waiting} (chronicle conflicts)`);
  // Local changes never sent (over the write-back limit), not superseded by a later change
  // of their path: listed with the conflicts. An older Chronicle serves the journal's count.
  const refused = Number(
    replication.open_refused_count ??
      (replication.journal as Record<string, unknown> | undefined)?.refused ?? 0,
  );
  if (refused > 0) field("refused here", `${refused} (chronicle conflicts)`);
  // Master versions that could not be applied here, with why (the newest last).
  const problems = Array.isArray(replication.problems)
    ? replication.problems as { path: string; reason: string }[]
    : [];
  if (problems.length > 0) {
    // Only the newest are kept: a full list says there may be more.
    const full = problems.length >= PROBLEMS_KEPT;
    field("not applied", full ? `${problems.length} or more (the newest kept)` : problems.length);
    for (const { path, reason } of problems.slice(-NOT_APPLIED_SHOWN)) {
      lines.push(`  ${path}: ${reason}`);
    }
  }
  return lines;
}

/**
 * Why a replica has no connection, for people: its last connection error when the running
 * Chronicle reports one (`last_connection_error`), else, when it never connected, where to
 * look; `undefined` when it was connected before (a master gone is the usual reason).
 *
 * @param replication A replica's status, keys in snake_case.
 * @returns The line, or `undefined`.
 */
export function connectionProblem(replication: Record<string, unknown>): string | undefined {
  const error = replication.last_connection_error;
  if (typeof error === "string" && error !== "") return error;
  if (Number(replication.connections) > 0) return undefined;
  return "never connected: is the master running, and is --token the master's? Chronicle's log says why";
}
