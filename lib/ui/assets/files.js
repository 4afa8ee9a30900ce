// The files view: tree, search, a file's history, its content, diffs between iterations.
import {
  $,
  api,
  dateTime,
  encodePath,
  fail,
  getJson,
  h,
  PAGE,
  q,
  request,
  rest,
  say,
  size,
} from "./dom.js";

// --- files ------------------------------------------------------------------------------

export const file = { path: null, items: [], next: null };

export function buildFiles() {
  const section = $("#view-files");
  const search = h("input", { id: "file-search", type: "search", placeholder: "find a file" });
  const tree = h("ul", { class: "tree", id: "tree" });
  const results = h("ul", { class: "plain", id: "search-results", hidden: true });
  let timer;
  search.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => void runSearch(search.value.trim()), 150);
  });
  section.append(
    h(
      "div",
      { class: "split" },
      h("div", {}, search, results, tree),
      h("div", { id: "file-panel" }, h("p", { class: "muted" }, "Pick a file.")),
    ),
  );
  return loadFolder("", tree, "");
}

export async function runSearch(text) {
  const results = $("#search-results");
  results.hidden = text === "";
  $("#tree").hidden = text !== "";
  if (text === "") return;
  try {
    const { paths } = await getJson(api(`search?${q({ q: text, limit: 200 })}`));
    results.replaceChildren(...paths.map((path) => h("li", {}, fileButton(path, path))));
    if (paths.length === 0) results.append(h("li", { class: "muted" }, "no match"));
  } catch (error) {
    fail(error);
  }
}

export function fileButton(label, path) {
  return h(
    "button",
    { class: "link", "data-path": path, onclick: () => void openFile(path) },
    label,
  );
}

export async function loadFolder(dir, list, cursor) {
  try {
    const page = await getJson(api(`tree?${q({ dir, cursor, limit: 200 })}`));
    for (const entry of page.entries) {
      if (entry.type === "dir") {
        const children = h("ul", { hidden: true });
        let loaded = false;
        const toggle = h("button", { class: "link", "data-dir": entry.path }, `▸ ${entry.name}/`);
        toggle.addEventListener("click", () => {
          children.hidden = !children.hidden;
          toggle.textContent = `${children.hidden ? "▸" : "▾"} ${entry.name}/`;
          if (!loaded) {
            loaded = true;
            void loadFolder(entry.path, children, "");
          }
        });
        list.append(
          h("li", {}, toggle, children),
        );
      } else list.append(h("li", {}, fileButton(entry.name, entry.path)));
    }
    if (page.next) {
      const more = h("button", { class: "link" }, "more…");
      const item = h("li", {}, more);
      more.addEventListener("click", () => {
        item.remove();
        void loadFolder(dir, list, page.next);
      });
      list.append(item);
    }
  } catch (error) {
    fail(error);
  }
}

export async function openFile(path, iteration) {
  file.path = path;
  const panel = $("#file-panel");
  panel.replaceChildren(h("h2", { id: "file-path" }, path), h("p", { class: "muted" }, "loading…"));
  try {
    const page = await getJson(api(`history?${q({ path, limit: PAGE })}`));
    file.items = page.items;
    file.next = page.next_before;
    const history = h(
      "table",
      { id: "history" },
      h(
        "tr",
        {},
        h("th", {}, "#"),
        h("th", {}, "when"),
        h("th", {}, "origin"),
        h("th", {}, "size"),
        h("th", {}, "from"),
        h("th", {}, "to"),
      ),
    );
    for (const [i, item] of file.items.entries()) history.append(historyRow(item, i));
    const split = h("button", { id: "diff-split", type: "button" }, "Compare side by side");
    const unified = h("button", { id: "diff-unified", type: "button" }, "Compare unified");
    split.addEventListener("click", () => void showDiff("split"));
    unified.addEventListener("click", () => void showDiff("unified"));
    panel.replaceChildren(
      h("h2", { id: "file-path" }, path),
      h("div", { class: "filters" }, split, unified),
      history,
      olderButton(history),
      h("div", { id: "content", class: "panel" }),
    );
    await showContent(path, iteration ?? file.items[0]?.iteration);
  } catch (error) {
    fail(error);
  }
}

/** Loads the path's older iterations, a page at a time, into the history table. */
export function olderButton(history) {
  const more = h(
    "button",
    { type: "button", id: "history-more", hidden: !file.next },
    "older iterations…",
  );
  more.addEventListener("click", async () => {
    try {
      const page = await getJson(
        api(`history?${q({ path: file.path, limit: PAGE, before: file.next })}`),
      );
      for (const item of page.items) history.append(historyRow(item, file.items.push(item) - 1));
      file.next = page.next_before;
      more.hidden = !file.next;
    } catch (error) {
      fail(error);
    }
  });
  return more;
}

export function historyRow(item, i) {
  const view = h(
    "button",
    { class: "link", "data-iteration": item.iteration },
    `#${item.iteration}`,
  );
  view.addEventListener("click", () => void showContent(file.path, item.iteration));
  return h(
    "tr",
    {},
    h("td", {}, view),
    h("td", {}, dateTime(item.timestamp)),
    h("td", {}, item.origin),
    h("td", { class: item.deleted ? "deleted" : "" }, item.deleted ? "deleted" : size(item.size)),
    h(
      "td",
      {},
      h("input", {
        type: "radio",
        name: "from",
        value: item.iteration,
        checked: i === 1 || (file.items.length === 1 && i === 0),
      }),
    ),
    h("td", {}, h("input", { type: "radio", name: "to", value: item.iteration, checked: i === 0 })),
  );
}

export async function showContent(path, iteration) {
  const box = $("#content");
  try {
    const view = await getJson(api(`file?${q({ path, at: iteration })}`));
    const title = h(
      "h2",
      {},
      `${path} at #${view.iteration.iteration} (${dateTime(view.iteration.timestamp)})`,
    );
    if (view.kind === "text") {
      const table = h("table", { class: "code", id: "file-text" });
      view.text.replace(/\n$/, "").split("\n").forEach((line, i) => {
        table.append(h("tr", {}, h("td", { class: "n" }, i + 1), h("td", {}, line)));
      });
      box.replaceChildren(title, table);
    } else if (view.kind === "image") {
      const bytes =
        await (await request(rest(`files/${encodePath(path)}/at/${view.iteration.iteration}`)))
          .arrayBuffer();
      const url = URL.createObjectURL(new Blob([bytes], { type: view.mime }));
      box.replaceChildren(title, h("img", { class: "preview", src: url, alt: path }));
    } else {
      const what = {
        binary: "Binary content",
        too_large: "Too large to show",
        deleted: "Deleted in this iteration",
        symlink: `Symbolic link to ${view.text}`,
      }[view.kind];
      box.replaceChildren(
        title,
        h(
          "p",
          { id: "file-binary" },
          what,
          view.kind === "deleted"
            ? ""
            : `: ${size(view.iteration.size)}, sha256 ${view.iteration.hash}`,
        ),
      );
    }
  } catch (error) {
    fail(error);
  }
}

export async function showDiff(mode) {
  const from = document.querySelector('input[name="from"]:checked')?.value;
  const to = document.querySelector('input[name="to"]:checked')?.value;
  if (!from || !to) return say("Pick a 'from' and a 'to' iteration first.", true);
  try {
    // REST's diff (lib/history), as `chronicle diff --json` and GET /files/…/diff have it.
    const diff = await getJson(
      rest(`files/${encodePath(file.path)}/diff?${q({ from, to, format: "json" })}`),
    );
    $("#content").replaceChildren(
      h("h2", {}, `${file.path}: #${from} → #${to} (+${diff.added} −${diff.removed})`),
      renderDiff(diff, mode),
    );
  } catch (error) {
    fail(error);
  }
}

export function renderDiff(diff, mode) {
  if (diff.binary) return h("p", { id: "diff" }, diff.text || "Binary content differs");
  if (diff.identical) return h("p", { id: "diff" }, "Identical content");
  if (mode === "unified") {
    return h(
      "pre",
      { id: "diff", class: "unified" },
      diff.text.split("\n").map((line) =>
        h("span", {
          class: line.startsWith("@@")
            ? "hunk"
            : line.startsWith("+") && !line.startsWith("+++")
            ? "add"
            : line.startsWith("-") && !line.startsWith("---")
            ? "del"
            : "",
        }, line)
      ),
    );
  }
  const table = h("table", { class: "code", id: "diff" });
  for (const hunk of diff.hunks) {
    table.append(
      h(
        "tr",
        {},
        h("td", { class: "n" }, "…"),
        h("td", { class: "muted" }, `@@ -${hunk.old_start} +${hunk.new_start}`),
        h("td", { class: "n" }, ""),
        h("td", {}, ""),
      ),
    );
    let oldNo = hunk.old_start;
    let newNo = hunk.new_start;
    let removed = [];
    let added = [];
    const flush = () => {
      for (let i = 0; i < Math.max(removed.length, added.length); i++) {
        const a = removed[i];
        const b = added[i];
        table.append(
          h(
            "tr",
            {},
            h("td", { class: "n" }, a === undefined ? "" : oldNo++),
            h("td", { class: a === undefined ? "" : "del" }, a ?? ""),
            h("td", { class: "n" }, b === undefined ? "" : newNo++),
            h("td", { class: b === undefined ? "" : "add" }, b ?? ""),
          ),
        );
      }
      removed = [];
      added = [];
    };
    for (const line of hunk.lines) {
      if (line.kind === "-") removed.push(line.text);
      else if (line.kind === "+") added.push(line.text);
      else if (line.kind === " ") {
        flush();
        table.append(
          h(
            "tr",
            {},
            h("td", { class: "n" }, oldNo++),
            h("td", {}, line.text),
            h("td", { class: "n" }, newNo++),
            h("td", {}, line.text),
          ),
        );
      }
    }
    flush();
  }
  return table;
}
