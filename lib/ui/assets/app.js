// Entry module of the web UI: wires the views together and draws the first screen.
import { $, loaders, show, showTokenState, watchTokenForm } from "./dom.js";
import { buildTimeline, follow, loadOrigins, loadTimeline } from "./timeline.js";
import { buildFiles } from "./files.js";
import { loadSnapshots } from "./snapshots.js";
import { buildRestore, loadRestore } from "./restore.js";
import { loadReplicas } from "./replicas.js";

// --- start ------------------------------------------------------------------------------

loaders.snapshots = loadSnapshots;
loaders.restore = loadRestore;
loaders.replicas = loadReplicas;
// The replicas' acked sequence and lag move: refresh them while they are shown.
setInterval(() => {
  if (!$("#view-replicas").hidden) void loadReplicas();
}, 2000);
for (const button of document.querySelectorAll("#nav button")) {
  button.addEventListener("click", () => show(button.dataset.view));
}
watchTokenForm();
showTokenState();
buildTimeline();
const treeLoaded = buildFiles();
buildRestore();
const timelineLoaded = loadTimeline();
// The first screen (timeline and tree) is drawn: bench/ui_bench.ts reads this mark.
void Promise.all([timelineLoaded, treeLoaded]).then(() =>
  performance.mark("chronicle:first-screen")
);
void timelineLoaded.then(() => {
  void loadOrigins();
  void follow();
});
