import { deepStrictEqual as assertEquals, ok, strictEqual } from "node:assert/strict";
import { configCommand } from "../../lib/cli/config_command.ts";
import { formatBytes, sizesForPeople } from "../../lib/cli/output.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

Deno.test("formatBytes() and sizesForPeople() give sizes in binary units", async (t) => {
  const sizes = [
    { description: "under a KiB", input: 1023, expected: "1023 bytes" },
    { description: "one", input: 1, expected: "1 byte" },
    { description: "exact KiB", input: 2048, expected: "2 KiB" },
    { description: "a fraction", input: 1536, expected: "1.5 KiB" },
    { description: "the default write-back limit", input: 64 * 1024 * 1024, expected: "64 MiB" },
    { description: "the limit over WebSocket", input: 67043323, expected: "63.9 MiB" },
    { description: "GiB", input: 10 * 1024 ** 3, expected: "10 GiB" },
  ];
  for (const { description, input, expected } of sizes) {
    await t.step(description, () => strictEqual(formatBytes(input), expected));
  }
  const messages = [
    {
      description: "a refused write-back",
      input: "too large: 70000000 bytes exceed the write-back limit of 67043323",
      expected: "too large: 66.8 MiB exceed the write-back limit of 63.9 MiB",
    },
    { description: "no sizes", input: "changed on the master", expected: "changed on the master" },
    { description: "small numbers stay", input: "3 bytes over", expected: "3 bytes over" },
  ];
  for (const { description, input, expected } of messages) {
    await t.step(description, () => strictEqual(sizesForPeople(input), expected));
  }
});

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
