import manifest from "../../deno.json" with { type: "json" };

/** Chronicle's version, from `deno.json`. */
export const VERSION: string = manifest.version;
