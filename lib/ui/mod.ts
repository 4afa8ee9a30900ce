/**
 * The timeline web UI under `/ui/`: a page with its script and style built into the
 * program, the read models it pages through (`/ui/api/…`, cut on the server so a long
 * history stays fast; the live feed is REST's `GET /events`), and the loopback listener with a
 * one-time token that `chronicle ui` opens.
 *
 * @module
 */
export { type MasterVersion, MAX_VIEW_BYTES, type UiApiDeps, uiApiRoutes } from "./api_routes.ts";
export { BURST_GAP_MS, type BurstInput, markBursts } from "./bursts.ts";
export { type ContentKind, contentKind } from "./content_kind.ts";
export { loopbackHostAllowed } from "./host_check.ts";
export { CONTENT_SECURITY_POLICY, isUiAsset, UI_HEADERS, uiStaticRoutes } from "./static_routes.ts";
export {
  guard,
  type UiListener,
  uiListener,
  type UiListenerInfo,
  type UiListenerOptions,
} from "./ui_listener.ts";
export { uiControlRoutes } from "./control_route.ts";
