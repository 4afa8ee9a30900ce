/**
 * A watched workspace in a process of its own, for `special_files_test.ts`: a named pipe
 * made while it is watched makes Deno's watcher wait forever (see `PipeHolder`), which
 * would hang the test runner itself. Usage: `_pipe_child.ts ROOT RESULT_FILE MODE`. Makes
 * the pipe `sub/p`; with MODE `scan`, scans then; with `probe`, leaves finding the stall to
 * the watch probe (see `watch_probe.ts`); with `unreachable`, makes it in an ignored folder
 * (`sub/hidden/p`), which no scan walks, so that only a watcher made again ends the stall.
 * Then makes a new top-level folder with a file in it and waits until it is recorded (no
 * safety rescan runs meanwhile); but with `scan`, then a second file, which the watcher
 * must record. Writes "recorded" or "late" to RESULT_FILE, and what the scan could not
 * record to RESULT_FILE.problems; the test kills the process in any case (a stuck watcher
 * also stops exit).
 */
import { Workspace } from "../../lib/workspace/mod.ts";
import { waitFor } from "../_helpers/wait_for.ts";

type Mode = "scan" | "probe" | "unreachable";
const [root, result, mode] = Deno.args as [string, string, Mode];
const workspace = await Workspace.open({ root, ignore: ["hidden/"] });
await workspace.watch({ rescanMs: 3_600_000, scanAtStart: false });
if (mode === "unreachable") Deno.mkdirSync(`${root}/sub/hidden`);
const pipe = mode === "unreachable" ? `${root}/sub/hidden/p` : `${root}/sub/p`;
const made = new Deno.Command("mkfifo", { args: [pipe] }).outputSync();
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
  if (mode !== "scan") {
    // Recorded by the scan the stall called for. That scan holds a pipe it finds, and the
    // watcher reports again; one it cannot find, the watcher is made again on a new thread
    // (after a stall of 20 s). Either way what comes next is recorded.
    Deno.writeTextFileSync(`${root}/newtop/g.txt`, "after the stall");
    await waitFor(
      "newtop/g.txt recorded",
      () => workspace.store.latest("newtop/g.txt") !== undefined,
      { timeoutMs: mode === "unreachable" ? 45_000 : 15_000 },
    );
    // No scan is due now: the watcher records this.
    Deno.writeTextFileSync(`${root}/newtop/h.txt`, "watched again");
    await waitFor(
      "newtop/h.txt recorded by the watcher",
      () => workspace.store.latest("newtop/h.txt") !== undefined,
      { timeoutMs: 15_000 },
    );
  }
  Deno.writeTextFileSync(result, "recorded");
} catch {
  Deno.writeTextFileSync(result, "late");
}
