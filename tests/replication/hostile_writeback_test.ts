/**
 * A hostile replica against a real master (issue #16 items 1, 2 and 11): raw WriteBack
 * frames over the master's Unix socket that try to follow links out of the workspace,
 * plant escaping links, set setuid bits or rewrite `.chronicleignore`; and rejected
 * write-backs kept and listed on the master.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { sha256Hex } from "../../lib/cas/mod.ts";
import { replicationRoutes } from "../../lib/daemon/replication_routes.ts";
import { lstatOrNullSync } from "../../lib/disk/mod.ts";
import { type MasterHandle, startMaster } from "../../lib/replication/mod.ts";
import { Workspace } from "../../lib/workspace/mod.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { fileMode, HostileReplica, LINK_MODE } from "./_hostile_replica.ts";

interface Fixture {
  root: string;
  outside: string;
  workspace: Workspace;
  evil: HostileReplica;
  master: MasterHandle;
  /** The master's latest sequence (what an honest replica would claim to have seen). */
  seen: () => number;
}

/** A master on `base/ws` with a hostile replica connected; `base/outside/file` is the victim. */
function withMaster(
  fn: (fixture: Fixture) => Promise<void>,
  prepare: (root: string) => Promise<void> = () => Promise.resolve(),
): Promise<void> {
  return withTempDir(async (base) => {
    const root = `${base}/ws`;
    const outside = `${base}/outside`;
    await Deno.mkdir(root);
    await Deno.mkdir(outside);
    await Deno.writeTextFile(`${outside}/file`, "outside");
    await Deno.chmod(`${outside}/file`, 0o644);
    await Deno.writeTextFile(`${root}/a.txt`, "a");
    await prepare(root);
    const workspace = await Workspace.open({ root });
    await workspace.scan();
    const socket = `${base}/m.sock`;
    const master = await startMaster({ workspace, socketPath: socket });
    const evil = await HostileReplica.connect(socket, "evil-sandbox");
    try {
      await fn({ root, outside, workspace, evil, master, seen: () => workspace.store.sequence() });
    } finally {
      evil.close();
      await master.close();
      await workspace.close();
    }
  });
}

const modeOf = (path: string) => (Deno.lstatSync(path).mode ?? 0) & 0o7777;

Deno.test("hostile replica, item 1: a chmod of a link is refused and never reaches the file it points at", () =>
  withMaster(
    async ({ root, outside, workspace, evil, seen }) => {
      const before = workspace.store.sequence();
      const [reason] = await evil.writeBack([
        evil.entry({
          path: "victim_link",
          operation: { type: "Chmod" },
          permissions: fileMode(0o777),
        }, seen()),
      ]);
      assert.match(reason!, /^forbidden: .*symbolic link/);
      assert.equal(modeOf(`${outside}/file`), 0o644, "the outside file keeps its mode");
      assert.equal(Deno.readLinkSync(`${root}/victim_link`), `${root}/../outside/file`);
      assert.equal(workspace.store.sequence(), before, "nothing recorded");
    },
    // The agent host's own link (trusted, recorded as found), which a sandbox then targets.
    async (root) => await Deno.symlink(`${root}/../outside/file`, `${root}/victim_link`),
  ));

Deno.test("hostile replica, item 1: writing a link out of the workspace then chmod-ing it is refused at both steps", () =>
  withMaster(async ({ root, outside, evil, seen }) => {
    const reasons = await evil.writeBack([
      evil.entry(
        { path: "victim_link", content: `${outside}/file`, permissions: LINK_MODE },
        seen(),
      ),
      evil.entry({ path: "victim_link", operation: { type: "Chmod" }, permissions: 0o777 }, seen()),
    ]);
    assert.match(reasons[0]!, /^forbidden: .*absolute/);
    // Nothing there to change: refused as well, and the outside file is untouched.
    assert.notEqual(reasons[1], "");
    assert.equal(lstatOrNullSync(`${root}/victim_link`), null, "never made");
    assert.equal(modeOf(`${outside}/file`), 0o644);
  }));

Deno.test("hostile replica, item 2: link targets must be relative and stay inside the workspace", async (t) => {
  await withMaster(async ({ root, workspace, evil, seen }) => {
    const cases = [
      {
        description: "absolute target",
        path: "l1",
        target: "/etc",
        expected: /^forbidden: .*absolute/,
      },
      {
        description: "climbing out",
        path: "l2",
        target: "../outside/file",
        expected: /^forbidden: .*leaves/,
      },
      {
        description: "climbing out from a folder",
        path: "d/l3",
        target: "../../x",
        expected: /^forbidden/,
      },
      {
        description: "out and back in",
        path: "l4",
        target: "a/../../ws/a.txt",
        expected: /^forbidden/,
      },
      { description: "a sibling", path: "d/l5", target: "../a.txt", expected: /^$/ },
      { description: "the root itself", path: "l6", target: ".", expected: /^$/ },
    ];
    for (const { description, path, target, expected } of cases) {
      await t.step(description, async () => {
        const [reason] = await evil.writeBack([
          evil.entry({ path, content: target, permissions: LINK_MODE }, seen()),
        ]);
        assert.match(reason!, expected);
        if (reason === "") assert.equal(Deno.readLinkSync(`${root}/${path}`), target);
        else assert.equal(workspace.store.latest(path), undefined, "nothing recorded");
      });
    }
    await t.step(
      "a link whose target came earlier as a file's content (no bytes sent)",
      async () => {
        const [stored] = await evil.writeBack([
          evil.entry({ path: "payload.txt", content: "/etc/passwd" }, seen()),
        ]);
        assert.equal(stored, "");
        const entry = evil.entry(
          { path: "l7", content: "/etc/passwd", permissions: LINK_MODE },
          seen(),
        );
        const [reason] = await evil.writeBack([{ ...entry, content_bytes: null }]);
        assert.match(reason!, /^forbidden: .*absolute/);
        assert.equal(workspace.store.latest("l7"), undefined);
      },
    );
  });
});

Deno.test("hostile replica, item 2: setuid, setgid and sticky bits are cleared from write-backs", async (t) => {
  await withMaster(async ({ root, workspace, evil, seen }) => {
    await t.step("a write with 0o104755", async () => {
      const [reason] = await evil.writeBack([
        evil.entry({ path: "s.sh", content: "#!/bin/sh\n", permissions: 0o104755 }, seen()),
      ]);
      assert.equal(reason, "");
      assert.equal(modeOf(`${root}/s.sh`), 0o755);
      assert.equal(workspace.store.latest("s.sh")!.mode, fileMode(0o755));
    });
    await t.step("a chmod to 0o7777", async () => {
      const [reason] = await evil.writeBack([
        evil.entry({ path: "s.sh", operation: { type: "Chmod" }, permissions: 0o107777 }, seen()),
      ]);
      assert.equal(reason, "");
      assert.equal(modeOf(`${root}/s.sh`), 0o777);
    });
    await t.step("a rename with 0o2755", async () => {
      const [reason] = await evil.writeBack([
        evil.entry({
          path: "s.sh",
          operation: { type: "Rename", new_path: "t.sh" },
          permissions: 0o102755,
        }, seen()),
      ]);
      assert.equal(reason, "");
      assert.equal(modeOf(`${root}/t.sh`), 0o755);
    });
  });
});

Deno.test("hostile replica, item 2: .chronicleignore from a sandbox never changes the master's policy", () =>
  withTempDir(async (base) => {
    const root = `${base}/ws`;
    await Deno.mkdir(root);
    await Deno.writeTextFile(`${root}/.chronicleignore`, "*.log\n");
    await Deno.writeTextFile(`${root}/a.txt`, "a");
    let workspace = await Workspace.open({ root });
    await workspace.scan();
    const socket = `${base}/m.sock`;
    const master = await startMaster({ workspace, socketPath: socket });
    const evil = await HostileReplica.connect(socket, "evil-sandbox");
    try {
      const seen = workspace.store.sequence();
      const reasons = await evil.writeBack([
        evil.entry({ path: ".chronicleignore", content: "*.secret\n*.txt\n" }, seen),
        evil.entry({ path: ".chronicleignore", operation: { type: "Delete" } }, seen),
        evil.entry(
          { path: "a.txt", operation: { type: "Rename", new_path: ".chronicleignore" } },
          seen,
        ),
        evil.entry(
          { path: ".chronicleignore", operation: { type: "Chmod" }, permissions: 0o600 },
          seen,
        ),
      ]);
      for (const reason of reasons) assert.match(reason, /^forbidden: .*control file/);
      assert.equal(Deno.readTextFileSync(`${root}/.chronicleignore`), "*.log\n");
    } finally {
      evil.close();
      await master.close();
      await workspace.close();
    }
    // After a restart the master still records what the sandbox wanted hidden.
    workspace = await Workspace.open({ root });
    try {
      await Deno.writeTextFile(`${root}/keys.secret`, "s");
      await workspace.scan();
      assert.ok(workspace.store.latest("keys.secret"), "still recorded after a restart");
      assert.equal(workspace.store.latest("a.txt")?.deleted, false);
    } finally {
      await workspace.close();
    }
  }));

Deno.test("hostile replica, item 11: a rejected write-back is kept on the master and listed by REST and CLI", () =>
  withMaster(async ({ root, workspace, evil, master }) => {
    await workspace.writeBytes("a.txt", new TextEncoder().encode("the agent's"));
    const [reason] = await evil.writeBack([
      evil.entry({ path: "a.txt", content: "the sandbox's", seen: 0 }, 0),
    ]);
    assert.match(reason!, /^conflict: /);
    assert.equal(Deno.readTextFileSync(`${root}/a.txt`), "the agent's");
    const hash = sha256Hex(new TextEncoder().encode("the sandbox's"));
    assert.equal(new TextDecoder().decode(await workspace.cas.readBytes(hash)), "the sandbox's");

    const app = replicationRoutes(() => ({ kind: "master", master }));
    const listed = await (await app.request("/conflicts")).json();
    assert.equal(listed.conflicts.length, 1);
    const [row] = listed.conflicts;
    assert.equal(row.path, "a.txt");
    assert.equal(row.sandboxId, "evil-sandbox");
    assert.equal(row.keptHash, hash);
    assert.match(row.reason, /^conflict: /);
    assert.ok(row.createdMs > 0);

    const main = fileURLToPath(new URL("../../main.ts", import.meta.url));
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", main, "conflicts", "-C", root, "--json"],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(output.success, new TextDecoder().decode(output.stderr));
    const cli = JSON.parse(new TextDecoder().decode(output.stdout));
    assert.equal(cli.conflicts[0].kept_hash, hash); // --json keys are snake_case
    assert.equal(cli.conflicts[0].sandbox_id, "evil-sandbox");
  }));
