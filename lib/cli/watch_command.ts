/**
 * `chronicle watch`: a live tail of the iterations the running Chronicle records, read
 * from its `GET /events` stream on the control socket.
 *
 * @module
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { errorMessage } from "../log/mod.ts";
import type { WorkspaceLayout } from "../workspace/mod.ts";
import { isNotRunning, jsonOrFail } from "./control_client.ts";
import { CliError, UsageError } from "./errors.ts";
import { LOCATE_ARGS, locateFromArgs } from "./locate_workspace.ts";
import { println } from "./output.ts";
import { integerArg, parseCommandArgs } from "./parse_command_args.ts";

/** One iteration as the `iteration` event carries it. */
interface IterationEvent {
  path: string;
  iteration: number;
  sequence: number;
  timestamp: number;
  size: number;
  origin: string;
  deleted: boolean;
}

/**
 * `chronicle watch [--since SEQ] [--path PREFIX] [--origin X] [--json]`.
 *
 * @param args The arguments after `watch`.
 * @returns 0 when stopped by Ctrl-C (or SIGTERM); 1 when Chronicle stopped or is not
 * running.
 */
export async function watchCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("watch", args, {
    ...LOCATE_ARGS,
    json: { type: "boolean" },
    since: { type: "string" },
    path: { type: "string" },
    origin: { type: "string" },
  });
  if (positionals.length > 0) {
    throw new UsageError(
      "Usage: chronicle watch [--since SEQ] [--path PREFIX] [--origin ORIGIN] [--json]",
    );
  }
  const since = integerArg("--since", values.since);
  const layout = locateFromArgs(values);
  const query = new URLSearchParams();
  if (since !== undefined) query.set("since", String(since));
  if (values.path !== undefined) query.set("path", values.path);
  if (values.origin !== undefined) query.set("origin", values.origin);
  const stop = new AbortController();
  const stopOn = (["SIGINT", "SIGTERM"] as const).map((name) => {
    const handler = () => stop.abort();
    Deno.addSignalListener(name, handler);
    return () => Deno.removeSignalListener(name, handler);
  });
  try {
    return await tail(layout, `/events?${query}`, stop.signal, values.json === true);
  } finally {
    for (const remove of stopOn) remove();
  }
}

async function tail(
  layout: WorkspaceLayout,
  url: string,
  stop: AbortSignal,
  json: boolean,
): Promise<number> {
  const client = Deno.createHttpClient({
    proxy: { transport: "unix", path: layout.controlSocket },
  });
  try {
    const response = await open(layout, client, url, stop);
    if (!response) return 0; // stopped before Chronicle answered
    console.error(
      `watching ${layout.root} after sequence ${
        response.headers.get("x-chronicle-sequence") ?? "?"
      } (Ctrl-C to stop)`,
    );
    let ended = false;
    const parser = createParser({
      onEvent(message: EventSourceMessage) {
        if (message.event === "end") ended = true;
        if (message.event !== "iteration") return;
        if (json) println(message.data);
        else println(describe(JSON.parse(message.data) as IterationEvent));
      },
    });
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body!) {
        parser.feed(decoder.decode(chunk, { stream: true }));
      }
    } catch (error) {
      if (stop.aborted) {
        console.error("stopped watching");
        return 0;
      }
      throw new CliError(`The connection to Chronicle broke: ${errorMessage(error)}`);
    }
    throw new CliError(
      ended
        ? `Chronicle on "${layout.root}" stopped: nothing more to watch`
        : `The connection to Chronicle on "${layout.root}" was lost: is it still running?`,
    );
  } finally {
    client.close();
  }
}

/** Opens the stream; `undefined` when stopped meanwhile. */
async function open(
  layout: WorkspaceLayout,
  client: Deno.HttpClient,
  url: string,
  stop: AbortSignal,
): Promise<Response | undefined> {
  let response: Response;
  try {
    response = await fetch(`http://chronicle${url}`, { client, signal: stop });
  } catch (error) {
    if (stop.aborted) return undefined;
    if (isNotRunning(error)) {
      throw new CliError(
        `No Chronicle is running on "${layout.root}": start it (chronicle ${layout.root}) and watch again`,
      );
    }
    throw error;
  }
  if (!response.ok) await jsonOrFail(response); // throws the answer's error
  return response;
}

/** `14:03:07.123  seq 42  local  src/a.ts  1.2 KiB`, in local time. */
function describe(event: IterationEvent): string {
  const time = new Date(event.timestamp);
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  const clock = `${pad(time.getHours())}:${pad(time.getMinutes())}:${pad(time.getSeconds())}.${
    pad(time.getMilliseconds(), 3)
  }`;
  const size = event.deleted ? "deleted" : bytes(event.size);
  return `${clock}  seq ${event.sequence}  ${event.origin}  ${event.path}  ${size}`;
}

function bytes(size: number): string {
  if (size < 1024) return `${size} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = size / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
