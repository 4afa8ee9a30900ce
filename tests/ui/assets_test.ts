import { assert, assertEquals } from "../_helpers/assert.ts";
import { INDEX_HTML, UI_ASSETS } from "../../lib/ui/assets/bundle.ts";
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
  const scripts = Object.entries(UI_ASSETS).filter(([name]) => name.endsWith(".js"));
  assertEquals(scripts.length, 7, "every module is bundled");
  for (const [name, script] of scripts) {
    assert(
      !/innerHTML|eval\(|new Function/.test(script),
      `${name}: HTML or code built from strings`,
    );
    // Every import is a module beside it, bundled too: nothing from another origin.
    for (const [, target] of script.matchAll(/from "([^"]+)"/g)) {
      assert(target!.startsWith("./") && `${target!.slice(2)}` in UI_ASSETS, `${name}: ${target}`);
    }
  }
});
