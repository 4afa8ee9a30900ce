/**
 * Chronicle's REST API on `Deno.serve`: route groups, one error format, one write rule.
 *
 * @module
 */
export { type AppOptions, createApp } from "./app.ts";
export { contentRoutes } from "./content_routes.ts";
export { errorResponse, HttpError, type HttpErrorStatus } from "./errors.ts";
export {
  type ChangeEntry,
  changeEntry,
  filesRoutes,
  type HistoryEntry,
  historyEntry,
  MAX_PUT_BYTES,
} from "./files_routes.ts";
export {
  EVENT_BATCH,
  type EventFilter,
  eventsRoutes,
  type EventsRoutesOptions,
  formatEvent,
  matchesFilter,
} from "./events_routes.ts";
export { MAX_RESTORE_PATHS, restoreRoutes } from "./restore_routes.ts";
export { snapshotRoutes, type SnapshotRoutesDeps } from "./snapshot_routes.ts";
export { type FileRoute, parseFileRoute } from "./file_route_path.ts";
