// The snapshots view: the chain, a snapshot's diff, rollback behind a confirmation.
import { $, dateTime, fail, getJson, h, postJson, rest, say } from "./dom.js";

// --- snapshots --------------------------------------------------------------------------

export async function loadSnapshots() {
  const section = $("#view-snapshots");
  section.replaceChildren(h("p", { class: "muted" }, "loading…"));
  try {
    const [list, verify] = await Promise.all([
      getJson(rest("snapshots")),
      getJson(rest("snapshots/verify?content=0")),
    ]);
    const broken = new Set(verify.problems.map((problem) => problem.number));
    const table = h(
      "table",
      { id: "snapshots" },
      h(
        "tr",
        {},
        ...["#", "when", "action", "summary", "paths", "verified", ""].map((t) => h("th", {}, t)),
      ),
    );
    for (const snap of list.slice().reverse()) {
      const diff = h("button", { type: "button" }, "Diff");
      const rollback = h(
        "button",
        { type: "button", class: "danger", "data-rollback": snap.id },
        "Roll back…",
      );
      diff.addEventListener("click", () => void snapshotDiff(snap, false));
      rollback.addEventListener("click", () => void snapshotDiff(snap, true));
      const paths = snap.files.map((f) => f.path);
      table.append(h(
        "tr",
        { "data-snapshot": snap.id },
        h("td", {}, snap.number),
        h("td", {}, dateTime(snap.timestamp)),
        h("td", {}, snap.action_type),
        h("td", {}, snap.summary),
        h(
          "td",
          {},
          paths.slice(0, 3).join(", "),
          paths.length > 3 ? ` and ${paths.length - 3} more` : "",
        ),
        h("td", {}, broken.has(snap.number) ? "✗ problem" : "✓"),
        h("td", {}, diff, " ", rollback),
      ));
    }
    section.replaceChildren(
      h(
        "p",
        { class: "muted" },
        verify.ok
          ? `Chain verified: ${verify.snapshots} snapshots intact.`
          : `Chain has ${verify.problems.length} problems.`,
      ),
      h("div", { id: "snapshot-detail" }),
      table,
    );
  } catch (error) {
    fail(error);
  }
}

export async function snapshotDiff(snap, confirming) {
  const detail = $("#snapshot-detail");
  try {
    const diff = await getJson(rest(`snapshots/${snap.id}/diff`));
    const rows = diff.changes.map((c) =>
      h(
        "tr",
        {},
        h("td", {}, c.path),
        h("td", {}, c.change_type),
        h("td", {}, c.after_size ?? "—"),
        h("td", {}, c.before_size ?? "—"),
      )
    );
    const table = h(
      "table",
      {},
      h(
        "tr",
        {},
        h("th", {}, "path"),
        h("th", {}, "since the snapshot"),
        h("th", {}, "size now"),
        h("th", {}, "size then"),
      ),
      rows,
    );
    const children = [
      h("h2", {}, `Snapshot #${snap.number}: ${snap.summary}`),
      diff.changes.length ? table : h("p", {}, "Nothing changed since this snapshot."),
    ];
    if (confirming) {
      const confirm = h(
        "button",
        { type: "button", class: "danger", id: "confirm-rollback" },
        "Confirm rollback",
      );
      const cancel = h("button", { type: "button" }, "Cancel");
      confirm.addEventListener("click", async () => {
        try {
          const result = await postJson(rest(`snapshots/${snap.id}/rollback`));
          say(
            `Rolled back snapshot #${snap.number}: ${result.applied.length} path(s) restored${
              result.problems.length ? `, ${result.problems.length} problems` : ""
            }.`,
          );
          void loadSnapshots();
        } catch (error) {
          fail(error);
        }
      });
      cancel.addEventListener("click", () => detail.replaceChildren());
      children.unshift(
        h(
          "p",
          {},
          `Rolling back brings these ${diff.changes.length} paths back to how they were at the snapshot (the rollback itself is snapshotted first, so it can be undone):`,
        ),
      );
      children.push(h("div", { class: "filters" }, confirm, cancel));
    }
    detail.replaceChildren(h("div", { class: `panel${confirming ? " confirm" : ""}` }, children));
  } catch (error) {
    fail(error);
  }
}
