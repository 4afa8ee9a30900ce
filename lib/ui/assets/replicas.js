// The replicas view: sandboxes with acked sequence and lag, conflicts and resolutions.
import { $, api, dateTime, fail, getJson, h, postJson, q, rest, say, size } from "./dom.js";
import { renderDiff } from "./files.js";

// --- replicas and conflicts -------------------------------------------------------------

export async function loadReplicas() {
  const section = $("#view-replicas");
  try {
    const status = await getJson(rest("status"));
    const children = [
      h("p", {}, `This Chronicle is a ${status.role} at sequence ${status.sequence}.`),
    ];
    const replication = status.replication;
    if (replication?.role === "master") {
      const table = h(
        "table",
        { id: "replicas" },
        h(
          "tr",
          {},
          ...["sandbox", "connected", "acked sequence", "lag", "last seen"].map((t) =>
            h("th", {}, t)
          ),
        ),
      );
      for (const r of replication.replicas) {
        table.append(
          h(
            "tr",
            {},
            h("td", {}, r.sandboxId),
            h("td", {}, r.connected ? "yes" : "no"),
            h("td", {}, r.ackedSequence),
            h("td", {}, r.lag),
            h("td", {}, r.lastSeenMs ? dateTime(r.lastSeenMs) : "—"),
          ),
        );
      }
      children.push(
        h("h2", {}, "Sandboxes"),
        replication.replicas.length
          ? table
          : h("p", { class: "muted" }, "No sandbox has connected yet."),
      );
    } else if (replication) {
      children.push(
        h(
          "p",
          {},
          `Replica ${replication.sandboxId} of ${replication.master}: ${replication.state}, applied ${replication.appliedSequence} of ${replication.masterSequence} (lag ${
            Math.max(0, replication.masterSequence - replication.appliedSequence)
          }).`,
        ),
      );
      children.push(h("h2", {}, "Conflicts"), conflictsTable(replication.conflicts ?? []));
    }
    section.replaceChildren(...children);
  } catch (error) {
    fail(error);
  }
}

export function conflictsTable(conflicts) {
  if (conflicts.length === 0) return h("p", { class: "muted" }, "No conflicts.");
  const table = h(
    "table",
    { id: "conflicts" },
    h(
      "tr",
      {},
      ...["path", "operation", "reason", "kept", "resolution", ""].map((t) => h("th", {}, t)),
    ),
  );
  for (const conflict of conflicts) {
    // A sandbox takes the master's version at once (resolution "upstream"); a local-sync
    // conflict stays open for the person: only an open one offers the resolutions.
    const open = conflict.resolvedMs === null;
    const buttons = (open ? ["local", "upstream", "merged"] : []).map((keep) => {
      const button = h("button", { type: "button", "data-keep": keep }, `keep ${keep}`);
      button.addEventListener("click", async () => {
        try {
          await postJson(rest("sync/resolve"), { path: conflict.path, keep });
          say(`Resolved ${conflict.path}: kept ${keep}.`);
          void loadReplicas();
        } catch (error) {
          fail(error);
        }
      });
      return button;
    });
    const diff = h(
      "button",
      { type: "button", "data-kept-diff": conflict.path },
      "diff against the master's",
    );
    diff.addEventListener("click", () => void keptDiff(conflict));
    table.append(
      h(
        "tr",
        {},
        h("td", {}, conflict.path),
        h("td", {}, conflict.operation),
        h("td", {}, conflict.reason),
        h(
          "td",
          {},
          conflict.keptHash
            ? `${size(conflict.keptSize)} ${conflict.keptHash.slice(0, 12)}`
            : "deletion",
        ),
        h(
          "td",
          { "data-resolution": conflict.path },
          open ? "open" : `${conflict.resolution} (${dateTime(conflict.resolvedMs)})`,
        ),
        h("td", {}, conflict.keptHash ? diff : null, ...buttons),
      ),
    );
  }
  // The view refreshes itself: a diff shown stays while its conflict is still open.
  const shown = $("#conflict-diff");
  const keep = shown && conflicts.some((c) => c.path === shown.dataset.path);
  return h("div", {}, table, keep ? shown : h("div", { id: "conflict-diff" }));
}

export async function keptDiff(conflict) {
  try {
    const diff = await getJson(
      api(`kept-diff?${q({ path: conflict.path, hash: conflict.keptHash })}`),
    );
    const box = $("#conflict-diff");
    box.dataset.path = conflict.path;
    // Against the master's version (not the file as it is now, often the kept content
    // itself); the notes say when no master version is known here.
    const master = diff.master
      ? `the master's version (sequence ${diff.master.sequence})`
      : "nothing";
    box.replaceChildren(
      h("h2", {}, `${conflict.path}: ${master} → kept`),
      ...diff.notes.map((note) => h("p", { class: "muted", "data-note": "" }, note)),
      renderDiff(diff, "split"),
    );
  } catch (error) {
    fail(error);
  }
}
