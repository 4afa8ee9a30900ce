/**
 * `chronicle-sandbox`: Chronicle as a replica inside a sandbox. The workspace is
 * `/workspace` and the master is `CHRONICLE_AGENT_URL` unless told otherwise, so
 * `chronicle-sandbox` with `CHRONICLE_AGENT_URL` and `CHRONICLE_TOKEN` set, or
 * `chronicle-sandbox /workspace --ws-connect URL`, is all a container needs.
 *
 * @module
 */
import { main } from "../main.ts";

if (import.meta.main) Deno.exit(await main(Deno.args, { role: "sandbox" }));
