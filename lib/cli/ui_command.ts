import { errorMessage } from "../log/mod.ts";
import { jsonOrFail, requireRunning } from "./control_client.ts";
import { UsageError } from "./errors.ts";
import { LOCATE_ARGS, locateFromArgs } from "./locate_workspace.ts";
import { printJson, println } from "./output.ts";
import { parseCommandArgs } from "./parse_command_args.ts";

/**
 * `chronicle ui [--open] [--json]`: asks the running Chronicle, over its control socket,
 * for the UI's loopback listener and prints its URL (with `--open`, hands it to
 * `xdg-open` too).
 *
 * @param args The arguments after `ui`.
 * @returns The exit code.
 * @throws {CliError} When no Chronicle runs on the workspace.
 */
export async function uiCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("ui", args, {
    ...LOCATE_ARGS,
    open: { type: "boolean" },
    json: { type: "boolean" },
  });
  if (positionals.length > 0) {
    throw new UsageError(`chronicle ui takes no arguments, got "${positionals[0]}"`);
  }
  const layout = locateFromArgs(values);
  const response = await requireRunning(layout, "/ui/listener", { method: "POST" });
  const info = await jsonOrFail<{ url: string; port: number }>(response);
  if (values.json) printJson(info);
  else println(info.url);
  if (values.open) await openInBrowser(info.url);
  return 0;
}

/** Hands `url` to `xdg-open`; failing that, says so (the URL is printed already). */
async function openInBrowser(url: string): Promise<void> {
  try {
    const status = await new Deno.Command("xdg-open", {
      args: [url],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn().status;
    if (!status.success) throw new Error(`xdg-open exited with ${status.code}`);
  } catch (error) {
    console.error(`Could not open a browser (${errorMessage(error)}); open the address above.`);
  }
}
