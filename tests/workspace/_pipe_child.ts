/**
 * A watched workspace in a process of its own, for `special_files_test.ts`: a named pipe
 * made while it is watched makes Deno's watcher wait forever (see `PipeHolder`), which
 * would hang the test runner itself. Usage: `_pipe_child.ts ROOT RESULT_FILE`. Makes the
 * pipe `sub/p`, scans, then makes a new top-level folder with a file in it and waits until
 * the watcher records it (no safety rescan runs meanwhile). Writes "recorded" or "late" to
 * RESULT_FILE; the test kills the process in any case (a stuck watcher also stops exit).
 */
import { Workspace } from "../../lib/workspace/mod.ts";
import { waitFor } from "../_helpers/wait_for.ts";

const [root, result] = Deno.args as [string, string];
const workspace = await Workspace.open({ root });
await workspace.watch({ rescanMs: 3_600_000, scanAtStart: false });
const made = new Deno.Command("mkfifo", { args: [`${root}/sub/p`] }).outputSync();
if (!made.success) throw new Error("mkfifo failed");
// The watcher is handed the pipe's creation, and Deno opens it for reading: it waits, until
// the scan finds the pipe and holds it open.
const scanned = await workspace.scan({ keepRecorded: false });
Deno.writeTextFileSync(`${result}.problems`, JSON.stringify(scanned.problems));
Deno.mkdirSync(`${root}/newtop`);
Deno.writeTextFileSync(`${root}/newtop/f.txt`, "after the pipe");
try {
  await waitFor(
    "newtop/f.txt recorded by the watcher",
    () => workspace.store.latest("newtop/f.txt") !== undefined,
    { timeoutMs: 15_000 },
  );
  Deno.writeTextFileSync(result, "recorded");
} catch {
  Deno.writeTextFileSync(result, "late");
}
