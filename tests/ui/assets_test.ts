import { assert, assertEquals } from "../_helpers/assert.ts";
import { APP_JS, INDEX_HTML } from "../../lib/ui/assets/bundle.ts";
import { bundleSource } from "../../lib/ui/assets/generate.ts";

const assets = new URL("../../lib/ui/assets/", import.meta.url);

Deno.test("assets: bundle.ts holds the current index.html, app.js and app.css (deno task ui:assets)", async () => {
  const expected = await bundleSource((name) => Deno.readTextFile(new URL(name, assets)));
  const actual = await Deno.readTextFile(new URL("bundle.ts", assets));
  assertEquals(actual === expected, true, "bundle.ts is stale: run deno task ui:assets");
});

Deno.test("assets: the page loads no inline script, no inline style and nothing from another origin", () => {
  assert(!/<script(?![^>]*\bsrc=)/.test(INDEX_HTML), "inline <script>");
  assert(!/\bstyle=/.test(INDEX_HTML), "inline style attribute");
  assert(!/\bon[a-z]+=/.test(INDEX_HTML), "inline event handler");
  assert(!/(src|href)="(https?:)?\/\//.test(INDEX_HTML), "a resource from another origin");
  assert(!/innerHTML|eval\(|new Function/.test(APP_JS), "HTML or code built from strings");
});
