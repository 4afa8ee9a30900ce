/**
 * The command table: every `chronicle COMMAND`, with what its help, the top-level help and
 * the shell completions show, and the function that runs it. Add a command here and it is
 * dispatched, documented and completed (tests check each answers `--help`).
 *
 * @module
 */
import { checkpointCommand, rehydrateCommand } from "./checkpoint_commands.ts";
import type { Command, CommandSpec } from "./command_spec.ts";
import { completionsCommand, helpCommand } from "./help_command.ts";
import { configCommand } from "./config_command.ts";
import { healthCommand } from "./health_command.ts";
import { mcpCommand } from "./mcp_command.ts";
import {
  catCommand,
  historyCommand,
  logCommand,
  lsCommand,
  restoreCommand,
} from "./history_commands.ts";
import { statusCommand } from "./status_command.ts";
import { conflictsCommand } from "./replication_commands.ts";
import { SNAPSHOT_ACTION_TYPES } from "../snapshot/mod.ts";
import { snapshotCommands } from "./snapshot_commands.ts";
import { stopCommand } from "./stop_command.ts";
import { syncCommand } from "./sync_commands.ts";
import { watchCommand } from "./watch_command.ts";
import { uiCommand } from "./ui_command.ts";
import { wireCommand } from "./wire_command.ts";

export type { Command, CommandSpec } from "./command_spec.ts";

const SNAPSHOT_OPTIONS = [
  ["--config FILE", "config file whose snapshot retention applies"],
  ["--max-snapshots N, --max-age-days N", "snapshot retention for this run"],
  ["--no-snapshots", "off the record: take no snapshot"],
] as const;

/** Every `chronicle COMMAND`, by name, in the order the top-level help lists them. */
export const COMMANDS: Readonly<Record<string, CommandSpec>> = {
  ls: {
    summary: "the tree, now or at a sequence or time",
    usage: ["ls [DIR] [--at SEQ|TIME]"],
    options: [["--at SEQ|TIME", "the tree as it was at that sequence or time (like restore --to)"]],
    locate: true,
    json: true,
    run: lsCommand,
  },
  history: {
    summary: "iterations of PATH: iteration, time, size, hash, origin",
    usage: ["history PATH"],
    locate: true,
    json: true,
    run: historyCommand,
  },
  cat: {
    summary: "content of PATH at iteration N (default latest)",
    usage: ["cat PATH [--at N]"],
    options: [["--at N", "the iteration to print"]],
    locate: true,
    run: catCommand,
  },
  log: {
    summary: "changes across the workspace, newest last (the last 50 by default)",
    usage: ["log [--since SEQ] [--limit N | --all]"],
    options: [
      ["--since SEQ", "only changes after this sequence"],
      ["--limit N", "the last N changes (default 50)"],
      ["--all", "every change"],
    ],
    locate: true,
    json: true,
    run: logCommand,
  },
  restore: {
    summary: "bring back an iteration, or the workspace as it was (--dry-run, --yes)",
    usage: ["restore PATH --at N", "restore --to SEQ|TIME [PATH...] [--dry-run] [--yes]"],
    options: [
      ["--at N", "the iteration of PATH to bring back, as a new iteration"],
      ["--to SEQ|TIME", "the whole workspace (or the PATHs) as it was then"],
      ["--dry-run", "show the plan only"],
      ["-y, --yes", "apply the plan without asking"],
    ],
    locate: true,
    json: true,
    run: restoreCommand,
  },
  status: {
    summary: "pid, uptime, role, sequence, replicas and their lag, write-backs, conflicts",
    usage: ["status"],
    locate: true,
    json: true,
    run: statusCommand,
  },
  stop: {
    summary: "stop the Chronicle running on the workspace (a clean shutdown)",
    usage: ["stop [--timeout SECONDS]"],
    options: [["--timeout SECONDS", "longest to wait for the process to end (default 30)"]],
    locate: true,
    json: true,
    run: stopCommand,
  },
  conflicts: {
    summary: "write-backs the master rejected, with the reason and the kept content",
    usage: ["conflicts [--limit N | --all]"],
    options: [
      ["--limit N", "the newest N of each list (default 1000)"],
      ["--all", "every conflict and refused write"],
    ],
    locate: true,
    json: true,
    run: conflictsCommand,
  },
  sync: {
    summary: "wait for a replica to catch up; local-sync control",
    usage: [
      "sync --wait [--timeout SECONDS]",
      "sync start [DIR] (--connect PATH | --ws-connect URL) [--token T]",
      "sync stop|status",
      "sync resolve PATH --keep local|upstream|merged",
    ],
    options: [
      ["--wait", "return once this replica holds all the master held when asked"],
      ["--timeout SECONDS", "longest --wait waits"],
      ["--connect PATH, --ws-connect URL", "the master a local-sync replica follows"],
      ["--token TOKEN", "the master's token"],
      ["--keep local|upstream|merged", "how resolve settles a conflict"],
    ],
    subcommands: ["start", "stop", "status", "resolve"],
    locate: true,
    json: true,
    run: syncCommand,
  },
  snapshot: {
    summary: "capture what an action is about to change (prints the snapshot id)",
    usage: ["snapshot ACTION_TYPE --path P [--destination D] [--txn ID]"],
    details: `ACTION_TYPE is one of ${SNAPSHOT_ACTION_TYPES.join(", ")}.`,
    subcommands: SNAPSHOT_ACTION_TYPES,
    options: [
      ["--path P", "the path the action changes"],
      ["--destination D", "where a move or copy goes"],
      ["--txn ID", "group the snapshot in a transaction (or CHRONICLE_TXN)"],
      ...SNAPSHOT_OPTIONS,
    ],
    locate: true,
    json: true,
    run: snapshotCommands.snapshot!,
  },
  snapshots: {
    summary: "the retained pre-action snapshots, oldest first",
    usage: ["snapshots [--txn ID] [--limit N]"],
    options: [
      ["--txn ID", "only this transaction's"],
      ["--limit N", "at most N"],
      ...SNAPSHOT_OPTIONS,
    ],
    locate: true,
    json: true,
    run: snapshotCommands.snapshots!,
  },
  diff: {
    summary: "what changed since a snapshot, or a path between two iterations",
    usage: ["diff SNAPSHOT_ID [--patch]", "diff PATH --from N [--to M]"],
    details: "An argument is a path when --from is given, else a snapshot id (or a unique " +
      "prefix). A deletion is compared as empty; binary content is named, not shown.",
    options: [
      [
        "--patch",
        "add a unified diff of each changed text file, the snapshot's content against now",
      ],
      ["--from N", "diff PATH from its iteration N"],
      ["--to M", "to its iteration M (default: the latest)"],
      ...SNAPSHOT_OPTIONS,
    ],
    locate: true,
    json: true,
    run: snapshotCommands.diff!,
  },
  rollback: {
    summary: "bring back what a snapshot captured (itself undoable)",
    usage: ["rollback SNAPSHOT_ID"],
    options: SNAPSHOT_OPTIONS,
    locate: true,
    json: true,
    run: snapshotCommands.rollback!,
  },
  verify: {
    summary: "check the snapshot hash chain (and the content it references)",
    usage: ["verify [--no-content]"],
    options: [
      ["--no-content", "check the chain only, not the stored content"],
      ...SNAPSHOT_OPTIONS,
    ],
    locate: true,
    json: true,
    run: snapshotCommands.verify!,
  },
  txn: {
    summary: "group snapshots into a transaction, committed or rolled back together",
    usage: ["txn begin", "txn commit ID", "txn rollback ID", "txn list", "txn show ID"],
    subcommands: ["begin", "commit", "rollback", "list", "show"],
    options: SNAPSHOT_OPTIONS,
    locate: true,
    json: true,
    run: snapshotCommands.txn!,
  },
  checkpoint: {
    summary: "a consistent copy of the store, to rehydrate elsewhere",
    usage: [
      "checkpoint [--output DIR] [--with-objects]",
      "checkpoint --to s3://BUCKET/PREFIX [--keep N]",
    ],
    options: [
      ["-o, --output DIR", "where the checkpoint goes"],
      ["--with-objects", "copy the CAS objects it needs too"],
      ["--to s3://BUCKET/PREFIX", "checkpoint into the bucket, uploading the content it lacks"],
      ["--keep N", "checkpoints to keep in the bucket (default 10)"],
    ],
    locate: true,
    json: true,
    run: checkpointCommand,
  },
  rehydrate: {
    summary: "install a checkpoint and materialize its workspace",
    usage: [
      "rehydrate --from DIR [-C WORKSPACE] [--force]",
      "rehydrate --from s3://BUCKET/PREFIX [--checkpoint ID] [--eager] [--force]",
    ],
    options: [
      ["--from DIR|s3://BUCKET/PREFIX", "the checkpoint, or the bucket holding checkpoints"],
      ["--checkpoint ID", "which of the bucket's checkpoints (default: the newest)"],
      ["--eager", "fetch every object now instead of when first read"],
      ["--force", "write into a non-empty workspace (replacing what differs) or over a database"],
    ],
    locate: true,
    json: true,
    run: rehydrateCommand,
  },
  config: {
    summary: "the effective configuration (the running process's when there is one)",
    usage: ["config [WORKSPACE] [options]"],
    details: "Takes every option chronicle takes, and shows what a start with them would use.",
    json: true,
    run: (args, role) => configCommand(args, role ? { role } : {}),
  },
  health: {
    summary: "liveness (or readiness) probe for containers",
    usage: ["health [--ready] [--timeout-ms N] [--quiet]"],
    options: [
      ["--ready", "ready: the initial scan (or catch-up) is done"],
      ["--timeout-ms N", "longest to wait for an answer"],
      ["-q, --quiet", "print nothing, only the exit status (bad arguments still say so)"],
      ["-C WORKSPACE, --data-dir DIR", "the workspace or its data folder"],
    ],
    run: (args) => healthCommand(args),
  },
  wire: {
    summary: "framed bincode on stdin to JSON lines and back",
    usage: ["wire decode", "wire encode"],
    subcommands: ["decode", "encode"],
    run: (args) => wireCommand(args),
  },
  watch: {
    summary: "a live tail of iterations as the running Chronicle records them",
    usage: ["watch [--since SEQ] [--path PREFIX] [--origin ORIGIN]"],
    details: "Runs until Ctrl-C, or until Chronicle stops. --json prints one object a line, " +
      "as GET /changes shows an iteration.",
    options: [
      ["--since SEQ", "start after this sequence instead of now"],
      ["--path PREFIX", "only paths that start with PREFIX"],
      ["--origin ORIGIN", "only this origin (local, api, restore, rollback, master, a sandbox id)"],
    ],
    locate: true,
    json: true,
    run: watchCommand,
  },
  mcp: {
    summary: "the MCP server (stdio) of the running Chronicle, for agents",
    usage: ["mcp"],
    details: "Tools for history, diffs, snapshots, rollback and restores, and files at " +
      "iterations as chronicle://files/PATH?iteration=N resources; the same server answers " +
      "POST /mcp on --http (with the token). Client configuration: " +
      '{"mcpServers": {"chronicle": {"command": "./chronicle", "args": ["mcp", "-C", "/path"]}}}',
    locate: true,
    run: mcpCommand,
  },
  ui: {
    summary: "the timeline web UI on a loopback address with a one-time token",
    usage: ["ui [--open]"],
    details: "The address carries a token made for this listener (#token=…): anyone with " +
      "the link can act on the workspace, so do not share it.",
    options: [["--open", "also open it in a browser (xdg-open)"]],
    locate: true,
    json: true,
    run: uiCommand,
  },
  help: {
    summary: "help for a command",
    usage: ["help [COMMAND]"],
    run: (args) => helpCommand(args, COMMANDS),
  },
  completions: {
    summary: "shell completions: source <(chronicle completions bash)",
    usage: ["completions bash|zsh|fish"],
    subcommands: ["bash", "zsh", "fish"],
    run: (args) => completionsCommand(args, COMMANDS),
  },
};

/**
 * The function that runs a command, or `undefined` for a name that is none (inherited
 * members such as `toString` included).
 *
 * @param name What was typed.
 * @returns The command.
 */
export function findCommand(name: string): Command | undefined {
  return Object.hasOwn(COMMANDS, name) ? COMMANDS[name]!.run : undefined;
}
