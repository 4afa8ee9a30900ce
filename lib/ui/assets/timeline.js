// The timeline view: pages of iterations newest first, bursts, filters, the live feed.
import {
  $,
  api,
  ApiError,
  BURST_GAP_MS,
  dateTime,
  fail,
  getJson,
  h,
  PAGE,
  q,
  request,
  rest,
  show,
  size,
  time,
} from "./dom.js";
import { openFile } from "./files.js";
import { previewRestore } from "./restore.js";

// --- timeline ---------------------------------------------------------------------------

export const timeline = { before: null, loading: false, top: null, filters: {}, done: false };

export function buildTimeline() {
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
  sentinelObserver = new IntersectionObserver((entries) => {
    if (entries.some((entry) => entry.isIntersecting)) void loadTimeline();
  });
  sentinelObserver.observe(sentinel);
}

let sentinelObserver = null;

/** Fills the origin filter (a scan of the store: after the first screen, not before). */
export async function loadOrigins() {
  try {
    const { origins } = await getJson(api("origins"));
    const select = $("#filter-origin");
    for (const name of origins) select.append(h("option", { value: name }, name));
  } catch (error) {
    fail(error);
  }
}

export function resetTimeline() {
  timeline.before = null;
  timeline.top = null;
  timeline.done = false;
  $("#timeline").replaceChildren();
  void loadTimeline();
}

export async function loadTimeline() {
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
  // The observer reports changes only: a sentinel still in view after this page (a tall
  // window, or a scroll within the same frame) would never report again. Observing it
  // anew reports where it is now, so the list keeps filling while the end is in view.
  if (!timeline.done) {
    const sentinel = $("#timeline-more");
    sentinelObserver.unobserve(sentinel);
    sentinelObserver.observe(sentinel);
  }
}

export function burstHeader(item) {
  return h("li", { class: "burst" }, `${dateTime(item.timestamp)} · ${item.origin}`);
}

export function timelineRow(item) {
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

export function matchesFilters(item) {
  const f = timeline.filters;
  if (f.origin && item.origin !== f.origin) return false;
  if (f.prefix && !item.path.startsWith(f.prefix)) return false;
  if (f.from && item.timestamp < f.from) return false;
  if (f.to && item.timestamp > f.to) return false;
  return true;
}

/** New iterations from the live feed, oldest first, go on top of the list. */
export function prependLive(items) {
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

// --- the live feed: REST's GET /events (Server-Sent Events), read through fetch so the
// token goes as a header

/** Iterations behind beyond which a returning feed reloads the timeline instead of them. */
const FEED_BACKLOG = 2000;

export let feedSequence = 0;
// A page left (navigated away, or kept in the back/forward cache) closes its feed: an open
// feed holds one of the browser's few connections to this host, and a 7th would wait.
export let feed = null;
export let away = false;
export let resume = () => {};
addEventListener("pagehide", () => {
  away = true;
  feed?.abort();
});
addEventListener("pageshow", (event) => {
  if (!event.persisted) return;
  away = false;
  resume();
});

export async function follow() {
  const live = $("#live");
  let delay = 500;
  for (;;) {
    if (away) await new Promise((resolve) => (resume = resolve));
    try {
      feed = new AbortController();
      const since = await feedStart();
      const response = await request(rest(`events?${q({ since })}`), { signal: feed.signal });
      live.textContent = "live";
      live.classList.add("on");
      delay = 500;
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      let ended = false;
      while (!ended) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        // Every event complete in what arrived, shown at once.
        const items = [];
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const event = parseEvent(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          if (event.type === "iteration") items.push(JSON.parse(event.data));
          if (event.type === "end") ended = true; // the server is shutting down
        }
        if (items.length > 0) {
          feedSequence = items.at(-1).sequence;
          prependLive(items);
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

/**
 * Where the feed starts: after the last iteration shown, or from now when none is known
 * yet. Far behind (a long time offline), the timeline is loaded anew instead.
 */
async function feedStart() {
  if (feedSequence === 0) return "";
  const { sequence } = await getJson(api(`timeline?${q({ limit: 1 })}`));
  if (sequence - feedSequence > FEED_BACKLOG) {
    feedSequence = sequence;
    resetTimeline();
  }
  return feedSequence;
}

/** One Server-Sent Event's type and data (`message` when it names none; comments skipped). */
export function parseEvent(block) {
  let type = "message";
  let data = "";
  for (const line of block.split("\n")) {
    if (line.startsWith("event: ")) type = line.slice(7);
    else if (line.startsWith("data: ")) data += line.slice(6);
  }
  return { type, data };
}
