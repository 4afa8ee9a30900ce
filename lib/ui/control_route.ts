import { Hono } from "hono";
import type { Routes } from "../net/mod.ts";
import type { UiListener } from "./ui_listener.ts";

/**
 * `POST /ui/listener` on the control socket only (mode 0600, this user): opens the UI's
 * loopback listener if needed and answers `{"url","port"}`, the token in the URL's
 * fragment. `chronicle ui` calls it.
 *
 * @param listener The daemon's UI listener.
 * @returns The route, to mount at `/` on the control socket's app.
 */
export function uiControlRoutes(listener: UiListener): Routes {
  const app = new Hono();
  app.post("/ui/listener", async (c) => c.json(await listener.open()));
  return app;
}
