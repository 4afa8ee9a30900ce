/**
 * Small concurrency tools shared by the workspace, replication and checkpoints: a serial
 * queue, bounded parallel work, and the injectable clock drivers run on.
 *
 * @module
 */
export { SerialQueue } from "./serial_queue.ts";
export { forEachLimited, TaskLimiter } from "./limit.ts";
export { type Clock, SYSTEM_CLOCK, type Timers } from "./clock.ts";
