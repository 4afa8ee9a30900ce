import { ok, strictEqual } from "node:assert/strict";
import { describeStatus, statusView } from "../../lib/cli/status_command.ts";
import { withUnreachableReplica } from "./_unreachable_replica.ts";

/** More conflicts than a replica's status lists (100). */
const CONFLICTS = 150;

Deno.test("a replica's status counts every conflict, and chronicle status shows that count", async (t) => {
  await withUnreachableReplica(
    "no master in this test",
    async (root, workspace, replica) => {
      const insert = workspace.store.db.prepare(
        `INSERT INTO replica_conflicts (local_seq, path, operation, reason, kept_hash, kept_size,
           kept_mode, created_ms, resolved_ms) VALUES (?, ?, 'write', 'changed on the master',
           NULL, 1, 420, ?, ?)`,
      );
      // Every third one resolved: 100 stay open.
      for (let i = 1; i <= CONFLICTS; i++) {
        insert.run(i, `c${i}.txt`, 1_000 + i, i % 3 === 0 ? 2_000 + i : null);
      }
      const status = replica.status();
      await t.step("status(): the list stays capped, the counts are true", () => {
        strictEqual(status.conflicts.length, 100);
        strictEqual(status.conflictCount, CONFLICTS);
        strictEqual(status.openConflictCount, CONFLICTS - CONFLICTS / 3);
      });
      await t.step("chronicle status shows the count, not the list's length", () => {
        const view = statusView({ running: true, workspace: root, replication: status });
        const lines = describeStatus(view, Date.now());
        ok(
          lines.includes(`conflicts:        ${CONFLICTS}, 100 open (chronicle conflicts)`),
          lines.join("\n"),
        );
        ok(!lines.some((line) => line.startsWith("refused here")), lines.join("\n"));
      });
      await t.step("every conflict resolved: none open, said so", () => {
        const view = statusView({
          running: true,
          workspace: root,
          replication: { ...status, openConflictCount: 0 },
        });
        const lines = describeStatus(view, Date.now());
        ok(
          lines.includes(`conflicts:        ${CONFLICTS}, none open (chronicle conflicts)`),
          lines.join("\n"),
        );
      });
      await t.step("and local changes refused here (over the write-back limit) beside them", () => {
        const view = statusView({
          running: true,
          workspace: root,
          replication: { ...status, openRefusedCount: 2 },
        });
        const lines = describeStatus(view, Date.now());
        ok(lines.includes("refused here:     2 (chronicle conflicts)"), lines.join("\n"));
      });
      await t.step("and master versions not applied here, the newest ten with why", () => {
        const problems = Array.from({ length: 12 }, (_, i) => ({
          path: `p${i}`,
          reason: "a named pipe is there, which is never recorded",
        }));
        const view = statusView({
          running: true,
          workspace: root,
          replication: { ...status, problems },
        });
        const lines = describeStatus(view, Date.now());
        const at = lines.indexOf("not applied:      12");
        ok(at !== -1, lines.join("\n"));
        strictEqual(lines[at + 1], "  p2: a named pipe is there, which is never recorded");
        strictEqual(lines.length, at + 11, lines.join("\n"));
        const full = Array.from({ length: 100 }, (_, i) => ({ path: `q${i}`, reason: "r" }));
        const fullLines = describeStatus(
          statusView({
            running: true,
            workspace: root,
            replication: { ...status, problems: full },
          }),
          Date.now(),
        );
        ok(
          fullLines.includes("not applied:      100 or more (the newest kept)"),
          fullLines.join("\n"),
        );
      });
    },
    "chronicle-status-counts-",
  );
});
