import { Hono } from "hono";
import type { Routes } from "../net/mod.ts";
import { UI_ASSETS } from "./assets/bundle.ts";

/**
 * The Content-Security-Policy of every UI response: only this origin's script and style,
 * no inline script, no plugins, no framing, images from this origin or the page's own
 * blobs (content fetched with the token), connections to this origin only.
 */
export const CONTENT_SECURITY_POLICY: string = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Headers every UI asset carries. */
export const UI_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cache-control": "no-cache",
};

const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">` +
  `<circle cx="8" cy="8" r="7" fill="#2f5fd0"/><path d="M8 4v4l3 2" stroke="#fff" fill="none"/></svg>`;

const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
};

/** Each asset's address under `/ui/`, with its body and type (the page is `/ui/` itself). */
const ASSETS: Record<string, [string, string]> = {
  "/ui/favicon.svg": [FAVICON, "image/svg+xml"],
  ...Object.fromEntries(
    Object.entries(UI_ASSETS).map(([name, body]) => [
      name === "index.html" ? "/ui/" : `/ui/${name}`,
      [body, TYPES[name.slice(name.lastIndexOf(".") + 1)] ?? "application/octet-stream"],
    ]),
  ),
};

/** Whether `path` is one of the UI's static assets (served without a token). */
export function isUiAsset(path: string): boolean {
  return path === "/ui" || path in ASSETS;
}

/**
 * The UI's page, script and style, built into the program (`assets/bundle.ts`), under
 * `/ui/` with a strict Content-Security-Policy; `/ui` redirects to `/ui/`.
 *
 * @returns The routes, to mount at `/`.
 */
export function uiStaticRoutes(): Routes {
  const app = new Hono();
  app.get("/ui", (c) => c.redirect("/ui/", 301));
  for (const [path, [body, type]] of Object.entries(ASSETS)) {
    app.get(path, () => new Response(body, { headers: { ...UI_HEADERS, "content-type": type } }));
  }
  return app;
}
