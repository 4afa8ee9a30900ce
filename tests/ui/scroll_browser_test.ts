/**
 * Long lists in Chromium, a page at a time: the timeline loads older iterations as it is
 * scrolled (100 a page), and a folder of more than 200 files shows its first page with a
 * "more…" that loads the rest.
 */
import { assertEquals } from "../_helpers/assert.ts";
import { launchChromium } from "../_helpers/chromium.ts";
import { controlJson } from "../_helpers/control_socket.ts";
import { freePort, spawnChronicle } from "../_helpers/processes.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";

const FILES = 250;

Deno.test("the UI in Chromium: the timeline pages in as it scrolls; a large folder pages in on more…", async () => {
  await withTempDir(async (root) => {
    const ws = `${root}/ws`;
    await Deno.mkdir(`${ws}/many`, { recursive: true });
    for (let i = 0; i < FILES; i++) {
      await Deno.writeTextFile(`${ws}/many/f${String(i).padStart(3, "0")}.txt`, `${i}\n`);
    }
    const port = freePort();
    const daemon = spawnChronicle([ws, "--http", `127.0.0.1:${port}`, "--token", "t0k3n"]);
    const browser = await launchChromium();
    const page = browser.page;
    try {
      // Every recorded iteration, oldest first (files, and anything else the store records).
      const recorded = await waitFor("every file recorded", async () => {
        const changes = await controlJson(`${ws}/.chronicle`, "/changes?since=0&limit=5000")
          .catch(() => undefined);
        const list = (changes?.body as { changes?: { path: string; sequence: number }[] })
          ?.changes;
        const files = list?.filter((change) => change.path.startsWith("many/")).length ?? 0;
        return files === FILES ? list!.map((change) => change.sequence) : undefined;
      });
      await page.goto(`http://127.0.0.1:${port}/ui/`);
      await page.waitFor(
        "the first page",
        `document.querySelectorAll('#timeline li[data-path]').length >= 100`,
      );
      const rows = "document.querySelectorAll('#timeline li[data-path]').length";
      const first = await page.evaluate<number>(rows);
      assertEquals(first < recorded.length, true, "a page at a time, not everything at once");
      // Scrolled to the bottom again and again, it reaches the first iteration.
      await page.waitFor(
        "every iteration after scrolling",
        `(() => {
          scrollTo(0, document.body.scrollHeight);
          return ${rows} === ${recorded.length} &&
            document.querySelector('#timeline-more').textContent === 'the beginning';
        })()`,
      ).catch(async (error) => {
        const seen = await page.evaluate(
          `[${rows}, document.querySelector('#timeline-more').textContent, document.querySelector('#message').textContent]`,
        );
        throw new Error(`${error.message}; rows, end, message: ${JSON.stringify(seen)}`);
      });
      const sequences = await page.evaluate<number[]>(
        "[...document.querySelectorAll('#timeline li[data-path]')].map((li) => Number(li.dataset.sequence))",
      );
      assertEquals(sequences, recorded.toReversed(), "newest first, each once");

      await page.click('#nav button[data-view="files"]');
      await page.click('#tree button[data-dir="many"]');
      const listed = `document.querySelectorAll('#tree li button[data-path^="many/"]').length`;
      await page.waitFor("the folder's first page", `${listed} === 200`);
      await page.evaluate(
        `[...document.querySelectorAll('#tree button')].find((b) => b.textContent === 'more…').click()`,
      );
      await page.waitFor("the rest of the folder", `${listed} === ${FILES}`);
      assertEquals(page.errors().filter((e) => !e.includes("favicon")), []);
    } finally {
      await browser.close();
      await daemon.stop();
    }
  });
});
