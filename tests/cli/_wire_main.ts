// Runs `chronicle wire` on its own, for tests that need a real child process.
import { wireCommand } from "../../lib/cli/wire_command.ts";

Deno.exit(await wireCommand(Deno.args));
