// Chronicle's timeline UI: plain modern JavaScript, no framework, no build step, no
// HTML parsed from strings (every name shown comes from the workspace, so text is set as text).
// Reads and writes go through fetch with the token as a bearer header, never a cookie.

const TOKEN_KEY = "chronicle-token";
const PAGE = 100;
const BURST_GAP_MS = 30_000;

let token = readToken();

/** Takes the one-time token from the fragment (never sent to the server) into the tab. */
function readToken() {
  const match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (match) {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1]));
    history.replaceState(null, "", location.pathname + location.search);
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function request(path, init = {}) {
  const headers = new Headers(init.headers);
  if (token) headers.set("authorization", `Bearer ${token}`);
  const response = await fetch(path, { ...init, headers });
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try {
      message = (await response.json()).error.message;
    } catch { /* not a JSON error */ }
    throw new ApiError(response.status, message);
  }
  return response;
}

const getJson = async (path) => await (await request(path)).json();
const postJson = async (path, body) =>
  await (await request(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body ?? {}),
  })).json();

/** `h("td", {class: "n"}, "text", child)`: an element, its text set as text. */
function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) element.addEventListener(key.slice(2), value);
    else if (key === "class") element.className = value;
    else element.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

const $ = (selector) => document.querySelector(selector);
const q = (params) =>
  new URLSearchParams(
    Object.entries(params).filter(([, v]) => v !== "" && v !== undefined && v !== null),
  ).toString();
const time = (ms) => new Date(ms).toLocaleTimeString();
const dateTime = (ms) => new Date(ms).toLocaleString();
const size = (n) =>
  n < 1024
    ? `${n} B`
    : n < 1048576
    ? `${(n / 1024).toFixed(1)} KiB`
    : `${(n / 1048576).toFixed(1)} MiB`;
const api = (path) => `api/${path}`;
const rest = (path) => `../${path}`;
const encodePath = (path) => path.split("/").map(encodeURIComponent).join("%2F");

function say(text, isError = false) {
  const box = $("#message");
  box.hidden = false;
  box.textContent = text;
  box.className = isError ? "error" : "";
}

function fail(error) {
  if (error instanceof ApiError && error.status === 401) {
    say(
      `Refused: ${error.message}. Writes need the token (open the link "chronicle ui" prints, or enter it above).`,
      true,
    );
  } else say(error instanceof Error ? error.message : String(error), true);
}

// --- header: views and token ------------------------------------------------------------

const loaders = {};
function show(view) {
  for (const button of document.querySelectorAll("#nav button")) {
    button.classList.toggle("active", button.dataset.view === view);
  }
  for (const section of document.querySelectorAll(".view")) {
    section.hidden = section.id !== `view-${view}`;
  }
  loaders[view]?.();
}

function showTokenState() {
  const state = $("#token-state");
  state.textContent = token ? "token set" : "no token";
  state.classList.toggle("on", Boolean(token));
}

// --- timeline ---------------------------------------------------------------------------

const timeline = { before: null, loading: false, top: null, filters: {}, done: false };

function buildTimeline() {
  const section = $("#view-timeline");
  const origin = h("select", { id: "filter-origin" }, h("option", { value: "" }, "every origin"));
  const prefix = h("input", { id: "filter-prefix", placeholder: "path prefix, e.g. src/" });
  const from = h("input", { id: "filter-from", type: "datetime-local" });
  const to = h("input", { id: "filter-to", type: "datetime-local" });
  const form = h(
    "form",
    { class: "filters", id: "timeline-filters" },
    "Origin",
    origin,
    prefix,
    "from",
    from,
    "to",
    to,
    h("button", { type: "submit" }, "Filter"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    timeline.filters = {
      origin: origin.value,
      prefix: prefix.value,
      from: from.value ? new Date(from.value).getTime() : "",
      to: to.value ? new Date(to.value).getTime() : "",
    };
    resetTimeline();
  });
  const list = h("ul", { class: "timeline", id: "timeline" });
  const sentinel = h("div", { class: "sentinel", id: "timeline-more" }, "");
  section.append(form, list, sentinel);
  new IntersectionObserver((entries) => {
    if (entries.some((entry) => entry.isIntersecting)) void loadTimeline();
  }).observe(sentinel);
}

/** Fills the origin filter (a scan of the store: after the first screen, not before). */
async function loadOrigins() {
  try {
    const { origins } = await getJson(api("origins"));
    const select = $("#filter-origin");
    for (const name of origins) select.append(h("option", { value: name }, name));
  } catch (error) {
    fail(error);
  }
}

function resetTimeline() {
  timeline.before = null;
  timeline.top = null;
  timeline.done = false;
  $("#timeline").replaceChildren();
  void loadTimeline();
}

async function loadTimeline() {
  if (timeline.loading || timeline.done) return;
  timeline.loading = true;
  const sentinel = $("#timeline-more");
  sentinel.textContent = "loading…";
  try {
    const page = await getJson(
      api(`timeline?${q({ ...timeline.filters, limit: PAGE, before: timeline.before })}`),
    );
    const list = $("#timeline");
    for (const item of page.items) {
      if (item.burst_start) list.append(burstHeader(item));
      list.append(timelineRow(item));
    }
    if (timeline.before === null && feedSequence === 0) feedSequence = page.sequence;
    if (timeline.top === null && page.items.length > 0) timeline.top = page.items[0];
    timeline.before = page.next_before;
    timeline.done = page.next_before === null;
    sentinel.textContent = timeline.done
      ? (list.childElementCount ? "the beginning" : "nothing recorded here yet")
      : "";
  } catch (error) {
    fail(error);
    sentinel.textContent = "";
  } finally {
    timeline.loading = false;
  }
  // A tall window may show the sentinel still: keep filling it.
  const sentinel2 = $("#timeline-more");
  if (!timeline.done && sentinel2.getBoundingClientRect().top < innerHeight) void loadTimeline();
}

function burstHeader(item) {
  return h("li", { class: "burst" }, `${dateTime(item.timestamp)} · ${item.origin}`);
}

function timelineRow(item) {
  const open = h(
    "button",
    { class: `link${item.deleted ? " deleted" : ""}`, title: item.path },
    item.path,
  );
  open.addEventListener("click", () => {
    show("files");
    void openFile(item.path, item.iteration);
  });
  // Picks this moment for a point-in-time restore: the plan shows before anything changes.
  const here = h(
    "button",
    {
      type: "button",
      class: "link",
      "data-restore": item.sequence,
      title: `Restore the workspace to how it was right after this (sequence ${item.sequence})`,
    },
    "restore to here",
  );
  here.addEventListener("click", () => {
    show("restore");
    $("#moment").value = String(item.sequence);
    void previewRestore(String(item.sequence));
  });
  return h(
    "li",
    { "data-sequence": item.sequence, "data-path": item.path },
    h("span", { class: "muted" }, time(item.timestamp)),
    h("span", {}, item.origin),
    open,
    h("span", { class: "muted" }, `#${item.iteration}`),
    h("span", { class: "muted" }, item.deleted ? "deleted" : size(item.size)),
    here,
  );
}

function matchesFilters(item) {
  const f = timeline.filters;
  if (f.origin && item.origin !== f.origin) return false;
  if (f.prefix && !item.path.startsWith(f.prefix)) return false;
  if (f.from && item.timestamp < f.from) return false;
  if (f.to && item.timestamp > f.to) return false;
  return true;
}

/** New iterations from the live feed, oldest first, go on top of the list. */
function prependLive(items) {
  const list = $("#timeline");
  for (const item of items) {
    if (!matchesFilters(item) || (timeline.top && item.sequence <= timeline.top.sequence)) continue;
    const top = timeline.top;
    const row = timelineRow(item);
    row.classList.add("fresh");
    const continues = top && top.origin === item.origin &&
      item.timestamp - top.timestamp <= BURST_GAP_MS;
    if (continues && list.firstChild) list.firstChild.after(row);
    else list.prepend(burstHeader(item), row);
    timeline.top = item;
  }
}

// --- the live feed: Server-Sent Events read through fetch, so the token goes as a header

let feedSequence = 0;
// A page left (navigated away, or kept in the back/forward cache) closes its feed: an open
// feed holds one of the browser's few connections to this host, and a 7th would wait.
let feed = null;
let away = false;
let resume = () => {};
addEventListener("pagehide", () => {
  away = true;
  feed?.abort();
});
addEventListener("pageshow", (event) => {
  if (!event.persisted) return;
  away = false;
  resume();
});

async function follow() {
  const live = $("#live");
  let delay = 500;
  for (;;) {
    if (away) await new Promise((resolve) => (resume = resolve));
    try {
      feed = new AbortController();
      const response = await request(api(`events?${q({ since: feedSequence || "" })}`), {
        signal: feed.signal,
      });
      live.textContent = "live";
      live.classList.add("on");
      delay = 500;
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          handleEvent(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
        }
      }
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return fail(error);
    }
    live.textContent = "offline";
    live.classList.remove("on");
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 10_000);
  }
}

function handleEvent(block) {
  let event = "message";
  let data = "";
  for (const line of block.split("\n")) {
    if (line.startsWith("event: ")) event = line.slice(7);
    else if (line.startsWith("data: ")) data += line.slice(6);
  }
  if (event === "iterations") {
    const items = JSON.parse(data);
    feedSequence = items.at(-1).sequence;
    prependLive(items);
  }
  if (event === "reset") {
    feedSequence = 0;
    resetTimeline();
  }
}

// --- files ------------------------------------------------------------------------------

const file = { path: null, items: [], next: null };

function buildFiles() {
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

async function runSearch(text) {
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

function fileButton(label, path) {
  return h(
    "button",
    { class: "link", "data-path": path, onclick: () => void openFile(path) },
    label,
  );
}

async function loadFolder(dir, list, cursor) {
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

async function openFile(path, iteration) {
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
function olderButton(history) {
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

function historyRow(item, i) {
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

async function showContent(path, iteration) {
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

async function showDiff(mode) {
  const from = document.querySelector('input[name="from"]:checked')?.value;
  const to = document.querySelector('input[name="to"]:checked')?.value;
  if (!from || !to) return say("Pick a 'from' and a 'to' iteration first.", true);
  try {
    const diff = await getJson(api(`diff?${q({ path: file.path, from, to })}`));
    $("#content").replaceChildren(
      h("h2", {}, `${file.path}: #${from} → #${to} (+${diff.added} −${diff.removed})`),
      renderDiff(diff, mode),
    );
  } catch (error) {
    fail(error);
  }
}

function renderDiff(diff, mode) {
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
        h("td", { class: "muted" }, `@@ -${hunk.oldStart} +${hunk.newStart}`),
        h("td", { class: "n" }, ""),
        h("td", {}, ""),
      ),
    );
    let oldNo = hunk.oldStart;
    let newNo = hunk.newStart;
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

// --- snapshots --------------------------------------------------------------------------

async function loadSnapshots() {
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

async function snapshotDiff(snap, confirming) {
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

// --- point in time ----------------------------------------------------------------------

function buildRestore() {
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

async function loadRestore() {
  try {
    const page = await getJson(api("timeline?limit=1"));
    const slider = $("#moment-slider");
    slider.max = page.sequence;
    if (!$("#moment").value) slider.value = page.sequence;
  } catch (error) {
    fail(error);
  }
}

async function previewRestore(text) {
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

// --- replicas and conflicts -------------------------------------------------------------

async function loadReplicas() {
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

function conflictsTable(conflicts) {
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
      "diff against current",
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

async function keptDiff(conflict) {
  try {
    const diff = await getJson(
      api(`kept-diff?${q({ path: conflict.path, hash: conflict.keptHash })}`),
    );
    const box = $("#conflict-diff");
    box.dataset.path = conflict.path;
    box.replaceChildren(
      h("h2", {}, `${conflict.path}: current → kept`),
      renderDiff(diff, "split"),
    );
  } catch (error) {
    fail(error);
  }
}

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
$("#token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = $("#token-input");
  token = input.value.trim() || null;
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
  input.value = "";
  showTokenState();
  say(token ? "Token set for this tab." : "Token cleared.");
});
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
