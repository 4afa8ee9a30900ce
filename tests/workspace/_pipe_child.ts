/**
 * A watched workspace in a process of its own, for `special_files_test.ts`: a named pipe
 * made while it is watched makes Deno's watcher wait forever (see `PipeHolder`), which
 * would hang the test runner itself. Usage: `_pipe_child.ts ROOT RESULT_FILE MODE`. Makes
 * the pipe `sub/p`; with MODE `scan`, scans then; with `probe`, leaves finding the stall to
 * the watch probe (see `watch_probe.ts`). Then makes a new top-level folder with a file in
 * it and waits until it is recorded (no safety rescan runs meanwhile). Writes "recorded" or
 * "late" to RESULT_FILE, and what the last scan could not record to RESULT_FILE.problems;
 * the test kills the process in any case (a stuck watcher also stops exit).
 */
import { Workspace } from "../../lib/workspace/mod.ts";
import { waitFor } from "../_helpers/wait_for.ts";

const [root, result, mode] = Deno.args as [string, string, "scan" | "probe"];
const workspace = await Workspace.open({ root });
await workspace.watch({ rescanMs: 3_600_000, scanAtStart: false });
const made = new Deno.Command("mkfifo", { args: [`${root}/sub/p`] }).outputSync();
if (!made.success) throw new Error("mkfifo failed");
// The watcher is handed the pipe's creation, and Deno opens it for reading: it waits, until
// a scan finds the pipe and holds it open.
if (mode === "scan") {
  const scanned = await workspace.scan({ keepRecorded: false });
  Deno.writeTextFileSync(`${result}.problems`, JSON.stringify(scanned.problems));
}
Deno.mkdirSync(`${root}/newtop`);
Deno.writeTextFileSync(`${root}/newtop/f.txt`, "after the pipe");
try {
  await waitFor(
    "newtop/f.txt recorded",
    () => workspace.store.latest("newtop/f.txt") !== undefined,
    { timeoutMs: 15_000 },
  );
  if (mode === "probe") {
    // Recorded by the scan the stall called for, which holds the pipe: the watcher reports
    // again, and records what comes next by itself.
    Deno.writeTextFileSync(`${root}/newtop/g.txt`, "after the stall");
    await waitFor(
      "newtop/g.txt recorded by the watcher",
      () => workspace.store.latest("newtop/g.txt") !== undefined,
      { timeoutMs: 15_000 },
    );
  }
  Deno.writeTextFileSync(result, "recorded");
} catch {
  Deno.writeTextFileSync(result, "late");
}
