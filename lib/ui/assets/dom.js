// Shared helpers of the web UI. Plain modern JavaScript, no framework, no build step, no
// HTML parsed from strings (every name shown comes from the workspace, so text is set as text).
// Reads and writes go through fetch with the token as a bearer header, never a cookie.

export const TOKEN_KEY = "chronicle-token";
export const PAGE = 100;
export const BURST_GAP_MS = 30_000;

export let token = readToken();

/** Takes the one-time token from the fragment (never sent to the server) into the tab. */
export function readToken() {
  const match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (match) {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1]));
    history.replaceState(null, "", location.pathname + location.search);
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export async function request(path, init = {}) {
  const headers = new Headers(init.headers);
  if (token) headers.set("authorization", `Bearer ${token}`);
  const response = await fetch(path, { ...init, headers });
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try {
      message = (await response.json()).error.message;
    } catch { /* not a JSON error */ }
    throw new ApiError(response.status, message);
  }
  return response;
}

export const getJson = async (path) => await (await request(path)).json();
export const postJson = async (path, body) =>
  await (await request(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body ?? {}),
  })).json();

/** `h("td", {class: "n"}, "text", child)`: an element, its text set as text. */
export function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) element.addEventListener(key.slice(2), value);
    else if (key === "class") element.className = value;
    else element.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

export const $ = (selector) => document.querySelector(selector);
export const q = (params) =>
  new URLSearchParams(
    Object.entries(params).filter(([, v]) => v !== "" && v !== undefined && v !== null),
  ).toString();
export const time = (ms) => new Date(ms).toLocaleTimeString();
export const dateTime = (ms) => new Date(ms).toLocaleString();
export const size = (n) =>
  n < 1024
    ? `${n} B`
    : n < 1048576
    ? `${(n / 1024).toFixed(1)} KiB`
    : `${(n / 1048576).toFixed(1)} MiB`;
export const api = (path) => `api/${path}`;
export const rest = (path) => `../${path}`;
export const encodePath = (path) => path.split("/").map(encodeURIComponent).join("%2F");

export function say(text, isError = false) {
  const box = $("#message");
  box.hidden = false;
  box.textContent = text;
  box.className = isError ? "error" : "";
}

export function fail(error) {
  if (error instanceof ApiError && error.status === 401) {
    say(
      `Refused: ${error.message}. Writes need the token (open the link "chronicle ui" prints, or enter it above).`,
      true,
    );
  } else say(error instanceof Error ? error.message : String(error), true);
}

// --- header: views and token ------------------------------------------------------------

export const loaders = {};
export function show(view) {
  for (const button of document.querySelectorAll("#nav button")) {
    button.classList.toggle("active", button.dataset.view === view);
  }
  for (const section of document.querySelectorAll(".view")) {
    section.hidden = section.id !== `view-${view}`;
  }
  loaders[view]?.();
}

export function showTokenState() {
  const state = $("#token-state");
  state.textContent = token ? "token set" : "no token";
  state.classList.toggle("on", Boolean(token));
}

/** Lets the person set or clear the token for this tab. */
export function watchTokenForm() {
  $("#token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const input = $("#token-input");
    token = input.value.trim() || null;
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
    input.value = "";
    showTokenState();
    say(token ? "Token set for this tab." : "Token cleared.");
  });
}
