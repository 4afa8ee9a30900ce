import { join } from "node:path";
import {
  DEFAULT_SNAPSHOT_CONFIG,
  loadSnapshotConfig,
  parseSnapshotConfig,
  validateSnapshotConfig,
} from "../../lib/snapshot/mod.ts";
import { assertEquals, assertRejects, assertThrows } from "./_assert.ts";

Deno.test("validateSnapshotConfig() accepts whole numbers in range and fills defaults", () => {
  assertEquals(validateSnapshotConfig(undefined, "x"), { maxSnapshots: 100, maxAgeDays: 30 });
  assertEquals(validateSnapshotConfig({ max_snapshots: 5 }, "x"), {
    maxSnapshots: 5,
    maxAgeDays: 30,
  });
  assertEquals(validateSnapshotConfig({ max_age_days: "7" }, "flags"), {
    maxSnapshots: 100,
    maxAgeDays: 7,
  });
  assertEquals(validateSnapshotConfig({ other: true }, "x"), { ...DEFAULT_SNAPSHOT_CONFIG });
});

Deno.test("validateSnapshotConfig() refuses bad values with clear errors", () => {
  const cases: Array<[unknown, string]> = [
    [
      { max_snapshots: 0 },
      '"max_snapshots" in "c.yaml" must be a whole number from 1 to 1000000, not 0',
    ],
    [{ max_snapshots: 1.5 }, "not 1.5"],
    [{ max_snapshots: 1_000_001 }, "not 1000001"],
    [{ max_snapshots: "ten" }, 'not "ten"'],
    [{ max_age_days: -1 }, '"max_age_days"'],
    [{ max_age_days: 36_501 }, "from 1 to 36500"],
    [{ max_age_days: true }, "not true"],
  ];
  for (const [raw, message] of cases) {
    assertThrows(() => validateSnapshotConfig(raw, '"c.yaml"'), RangeError, message);
  }
  assertThrows(() => validateSnapshotConfig([1], "x"), TypeError, "must be a mapping");
});

Deno.test("parseSnapshotConfig() reads the chronicle section of YAML", () => {
  assertEquals(
    parseSnapshotConfig("chronicle:\n  max_snapshots: 10\n  max_age_days: 2\nother: 1\n", "f"),
    { maxSnapshots: 10, maxAgeDays: 2 },
  );
  assertEquals(parseSnapshotConfig("", "f"), { ...DEFAULT_SNAPSHOT_CONFIG });
  assertThrows(() => parseSnapshotConfig("chronicle: [1", "f"), SyntaxError, "Cannot read f");
  assertThrows(() => parseSnapshotConfig("- 1\n", "f"), TypeError, "top level");
});

Deno.test("loadSnapshotConfig() layers defaults, the file and overrides", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = join(dir, "config.yaml");
    await Deno.writeTextFile(file, "chronicle:\n  max_snapshots: 10\n  max_age_days: 2\n");
    assertEquals(await loadSnapshotConfig({ file }), { maxSnapshots: 10, maxAgeDays: 2 });
    assertEquals(
      await loadSnapshotConfig({ file, overrides: { max_snapshots: "3" } }),
      { maxSnapshots: 3, maxAgeDays: 2 },
    );
    const missing = join(dir, "none.yaml");
    assertEquals(await loadSnapshotConfig({ file: missing }), { ...DEFAULT_SNAPSHOT_CONFIG });
    await assertRejects(
      () => loadSnapshotConfig({ file: missing, required: true }),
      Error,
      "no such file",
    );
    await assertRejects(
      () => loadSnapshotConfig({ overrides: { max_age_days: "0" } }),
      RangeError,
      '"max_age_days" in flags',
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
