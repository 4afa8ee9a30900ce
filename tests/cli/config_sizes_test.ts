import { deepStrictEqual as assertEquals, ok, strictEqual } from "node:assert/strict";
import { configCommand } from "../../lib/cli/config_command.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

Deno.test("chronicle config shows sizes in MiB and mode bits in octal for people, exact numbers in --json", async () => {
  await withTempDir(async (root) => {
    const run = async (args: string[]) => {
      const lines: string[] = [];
      const code = await configCommand(args, {
        env: {},
        print: (line) => lines.push(line),
        note: () => {},
      });
      strictEqual(code, 0);
      return lines.join("\n");
    };
    const human = await run([root, "--cache-limit", "10GiB", "--object-store", "s3://bucket/x"]);
    ok(/^max_writeback_bytes +64 MiB \(67108864 bytes\) /m.test(human), human);
    ok(/^cache_limit +10 GiB \(10737418240 bytes\) /m.test(human), human);
    ok(/^writeback_mode_bits +0777 /m.test(human), human);
    const json = JSON.parse(await run([root, "--json"]));
    assertEquals(json.max_writeback_bytes.value, 67108864);
    assertEquals(json.writeback_mode_bits.value, 0o777);
  }, "chronicle-config-sizes-");
});
