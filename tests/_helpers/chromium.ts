/**
 * A real headless Chromium driven over the DevTools protocol (raw CDP over Deno's
 * WebSocket: no npm driver needed). Launches Debian's `/usr/bin/chromium` with a fresh
 * profile; fails loudly when it is missing (`.ci/run` installs it).
 *
 * @module
 */
import { waitFor } from "./wait_for.ts";

/** Where Debian's `chromium` package puts the browser. */
export const CHROMIUM = Deno.env.get("CHROMIUM_PATH") ?? "/usr/bin/chromium";

/** One browser tab. */
export interface Page {
  /** Sends a DevTools command to the tab and returns its result. */
  send(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** Evaluates `expression` in the page (awaiting a promise) and returns its JSON value. */
  evaluate<T = unknown>(expression: string): Promise<T>;
  /** Navigates and waits for the document to finish loading. */
  goto(url: string): Promise<void>;
  /** Waits until `expression` is truthy in the page; returns its value. */
  waitFor<T = unknown>(what: string, expression: string, timeoutMs?: number): Promise<T>;
  /** Clicks the first element matching `selector` (waits for it). */
  click(selector: string): Promise<void>;
  /** Sets an input's value as typing would, firing `input`. */
  type(selector: string, text: string): Promise<void>;
  /** Saves a PNG of the viewport. */
  screenshot(path: string): Promise<void>;
  /** Uncaught exceptions and console errors seen so far (CSP violations among them). */
  errors(): string[];
}

/** A running browser. */
export interface Browser {
  /** Its first tab. */
  page: Page;
  /** Closes the tab's connection, stops the browser and removes its profile. */
  close(): Promise<void>;
}

/**
 * Starts headless Chromium with a fresh `--user-data-dir` and connects to its first tab.
 *
 * @throws {Error} When Chromium is not installed or does not start.
 */
export async function launchChromium(): Promise<Browser> {
  try {
    await Deno.stat(CHROMIUM);
  } catch {
    throw new Error(
      `Chromium is not installed at "${CHROMIUM}": run "apt-get update && apt-get install -y chromium" (.ci/run does)`,
    );
  }
  const profile = await Deno.makeTempDir({ prefix: "chronicle-chromium-" });
  const process = new Deno.Command(CHROMIUM, {
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
      `--user-data-dir=${profile}`,
      "--remote-debugging-address=127.0.0.1",
      "--remote-debugging-port=0",
      "--window-size=1280,860",
      "about:blank",
    ],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let socket: WebSocket | undefined;
  try {
    const browserUrl = await devtoolsUrl(process.stderr);
    const port = new URL(browserUrl).port;
    const targets = await waitFor("Chromium's first tab", async () => {
      const list = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json() as Array<
        { type: string; webSocketDebuggerUrl: string }
      >;
      return list.find((target) => target.type === "page");
    });
    socket = new WebSocket(targets.webSocketDebuggerUrl);
    await new Promise((resolve, reject) => {
      socket!.onopen = resolve;
      socket!.onerror = () => reject(new Error("Could not connect to Chromium's tab"));
    });
    const page = cdpPage(socket);
    await page.send("Page.enable");
    await page.send("Runtime.enable");
    await page.send("Log.enable");
    await page.send("Emulation.setDeviceMetricsOverride", {
      width: 1280,
      height: 860,
      deviceScaleFactor: 1,
      mobile: false,
    });
    const opened = socket;
    return {
      page,
      close: async () => {
        opened.close();
        try {
          process.kill("SIGTERM");
        } catch { /* gone */ }
        await process.status;
        await Deno.remove(profile, { recursive: true }).catch(() => undefined);
      },
    };
  } catch (error) {
    socket?.close();
    try {
      process.kill("SIGKILL");
    } catch { /* gone */ }
    await process.status;
    await Deno.remove(profile, { recursive: true }).catch(() => undefined);
    throw error;
  }
}

/** Reads Chromium's stderr until it prints its DevTools address; keeps draining after. */
async function devtoolsUrl(stderr: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stderr.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
    const match = /DevTools listening on (ws:\/\/\S+)/.exec(text);
    if (match) {
      // Keep reading so the browser never blocks on a full pipe.
      void (async () => {
        try {
          while (!(await reader.read()).done) { /* drain */ }
        } catch { /* closed */ }
      })();
      return match[1]!;
    }
  }
  throw new Error(`Chromium did not start: ${text.slice(-2000)}`);
}

function cdpPage(socket: WebSocket): Page {
  let nextId = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const errors: string[] = [];
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data as string);
    if (message.id !== undefined) {
      const waiter = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) waiter?.reject(new Error(`${message.error.message}`));
      else waiter?.resolve(message.result);
    } else if (message.method === "Runtime.exceptionThrown") {
      errors.push(message.params.exceptionDetails?.exception?.description ?? "exception");
    } else if (message.method === "Log.entryAdded" && message.params.entry.level === "error") {
      const entry = message.params.entry;
      errors.push(`${entry.text}${entry.url ? ` (${entry.url})` : ""}`);
    }
  };
  const send = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      socket.send(JSON.stringify({ id, method, params }));
    });
  const evaluate = async <T>(expression: string): Promise<T> => {
    const result = await send("Runtime.evaluate", {
      expression,
      awaitPromise: true,
      returnByValue: true,
    }) as { result: { value?: unknown }; exceptionDetails?: { text: string } };
    if (result.exceptionDetails) {
      throw new Error(`In the page: ${JSON.stringify(result.exceptionDetails)}`);
    }
    return result.result.value as T;
  };
  const page: Page = {
    send,
    evaluate,
    async goto(url) {
      const target = new URL(url);
      target.hash = "";
      await send("Page.navigate", { url });
      // The new document, not the one navigated away from: compare the address too.
      await page.waitFor(
        `${url} to load`,
        `document.readyState === 'complete' && location.href.split('#')[0] === ${
          JSON.stringify(target.href)
        }`,
      );
    },
    waitFor: <T>(what: string, expression: string, timeoutMs = 20_000) =>
      waitFor(what, () => evaluate<T>(expression), { timeoutMs, intervalMs: 25 }) as Promise<T>,
    async click(selector) {
      const found = JSON.stringify(selector);
      await page.waitFor(`${selector} to appear`, `Boolean(document.querySelector(${found}))`);
      await evaluate(`document.querySelector(${found}).click()`);
    },
    async type(selector, text) {
      const found = JSON.stringify(selector);
      await page.waitFor(`${selector} to appear`, `Boolean(document.querySelector(${found}))`);
      await evaluate(
        `(() => { const e = document.querySelector(${found}); e.focus(); e.value = ${
          JSON.stringify(text)
        }; e.dispatchEvent(new Event("input", { bubbles: true })); })()`,
      );
    },
    async screenshot(path) {
      const shot = await send("Page.captureScreenshot", { format: "png" }) as { data: string };
      await Deno.writeFile(path, Uint8Array.from(atob(shot.data), (c) => c.charCodeAt(0)));
    },
    errors: () => [...errors],
  };
  return page;
}
