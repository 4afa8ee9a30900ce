import { assertEquals } from "./_assert.ts";
import { contentGroups } from "../../lib/replication/content_groups.ts";

/** Each case: the changes as `name:bytes fetched`, the budget, and the groups expected. */
const CASES: { name: string; items: string; budget: number; groups: string[][] }[] = [
  { name: "nothing", items: "", budget: 10, groups: [] },
  { name: "nothing fetched: one group", items: "a:0 b:0", budget: 10, groups: [["a", "b"]] },
  {
    name: "what fetches nothing goes first, with the first fetched",
    items: "a:4 b:0 c:4 d:0",
    budget: 10,
    groups: [["b", "d", "a", "c"]],
  },
  {
    name: "a group ends before the budget would be passed",
    items: "a:6 b:4 c:1 d:9",
    budget: 10,
    groups: [["a", "b"], ["c", "d"]],
  },
  {
    name: "content larger than the budget is a group of its own",
    items: "a:3 b:25 c:3",
    budget: 10,
    groups: [["a"], ["b"], ["c"]],
  },
  {
    name: "a group of only what fetches nothing before one larger than the budget",
    items: "f:0 b:25",
    budget: 10,
    groups: [["f", "b"]],
  },
  { name: "exactly the budget", items: "a:5 b:5 c:5", budget: 10, groups: [["a", "b"], ["c"]] },
];

for (const { name, items, budget, groups } of CASES) {
  Deno.test(`contentGroups: ${name}`, () => {
    const parsed = items === "" ? [] : items.split(" ").map((item) => item.split(":"));
    const sizes = new Map(parsed.map(([key, bytes]) => [key!, Number(bytes)]));
    assertEquals(contentGroups([...sizes.keys()], (key) => sizes.get(key)!, budget), groups);
  });
}
