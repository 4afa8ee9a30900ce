/**
 * `chronicle-agent`: Chronicle as the master next to an AI agent. Replication is on and
 * the workspace is `/workspace` unless told otherwise, so
 * `chronicle-agent --ws-listen 0.0.0.0:3002` (with `CHRONICLE_TOKEN`) is all a container
 * needs. Every `chronicle` command works too (`chronicle-agent health`, `… checkpoint`).
 *
 * @module
 */
import { main } from "../main.ts";

if (import.meta.main) Deno.exit(await main(Deno.args, { role: "agent" }));
