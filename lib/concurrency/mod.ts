/**
 * Small concurrency tools shared by the workspace, replication and checkpoints: a serial
 * queue, bounded parallel work, the injectable clock drivers run on, and a yield to the
 * event loop for long loops.
 *
 * @module
 */
export { SerialQueue } from "./serial_queue.ts";
export { forEachLimited, TaskLimiter } from "./limit.ts";
export { type Clock, SYSTEM_CLOCK, type Timers } from "./clock.ts";
export { nextTurn, Pacer } from "./next_turn.ts";
export { sharedWork } from "./shared_work.ts";
