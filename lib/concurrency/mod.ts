/**
 * Small concurrency tools shared by the workspace, replication and checkpoints: a serial
 * queue, and bounded parallel work.
 *
 * @module
 */
export { SerialQueue } from "./serial_queue.ts";
export { forEachLimited, TaskLimiter } from "./limit.ts";
