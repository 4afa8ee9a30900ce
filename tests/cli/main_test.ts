import { strictEqual } from "node:assert/strict";
import { main } from "../../main.ts";

/** Runs `main` with stderr captured instead of printed. */
async function mainQuietly(args: string[]): Promise<{ code: unknown; stderr: string[] }> {
  const stderr: string[] = [];
  const original = console.error;
  console.error = (...parts: unknown[]) => stderr.push(parts.join(" "));
  try {
    return { code: await main(args), stderr };
  } finally {
    console.error = original;
  }
}

for (const name of ["toString", "constructor", "hasOwnProperty", "__proto__"]) {
  Deno.test(`chronicle ${name} is no command: Object.prototype's members are not dispatched`, async () => {
    // No folder of that name: a mistyped command, refused at usage before anything starts.
    const { code, stderr } = await mainQuietly([name, "--no-such-flag"]);
    strictEqual(code, 2, stderr.join("\n"));
    strictEqual(
      stderr[0],
      `Unknown command "${name}" (and no folder of that name to run on): see chronicle --help`,
    );
  });
}
