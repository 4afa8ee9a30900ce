/**
 * The timeline UI in a real headless Chromium against a real Chronicle process: find a
 * file, compare two iterations, roll back a snapshot and see the disk change, see a write
 * on disk arrive in the live timeline, restore to a point in time, and be refused a write
 * without the token. Screenshots go to a temp folder (printed).
 */
import { assert, assertEquals } from "../_helpers/assert.ts";
import { launchChromium, type Page } from "../_helpers/chromium.ts";
import { controlJson } from "../_helpers/control_socket.ts";
import { freePort, runChronicle, spawnChronicle } from "../_helpers/processes.ts";
import { put, putAtomic, readText, withTempDir } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";

/** A 1×1 PNG. */
const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);

Deno.test("the UI in Chromium: find, diff, roll back, live timeline, restore, token", async () => {
  await withTempDir(async (root) => {
    const ws = `${root}/ws`;
    const shots = await Deno.makeTempDir({ prefix: "chronicle-ui-shots-" });
    await put(ws, "notes.md", "# Notes\nfirst line\nv1\n");
    await put(ws, "src/app.ts", 'console.log("hi");\n');
    await put(ws, "img/dot.png", PNG);
    await put(ws, "data.bin", new Uint8Array([0, 1, 2, 3, 255]));
    const httpPort = freePort();
    const daemon = spawnChronicle([ws, "--http", `127.0.0.1:${httpPort}`, "--token", "t0k3n"]);
    const data = `${ws}/.chronicle`;
    const browser = await launchChromium();
    const page = browser.page;
    try {
      await waitFor("Chronicle to be ready", async () => {
        const ready = await controlJson(data, "/ready").catch(() => undefined);
        return ready?.status === 200;
      });
      // In one step: the empty file of a truncate, captured alone, would be an iteration of
      // its own, and the timeline's rows and the file's history are counted below.
      await putAtomic(ws, "notes.md", "# Notes\nfirst line\nv2\n");
      await waitForIterations(data, "notes.md", 2);

      // chronicle ui: a loopback listener, the token in the fragment.
      const ui = await runChronicle(["ui", "-C", ws, "--json"]);
      assertEquals(ui.code, 0, ui.stderr);
      const { url } = JSON.parse(ui.stdout) as { url: string };
      assert(/^http:\/\/127\.0\.0\.1:\d+\/ui\/#token=[0-9a-f]{64}$/.test(url), url);
      await page.goto(url);
      await page.waitFor(
        "the timeline",
        `document.querySelector('#timeline li[data-path="notes.md"]')`,
      );
      assertEquals(await page.evaluate("location.hash"), "", "the token leaves the address bar");
      assert(await page.evaluate("Boolean(sessionStorage.getItem('chronicle-token'))"));
      await page.waitFor("the live feed", "document.querySelector('#live').textContent === 'live'");
      await page.screenshot(`${shots}/timeline.png`);

      // Filters: a path prefix, then an origin nobody wrote with.
      await page.waitFor(
        "the origins in the filter",
        `[...document.querySelectorAll('#filter-origin option')].some((o) => o.value === 'local')`,
      );
      await page.type("#filter-prefix", "src/");
      await page.evaluate("document.querySelector('#timeline-filters').requestSubmit()");
      await page.waitFor(
        "only src/ in the timeline",
        `(() => {
          const rows = [...document.querySelectorAll('#timeline li[data-path]')];
          return rows.length === 1 && rows[0].dataset.path === 'src/app.ts';
        })()`,
      );
      await page.type("#filter-prefix", "");
      await page.evaluate(`(() => {
        const select = document.querySelector('#filter-origin');
        select.append(new Option('nobody', 'nobody'));
        select.value = 'nobody';
        document.querySelector('#timeline-filters').requestSubmit();
      })()`);
      await page.waitFor(
        "an empty timeline for an origin with no iterations",
        `document.querySelectorAll('#timeline li').length === 0 &&
          document.querySelector('#timeline-more').textContent === 'nothing recorded here yet'`,
      );
      await page.evaluate(`(() => {
        document.querySelector('#filter-origin').value = '';
        document.querySelector('#timeline-filters').requestSubmit();
      })()`);
      await page.waitFor(
        "every iteration again",
        // notes.md twice, src/app.ts, img/dot.png, data.bin, and the folders src and img.
        `document.querySelectorAll('#timeline li[data-path]').length === 7`,
      );

      // Files: search, history, two iterations side by side and unified.
      await page.click('#nav button[data-view="files"]');
      await page.type("#file-search", "notes");
      await page.click('#search-results button[data-path="notes.md"]');
      await page.waitFor("two iterations", "document.querySelectorAll('#history tr').length === 3");
      await page.waitFor(
        "the text with line numbers",
        textOf("#file-text").concat(".includes('v2')"),
      );
      await page.click("#diff-split");
      await page.waitFor(
        "the side-by-side diff",
        `document.querySelector('#diff td.del')?.textContent === 'v1' && document.querySelector('#diff td.add')?.textContent === 'v2'`,
      );
      await page.screenshot(`${shots}/diff.png`);
      await page.click("#diff-unified");
      await page.waitFor(
        "the unified diff",
        `[...document.querySelectorAll('#diff span.add')].some((e) => e.textContent === '+v2')`,
      );
      await page.click('#tree button[data-dir="img"]');
      await page.click('#tree button[data-path="img/dot.png"]');
      await page.waitFor("the image", `document.querySelector('#content img')?.naturalWidth === 1`);
      await page.type("#file-search", "data");
      await page.click('#search-results button[data-path="data.bin"]');
      await page.waitFor(
        "binary as size and hash",
        textOf("#file-binary").concat(".includes('sha256')"),
      );

      // Snapshots: roll back with a confirmation, and the file changes on disk.
      const snap = await controlJson(data, "/snapshots", {
        method: "POST",
        body: JSON.stringify({ type: "write_file", payload: { path: "notes.md" } }),
      });
      assertEquals(snap.status, 201);
      const id = (snap.body as { snapshot: { id: string } }).snapshot.id;
      await put(ws, "notes.md", "oops\n");
      await waitForIterations(data, "notes.md", 3);
      await page.click('#nav button[data-view="snapshots"]');
      await page.click(`button[data-rollback="${id}"]`);
      await page.waitFor(
        "the confirmation",
        `document.querySelector('#snapshot-detail')?.textContent.includes('notes.md')`,
      );
      await page.screenshot(`${shots}/rollback.png`);
      await page.click("#confirm-rollback");
      await waitFor(
        "notes.md rolled back on disk",
        async () => await readText(`${ws}/notes.md`) === "# Notes\nfirst line\nv2\n",
      );
      await page.waitFor(
        "the rollback's message",
        textOf("#message").concat(".startsWith('Rolled back')"),
      );

      // Live timeline: a write on disk shows up without a reload.
      await page.click('#nav button[data-view="timeline"]');
      // In one step: captured empty first, live.txt would be in the moment picked below.
      await putAtomic(ws, "live.txt", "written while watching\n");
      await page.waitFor(
        "live.txt in the timeline",
        `document.querySelector('#timeline li[data-path="live.txt"]')`,
      );
      await page.screenshot(`${shots}/live.png`);

      // Point in time: pick the moment just before live.txt on the timeline, preview the
      // plan, apply it, live.txt is gone again.
      const liveSeq = await waitForIterations(data, "live.txt", 1);
      await page.click(`#timeline li[data-sequence="${liveSeq - 1}"] button[data-restore]`);
      await page.waitFor(
        "the moment picked",
        `!document.querySelector('#view-restore').hidden && document.querySelector('#moment').value === '${
          liveSeq - 1
        }'`,
      );
      await page.waitFor(
        "the restore plan",
        `document.querySelector('#plan')?.textContent.includes('live.txt')`,
      );
      await page.click("#apply-restore");
      await waitFor(
        "live.txt removed by the restore",
        async () => await readText(`${ws}/live.txt`) === undefined,
      );

      // Without the token (the --http listener, another origin, no token in its tab).
      await page.goto(`http://127.0.0.1:${httpPort}/ui/`);
      await page.waitFor(
        "the timeline over --http",
        `document.querySelector('#timeline li[data-path="notes.md"]')`,
      );
      await put(ws, "notes.md", "changed again\n");
      await waitForIterations(data, "notes.md", 5);
      await page.click('#nav button[data-view="snapshots"]');
      await page.click(`button[data-rollback="${id}"]`);
      await page.click("#confirm-rollback");
      await page.waitFor("the refusal", textOf("#message.error").concat(".includes('Refused')"));
      await page.screenshot(`${shots}/refused.png`);
      assertEquals(await readText(`${ws}/notes.md`), "changed again\n", "nothing written");

      const expected = (e: string) => e.includes("status of 401") && e.includes("/rollback");
      assertEquals(
        page.errors().filter((e) => !expected(e)),
        [],
        "no script errors or CSP refusals",
      );
      console.log(`screenshots in ${shots}`);
    } finally {
      await browser.close();
      await daemon.stop();
    }
  });
});

function textOf(selector: string): string {
  return `(document.querySelector(${JSON.stringify(selector)})?.textContent ?? '')`;
}

/** Waits until `path` has `count` iterations; returns the sequence of the last. */
async function waitForIterations(data: string, path: string, count: number): Promise<number> {
  return await waitFor(`${path} to have ${count} iterations`, async () => {
    const history = await controlJson(data, `/files/${path}/history`);
    const list = history.body as Array<{ sequence: number }> | undefined;
    return Array.isArray(list) && list.length >= count ? list.at(-1)!.sequence : 0;
  });
}

export type { Page };
