/**
 * The live feed lets go of its connection when the page is left: a browser opens only six
 * connections to one host over HTTP/1.1, so feeds kept open by pages navigated away from
 * (or held in the back/forward cache) would stall the seventh load until they time out.
 */
import { assertEquals } from "../_helpers/assert.ts";
import { launchChromium } from "../_helpers/chromium.ts";
import { controlJson } from "../_helpers/control_socket.ts";
import { freePort, spawnChronicle } from "../_helpers/processes.ts";
import { put, withTempDir } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";

Deno.test("the UI in Chromium: ten loads in a row each go live (a left page closes its feed)", async () => {
  await withTempDir(async (root) => {
    const ws = `${root}/ws`;
    await put(ws, "a.txt", "a\n");
    const port = freePort();
    const daemon = spawnChronicle([ws, "--http", `127.0.0.1:${port}`, "--token", "t0k3n"]);
    const browser = await launchChromium();
    const page = browser.page;
    try {
      await waitFor("Chronicle to be ready", async () => {
        const ready = await controlJson(`${ws}/.chronicle`, "/ready").catch(() => undefined);
        return ready?.status === 200;
      });
      for (let load = 1; load <= 10; load++) {
        // A stalled connection holds the navigation itself, so the whole load has a
        // deadline: far below the minute a stall lasts, far above a slow machine's load.
        await withDeadline(`load ${load} to show the timeline and go live`, 20_000, async () => {
          await page.goto("about:blank");
          await page.goto(`http://127.0.0.1:${port}/ui/`);
          await page.waitFor(
            `load ${load} to go live`,
            `document.querySelector('#timeline li[data-path="a.txt"]') &&
              document.querySelector('#live').textContent === 'live'`,
          );
        });
      }
      assertEquals(page.errors().filter((e) => !e.includes("favicon")), []);
    } finally {
      await browser.close();
      await daemon.stop();
    }
  });
});

async function withDeadline(what: string, ms: number, work: () => Promise<void>): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Timed out waiting for ${what}`)), ms);
  });
  try {
    await Promise.race([work(), deadline]);
  } finally {
    clearTimeout(timer);
  }
}
