/**
 * The Replicas view in Chromium: a master with a connected sandbox shows the sandbox,
 * its acked sequence and lag; the sandbox's own UI shows its master and its state.
 */
import { assertEquals } from "../_helpers/assert.ts";
import { launchChromium } from "../_helpers/chromium.ts";
import { controlJson } from "../_helpers/control_socket.ts";
import { runChronicle, spawnChronicle } from "../_helpers/processes.ts";
import { put, withTempDir } from "../_helpers/temp_dir.ts";
import { waitFor } from "../_helpers/wait_for.ts";

Deno.test("the UI in Chromium: replicas with acked sequence and lag, on the master and the sandbox", async () => {
  await withTempDir(async (root) => {
    const agent = `${root}/agent`;
    const sandbox = `${root}/sandbox`;
    await put(agent, "a.txt", "from the agent\n");
    await Deno.mkdir(sandbox);
    const master = spawnChronicle([agent, "--replication"]);
    const socket = `${agent}/.chronicle/chronicle.sock`;
    await waitFor("the master's socket", () => Deno.stat(socket).then(() => true, () => false));
    const replica = spawnChronicle([sandbox, "--connect", socket, "--sandbox-id", "sb-ui-test"]);
    const browser = await launchChromium();
    const page = browser.page;
    try {
      await waitFor("the sandbox to catch up", async () => {
        const ready = await controlJson(`${sandbox}/.chronicle`, "/ready").catch(() => undefined);
        return ready?.status === 200;
      });
      const ui = await runChronicle(["ui", "-C", agent]);
      assertEquals(ui.code, 0, ui.stderr);
      await page.goto(ui.stdout.trim());
      await page.click('#nav button[data-view="replicas"]');
      await page.waitFor(
        "the sandbox in the master's list",
        `[...document.querySelectorAll('#replicas td')].some((td) => td.textContent === 'sb-ui-test')`,
      );
      // sandbox, connected, acked sequence, lag: the view refreshes itself.
      const sequence = (await controlJson(`${agent}/.chronicle`, "/health")).body as {
        sequence: number;
      };
      await page.waitFor(
        "the sandbox connected, acked up to the master, lag 0",
        `[...document.querySelectorAll('#replicas tr')].some((tr) => {
          const cells = [...tr.children].map((td) => td.textContent);
          return cells[0] === 'sb-ui-test' && cells[1] === 'yes' &&
            Number(cells[2]) >= ${sequence.sequence} && cells[3] === '0';
        })`,
      );
      const sandboxUi = await runChronicle(["ui", "-C", sandbox]);
      assertEquals(sandboxUi.code, 0, sandboxUi.stderr);
      await page.goto(sandboxUi.stdout.trim());
      await page.click('#nav button[data-view="replicas"]');
      await page.waitFor(
        "the sandbox's own state",
        `document.querySelector('#view-replicas')?.textContent.includes('Replica sb-ui-test')`,
      );
      await page.waitFor(
        "no conflicts",
        `document.querySelector('#view-replicas')?.textContent.includes('No conflicts.')`,
      );
      assertEquals(page.errors().filter((e) => !e.includes("favicon")), []);
    } finally {
      await browser.close();
      await replica.stop();
      await master.stop();
    }
  });
});
