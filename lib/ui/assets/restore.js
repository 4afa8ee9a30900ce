// The point-in-time view: a moment, the restore plan, then applying it.
import { $, api, dateTime, fail, getJson, h, postJson, q, say } from "./dom.js";

// --- point in time ----------------------------------------------------------------------

export function buildRestore() {
  const section = $("#view-restore");
  const moment = h("input", {
    id: "moment",
    placeholder: "sequence, 2026-05-01T12:00 or 10m ago",
    size: 36,
  });
  const slider = h("input", { id: "moment-slider", type: "range", min: 0, max: 0, value: 0 });
  slider.addEventListener("input", () => (moment.value = slider.value));
  const preview = h("button", { type: "submit" }, "Preview restore");
  const form = h("form", { class: "filters" }, "Restore to", moment, slider, preview);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void previewRestore(moment.value.trim());
  });
  section.append(form, h("div", { id: "restore-plan" }));
}

export async function loadRestore() {
  try {
    const page = await getJson(api("timeline?limit=1"));
    const slider = $("#moment-slider");
    slider.max = page.sequence;
    if (!$("#moment").value) slider.value = page.sequence;
  } catch (error) {
    fail(error);
  }
}

export async function previewRestore(text) {
  const box = $("#restore-plan");
  try {
    const plan = await getJson(api(`restore-plan?${q({ to: text })}`));
    const when = plan.timestamp ? ` (${dateTime(plan.timestamp)})` : "";
    const rows = plan.changes.map((c) => h("tr", {}, h("td", {}, c.path), h("td", {}, c.action)));
    const apply = h(
      "button",
      { type: "button", class: "danger", id: "apply-restore" },
      "Apply restore",
    );
    apply.addEventListener("click", async () => {
      try {
        const result = await postJson(api("restore"), { sequence: plan.sequence });
        say(`Restored to sequence ${plan.sequence}: ${result.applied.length} path(s) changed.`);
        box.replaceChildren();
      } catch (error) {
        fail(error);
      }
    });
    box.replaceChildren(
      h(
        "div",
        { class: "panel" },
        h(
          "h2",
          {},
          `Back to sequence ${plan.sequence}${when}: ${plan.changes.length} paths change`,
        ),
        plan.changes.length
          ? h("table", { id: "plan" }, rows)
          : h("p", {}, "The workspace already looks like this."),
        plan.changes.length ? apply : null,
      ),
    );
  } catch (error) {
    fail(error);
  }
}
