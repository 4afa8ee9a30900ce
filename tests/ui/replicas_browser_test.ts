/**
 * The Replicas view in Chromium: a master with a connected sandbox shows the sandbox,
 * its acked sequence and lag; the sandbox's own UI shows its master and its state.
 */
import { assertEquals } from "../_helpers/assert.ts";
import { launchChromium } from "../_helpers/chromium.ts";
import { controlJson } from "../_helpers/control_socket.ts";
import { runChronicle, spawnChronicle } from "../_helpers/processes.ts";
import { put, putAtomic, readText, withTempDir } from "../_helpers/temp_dir.ts";
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

Deno.test("the UI in Chromium: a sandbox's conflict, settled upstream, its kept content against the master's version", async () => {
  await withTempDir(async (root) => {
    const agent = `${root}/agent`;
    const sandboxes = [`${root}/one`, `${root}/two`];
    await put(agent, "same.txt", "base\n");
    for (const dir of sandboxes) await Deno.mkdir(dir);
    const socket = `${agent}/.chronicle/chronicle.sock`;
    let master = spawnChronicle([agent, "--replication"]);
    await waitFor("the master's socket", () => Deno.stat(socket).then(() => true, () => false));
    const replicas = sandboxes.map((dir, i) =>
      spawnChronicle([dir, "--connect", socket, "--sandbox-id", `sb-${i}`])
    );
    const browser = await launchChromium();
    const page = browser.page;
    try {
      for (const dir of sandboxes) {
        await waitFor(
          `${dir} to hold same.txt`,
          async () => await readText(`${dir}/same.txt`) === "base\n",
        );
      }
      // Both sandboxes write with the same view of the master: one write-back loses.
      await master.stop();
      await Deno.remove(socket).catch(() => {});
      // Each written in one step: a truncate, then a write, can be captured in between on a
      // loaded machine, and that empty version is a second journal entry.
      await putAtomic(sandboxes[0]!, "same.txt", "from one\n");
      await putAtomic(sandboxes[1]!, "same.txt", "from two\n");
      for (const dir of sandboxes) {
        await waitFor(`${dir} to journal its write`, async () => {
          const status = await replicaStatus(dir);
          return status?.journal.pending === 1;
        });
      }
      master = spawnChronicle([agent, "--replication"]);
      const loser = await waitFor("one sandbox to list the conflict", async () => {
        for (const dir of sandboxes) {
          if ((await replicaStatus(dir))?.conflicts.length === 1) return dir;
        }
        return undefined;
      }, { timeoutMs: 60_000 });
      const lost = await readText(`${agent}/same.txt`) === "from one\n" ? "from two" : "from one";
      const won = lost === "from one" ? "from two" : "from one";
      await waitFor(
        "the loser to hold the winner's content",
        async () => await readText(`${loser}/same.txt`) === `${won}\n`,
      );

      const ui = await runChronicle(["ui", "-C", loser]);
      assertEquals(ui.code, 0, ui.stderr);
      await page.goto(ui.stdout.trim());
      await page.click('#nav button[data-view="replicas"]');
      await page.waitFor(
        "the conflict listed",
        `[...document.querySelectorAll('#conflicts td')].some((td) => td.textContent === 'same.txt')`,
      );
      await page.click('button[data-kept-diff="same.txt"]');
      // The kept content against the master's version (here the winner's, which the
      // sandbox took), as the replica knows it from the master.
      await page.waitFor(
        "the master's version against the kept content",
        `document.querySelector('#conflict-diff h2')?.textContent.includes("the master's version (sequence ") &&
          document.querySelector('#conflict-diff td.del')?.textContent === '${won}' &&
          document.querySelector('#conflict-diff td.add')?.textContent === '${lost}'`,
      );
      // The view refreshes itself every 2 s; the diff stays while the conflict is open.
      const refreshes = await page.evaluate<number>("performance.now()");
      await page.waitFor(
        "a refresh later, the diff still shown",
        `performance.now() > ${refreshes + 2500} &&
          document.querySelector('#conflict-diff td.add')?.textContent === '${lost}'`,
      );
      // A sandbox takes the master's version at once: the conflict is settled, no choices.
      assertEquals(
        await page.evaluate(
          `document.querySelector('#conflicts td[data-resolution="same.txt"]').textContent.startsWith('upstream')`,
        ),
        true,
      );
      assertEquals(await page.evaluate("document.querySelectorAll('button[data-keep]').length"), 0);
      assertEquals(page.errors().filter((e) => !e.includes("favicon")), []);
    } finally {
      await browser.close();
      for (const replica of replicas) await replica.stop();
      await master.stop();
    }
  });
});

Deno.test("the UI in Chromium: a local-sync conflict stays open until a resolution is clicked", async () => {
  await withTempDir(async (root) => {
    const agent = `${root}/agent`;
    const local = `${root}/local`;
    await put(agent, "notes.txt", "base\n");
    await Deno.mkdir(local);
    const socket = `${agent}/.chronicle/chronicle.sock`;
    let master = spawnChronicle([agent, "--replication"]);
    await waitFor("the master's socket", () => Deno.stat(socket).then(() => true, () => false));
    const replica = spawnChronicle([local, "--connect", socket, "--local-sync"]);
    const browser = await launchChromium();
    const page = browser.page;
    try {
      await waitFor(
        "notes.txt in the local copy",
        async () => await readText(`${local}/notes.txt`) === "base\n",
      );
      // The agent and the person both edit while the master is down: the master records
      // the agent's edit when it starts again, and refuses the person's older view.
      await master.stop();
      await putAtomic(local, "notes.txt", "my edit\n"); // one step: one journal entry
      await waitFor(
        "the local edit journaled",
        async () => (await replicaStatus(local))?.journal.pending === 1,
      );
      await put(agent, "notes.txt", "agent edit\n");
      master = spawnChronicle([agent, "--replication"]);
      await waitFor(
        "the conflict listed",
        async () => (await replicaStatus(local))?.conflicts.length === 1,
        { timeoutMs: 60_000 },
      );
      assertEquals(await readText(`${local}/notes.txt`), "my edit\n", "the person's file stays");

      const ui = await runChronicle(["ui", "-C", local]);
      assertEquals(ui.code, 0, ui.stderr);
      await page.goto(ui.stdout.trim());
      await page.click('#nav button[data-view="replicas"]');
      await page.waitFor(
        "the open conflict",
        `document.querySelector('#conflicts td[data-resolution="notes.txt"]')?.textContent === 'open'`,
      );
      assertEquals(
        await page.evaluate(
          "[...document.querySelectorAll('button[data-keep]')].map((b) => b.dataset.keep)",
        ),
        ["local", "upstream", "merged"],
        "the resolutions chronicle sync resolve offers",
      );
      await page.click('button[data-keep="upstream"]');
      await page.waitFor(
        "the conflict resolved",
        `document.querySelector('#message')?.textContent === 'Resolved notes.txt: kept upstream.' &&
          document.querySelector('#conflicts td[data-resolution="notes.txt"]')?.textContent.startsWith('upstream')`,
      );
      await waitFor(
        "the master's version on disk",
        async () => await readText(`${local}/notes.txt`) === "agent edit\n",
      );
      assertEquals(page.errors().filter((e) => !e.includes("favicon")), []);
    } finally {
      await browser.close();
      await replica.stop();
      await master.stop();
    }
  });
});

interface ReplicaView {
  journal: { pending: number };
  conflicts: unknown[];
}

/** The sandbox's replication status, or `undefined` while it does not answer. */
async function replicaStatus(dir: string): Promise<ReplicaView | undefined> {
  const status = await controlJson(`${dir}/.chronicle`, "/status").catch(() => undefined);
  return (status?.body as { replication?: ReplicaView } | undefined)?.replication;
}
