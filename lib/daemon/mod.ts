/**
 * The long-running Chronicle process: capture, REST, replication, graceful shutdown.
 *
 * @module
 */
export { type DaemonRole, roleOf, runDaemon } from "./run_daemon.ts";
export { VERSION } from "./version.ts";
export {
  PROCESS_LOCK_FILE,
  ProcessLock,
  processLockHeld,
  WorkspaceBusyError,
} from "./process_lock.ts";
