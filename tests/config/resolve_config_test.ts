import { join } from "node:path";
import { ConfigError } from "../../lib/config/mod.ts";
import {
  type ChronicleConfig,
  resolveConfig,
  type ResolveConfigOptions,
} from "../../lib/config/mod.ts";
import { defaultMaxConnections } from "../../lib/net/mod.ts";
import { assertEquals, assertThrows } from "../_helpers/assert.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

Deno.test("resolveConfig() gives every default", () => {
  const config = resolveConfig({ argv: [], env: {}, cwd: "/nonexistent/ws" });
  assertEquals(config, {
    workspace: "/nonexistent/ws",
    dataDir: "/nonexistent/ws/.chronicle",
    database: "/nonexistent/ws/.chronicle/chronicle.db",
    casDir: "/nonexistent/ws/.chronicle/cas",
    replication: false,
    socket: "/nonexistent/ws/.chronicle/chronicle.sock",
    localSync: false,
    ignore: [],
    insecure: false,
    logFormat: "text",
    quiet: false,
    heartbeatMs: 1000,
    debounceMs: 50,
    maxWritebackBytes: 64 * 1024 * 1024,
    maxConnections: defaultMaxConnections(),
    maxListenerConnections: Math.floor(defaultMaxConnections() / 2),
    handshakeTimeoutMs: 10_000,
    idleTimeoutMs: 60_000,
    maxPartialFrameBytes: 128 * 1024 * 1024,
    maxQueuedFetches: 256,
    writebackModeBits: 0o777,
    snapshots: { maxSnapshots: 100, maxAgeDays: 30 },
    noSnapshots: false,
    s3Region: "us-east-1",
    checkpointKeep: 10,
    sources: config.sources,
  });
  for (const [key, origin] of Object.entries(config.sources)) {
    assertEquals(origin, { source: "default" }, key);
  }
});

Deno.test("resolveConfig() takes flags over environment over config.yaml over defaults", async (t) => {
  await withTempDir(async (dir) => {
    const ws = join(dir, "ws");
    await Deno.mkdir(ws);
    await Deno.mkdir(join(ws, ".chronicle"));
    await Deno.writeTextFile(
      join(ws, ".chronicle/config.yaml"),
      [
        "heartbeat_ms: 300",
        "debounce_ms: 70",
        "max_writeback_bytes: 1MiB",
        "quiet: true",
        "ignore: [from-file]",
        "agent_id: file-agent",
        "chronicle:",
        "  max_snapshots: 7",
        "  max_age_days: 3",
        "data_dir: state",
      ].join("\n"),
    );
    const env = {
      CHRONICLE_HEARTBEAT_MS: "200",
      CHRONICLE_DEBOUNCE_MS: "60",
      CHRONICLE_IGNORE: "a, b ,",
      CHRONICLE_MAX_SNAPSHOTS: "8",
      CHRONICLE_LOG_FORMAT: "",
    };
    const argv = [ws, "--heartbeat-ms", "100", "--ignore", "x", "--ignore", "y"];
    const config = resolveConfig({ argv, env, cwd: dir });
    const table: { description: string; actual: unknown; expected: unknown }[] = [
      { description: "flag beats env and file", actual: config.heartbeatMs, expected: 100 },
      { description: "env beats file", actual: config.debounceMs, expected: 60 },
      {
        description: "file beats default",
        actual: config.maxWritebackBytes,
        expected: 1024 * 1024,
      },
      { description: "file boolean", actual: config.quiet, expected: true },
      { description: "repeated flag list", actual: config.ignore, expected: ["x", "y"] },
      { description: "file string", actual: config.agentId, expected: "file-agent" },
      { description: "env beats file section", actual: config.snapshots.maxSnapshots, expected: 8 },
      { description: "file section", actual: config.snapshots.maxAgeDays, expected: 3 },
      { description: "empty env is unset", actual: config.logFormat, expected: "text" },
      {
        description: "file path from file's folder",
        actual: config.dataDir,
        expected: join(ws, ".chronicle/state"),
      },
      {
        description: "derived database",
        actual: config.database,
        expected: join(ws, ".chronicle/state/chronicle.db"),
      },
      {
        description: "config file found in the data folder",
        actual: config.configFile,
        expected: join(ws, ".chronicle/config.yaml"),
      },
      {
        description: "flag source",
        actual: config.sources.heartbeatMs,
        expected: { source: "flag", name: "--heartbeat-ms" },
      },
      {
        description: "env source",
        actual: config.sources.debounceMs,
        expected: { source: "env", name: "CHRONICLE_DEBOUNCE_MS" },
      },
      {
        description: "file source",
        actual: config.sources["snapshots.maxAgeDays"],
        expected: { source: "file", name: "chronicle.max_age_days" },
      },
      {
        description: "positional source",
        actual: config.sources.workspace,
        expected: { source: "flag", name: "WORKSPACE" },
      },
    ];
    for (const row of table) {
      await t.step(row.description, () => assertEquals(row.actual, row.expected));
    }
    await t.step("env list is comma-separated", () => {
      assertEquals(resolveConfig({ argv: [ws], env, cwd: dir }).ignore, ["a", "b"]);
    });
    await t.step("file list when nothing else gives one", () => {
      assertEquals(resolveConfig({ argv: [ws], env: {}, cwd: dir }).ignore, ["from-file"]);
    });
  });
});

Deno.test("resolveConfig() finds config.yaml by --config, CHRONICLE_CONFIG, then the data folder, never the workspace", async (t) => {
  await withTempDir(async (dir) => {
    const ws = join(dir, "ws");
    const data = join(dir, "data");
    await Deno.mkdir(ws);
    await Deno.mkdir(data);
    const write = (path: string, agent: string) => Deno.writeTextFile(path, `agent_id: ${agent}\n`);
    await write(join(data, "config.yaml"), "in-data");
    await write(join(dir, "explicit.yaml"), "explicit");
    await write(join(dir, "from-env.yaml"), "from-env");
    const base = { cwd: dir } as const;
    const agent = (options: Omit<ResolveConfigOptions, "cwd">) =>
      resolveConfig({ ...options, ...base }).agentId;

    await t.step("data folder when the workspace has none", () => {
      assertEquals(agent({ argv: [ws, "--data-dir", data], env: {} }), "in-data");
    });
    await t.step("data folder from the environment", () => {
      assertEquals(agent({ argv: [ws], env: { CHRONICLE_DATA_DIR: data } }), "in-data");
    });
    // The project's own config.yaml, with keys Chronicle does not know: never read.
    await Deno.writeTextFile(join(ws, "config.yaml"), "server:\n  port: 8080\n");
    await t.step("WORKSPACE/config.yaml belongs to the user and is never read", () => {
      assertEquals(agent({ argv: [ws, "--data-dir", data], env: {} }), "in-data");
      assertEquals(resolveConfig({ argv: [ws], env: {}, cwd: dir }).configFile, undefined);
    });
    await t.step("CHRONICLE_CONFIG before both", () => {
      assertEquals(agent({ argv: [ws], env: { CHRONICLE_CONFIG: "from-env.yaml" } }), "from-env");
    });
    await t.step("--config before CHRONICLE_CONFIG", () => {
      const env = { CHRONICLE_CONFIG: "from-env.yaml" };
      assertEquals(agent({ argv: [ws, "--config", "explicit.yaml"], env }), "explicit");
    });
    await t.step("the configFile option before the search", () => {
      assertEquals(
        agent({ argv: [ws], env: {}, configFile: join(dir, "explicit.yaml") }),
        "explicit",
      );
    });
    await t.step("a missing explicit file is an error", () => {
      assertThrows(
        () => agent({ argv: [ws, "--config", "nope.yaml"], env: {} }),
        ConfigError,
        `Cannot read config file "${join(dir, "nope.yaml")}": no such file`,
      );
    });
  });
});

Deno.test("resolveConfig() treats --connect and --ws-connect as one choice", async (t) => {
  const table: {
    description: string;
    argv: string[];
    env: Record<string, string>;
    expected: Pick<ChronicleConfig, "connect" | "wsConnect">;
  }[] = [
    {
      description: "CHRONICLE_AGENT_URL is --ws-connect",
      argv: [],
      env: { CHRONICLE_AGENT_URL: "ws://agent:3002" },
      expected: { wsConnect: "ws://agent:3002" },
    },
    {
      description: "CHRONICLE_WS_CONNECT before CHRONICLE_AGENT_URL",
      argv: [],
      env: { CHRONICLE_WS_CONNECT: "wss://a:1", CHRONICLE_AGENT_URL: "ws://b:2" },
      expected: { wsConnect: "wss://a:1" },
    },
    {
      description: "a --connect flag overrides CHRONICLE_AGENT_URL",
      argv: ["--connect", "/run/m.sock"],
      env: { CHRONICLE_AGENT_URL: "ws://agent:3002" },
      expected: { connect: "/run/m.sock" },
    },
    {
      description: "a --ws-connect flag overrides CHRONICLE_CONNECT",
      argv: ["--ws-connect", "ws://h:1"],
      env: { CHRONICLE_CONNECT: "/run/m.sock" },
      expected: { wsConnect: "ws://h:1" },
    },
  ];
  for (const row of table) {
    await t.step(row.description, () => {
      const config = resolveConfig({ argv: ["/tmp/ws", ...row.argv], env: row.env });
      assertEquals({ connect: config.connect, wsConnect: config.wsConnect }, {
        connect: undefined,
        wsConnect: undefined,
        ...row.expected,
      });
    });
  }
});

Deno.test("resolveConfig() applies the roles' defaults", async (t) => {
  await t.step("agent: replication and /workspace, ignoring CHRONICLE_AGENT_URL", () => {
    const config = resolveConfig({
      argv: ["--ws-listen", "0.0.0.0:3002"],
      env: { CHRONICLE_TOKEN: "t0ken", CHRONICLE_AGENT_URL: "ws://elsewhere:3002" },
      role: "agent",
    });
    assertEquals([config.workspace, config.replication, config.wsConnect], [
      "/workspace",
      true,
      undefined,
    ]);
    assertEquals(config.sources.replication, { source: "flag", name: "--ws-listen" });
  });
  await t.step("agent: replication is a default", () => {
    const config = resolveConfig({ argv: [], env: {}, role: "agent" });
    assertEquals([config.replication, config.sources.replication], [true, { source: "default" }]);
  });
  await t.step("sandbox: /workspace and CHRONICLE_AGENT_URL", () => {
    const config = resolveConfig({
      argv: [],
      env: { CHRONICLE_AGENT_URL: "ws://a:3002" },
      role: "sandbox",
    });
    assertEquals([config.workspace, config.wsConnect, config.replication], [
      "/workspace",
      "ws://a:3002",
      false,
    ]);
  });
  await t.step("a given workspace wins over /workspace", () => {
    const config = resolveConfig({
      argv: ["/srv/w", "--connect", "/s.sock"],
      env: {},
      role: "sandbox",
    });
    assertEquals(config.workspace, "/srv/w");
  });
});

Deno.test("resolveConfig() accepts the forms every kind of value may take", async (t) => {
  const table: {
    description: string;
    argv: string[];
    env?: Record<string, string>;
    key: keyof ChronicleConfig;
    expected: unknown;
  }[] = [
    {
      description: "IPv6 listener",
      argv: ["--http", "[::1]:8080"],
      key: "http",
      expected: "[::1]:8080",
    },
    {
      description: "port 0",
      argv: ["--http", "localhost:0"],
      key: "http",
      expected: "localhost:0",
    },
    {
      description: "wss URL with path",
      argv: ["--ws-connect", "wss://h.example/ws?x=1"],
      key: "wsConnect",
      expected: "wss://h.example/ws?x=1",
    },
    {
      description: "size in GiB capped by frame",
      argv: ["--max-writeback-bytes", "100MiB"],
      key: "maxWritebackBytes",
      expected: 100 * 1024 * 1024,
    },
    {
      description: "size in KiB",
      argv: ["--max-writeback-bytes", "4 KiB"],
      key: "maxWritebackBytes",
      expected: 4096,
    },
    {
      description: "env boolean yes",
      argv: [],
      env: { CHRONICLE_QUIET: "YES" },
      key: "quiet",
      expected: true,
    },
    {
      description: "env boolean 0",
      argv: [],
      env: { CHRONICLE_NO_SNAPSHOTS: "0" },
      key: "noSnapshots",
      expected: false,
    },
    {
      description: "relative path from cwd",
      argv: ["--database", "x/y.db"],
      key: "database",
      expected: "/tmp/ws/x/y.db",
    },
    {
      description: "-C workspace",
      argv: ["-C", "/srv/other"],
      key: "workspace",
      expected: "/srv/other",
    },
    {
      description: "json logs",
      argv: ["--log-format", "json"],
      key: "logFormat",
      expected: "json",
    },
    { description: "debounce 0", argv: ["--debounce-ms", "0"], key: "debounceMs", expected: 0 },
    {
      description: "insecure listener",
      argv: ["--ws-listen", "0.0.0.0:1", "--insecure"],
      key: "wsListen",
      expected: "0.0.0.0:1",
    },
    {
      description: "token makes a public listener fine",
      argv: ["--http", "0.0.0.0:1", "--token", "abc"],
      key: "http",
      expected: "0.0.0.0:1",
    },
    {
      description: "sandbox id",
      argv: ["--sandbox-id", "sbx_1.a:b@c-d"],
      key: "sandboxId",
      expected: "sbx_1.a:b@c-d",
    },
  ];
  for (const row of table) {
    await t.step(row.description, () => {
      const config = resolveConfig({ argv: row.argv, env: row.env ?? {}, cwd: "/tmp/ws" });
      assertEquals(config[row.key], row.expected);
    });
  }
});

Deno.test("resolveConfig() rejects every bad input with a message naming it", async (t) => {
  await withTempDir(async (dir) => {
    const file = (name: string, text: string) => {
      const path = join(dir, name);
      Deno.writeTextFileSync(path, text);
      return path;
    };
    const table: {
      description: string;
      argv?: string[];
      env?: Record<string, string>;
      message: string;
    }[] = [
      {
        description: "unknown option",
        argv: ["--frobnicate"],
        message: 'Unknown option "--frobnicate"',
      },
      { description: "unknown short option", argv: ["-x"], message: 'Unknown option "-x"' },
      { description: "missing value", argv: ["--http"], message: 'Option "--http" needs a value' },
      {
        description: "value for a boolean",
        argv: ["--quiet=yes"],
        message: 'Option "--quiet" takes no value',
      },
      {
        description: "two workspaces",
        argv: ["a", "b"],
        message: 'Expected one workspace, got 2: "a", "b"',
      },
      {
        description: "positional and -C",
        argv: ["a", "-C", "b"],
        message: 'Give the workspace once: "a" and -C "b"',
      },
      {
        description: "not a number",
        argv: ["--heartbeat-ms", "fast"],
        message: 'Invalid value "fast" for --heartbeat-ms: expected a whole number of milliseconds',
      },
      {
        description: "negative number",
        argv: ["--debounce-ms=-1"],
        message: 'Invalid value "-1" for --debounce-ms: expected a whole number of milliseconds',
      },
      {
        description: "fraction",
        argv: ["--max-age-days", "1.5"],
        message: 'Invalid value "1.5" for --max-age-days: expected a whole number of days',
      },
      {
        description: "below minimum",
        argv: ["--heartbeat-ms", "5"],
        message: 'Invalid value "5" for --heartbeat-ms: must be at least 10',
      },
      {
        description: "above maximum",
        argv: ["--debounce-ms", "60001"],
        message: 'Invalid value "60001" for --debounce-ms: must be at most 60000',
      },
      {
        description: "zero snapshots",
        argv: ["--max-snapshots", "0"],
        message: 'Invalid value "0" for --max-snapshots: must be at least 1',
      },
      {
        description: "write-back above the most (a size, said for people)",
        argv: ["--max-writeback-bytes", "65GiB"],
        message: 'Invalid value "65GiB" for --max-writeback-bytes: must be at most 64 GiB',
      },
      {
        description: "unknown size unit",
        argv: ["--max-writeback-bytes", "3MB"],
        message:
          'Invalid value "3MB" for --max-writeback-bytes: expected a byte count such as 67108864 or 64MiB (units B, KiB, MiB, GiB)',
      },
      {
        description: "host without port",
        argv: ["--http", "localhost"],
        message:
          'Invalid value "localhost" for --http: expected HOST:PORT such as "127.0.0.1:3002", got "localhost"',
      },
      {
        description: "port too large",
        argv: ["--ws-listen", "127.0.0.1:70000"],
        message:
          'Invalid value "127.0.0.1:70000" for --ws-listen: Port 70000 in "127.0.0.1:70000" is above 65535',
      },
      {
        description: "port only",
        argv: ["--ws-listen", ":3002"],
        message:
          'Invalid value ":3002" for --ws-listen: expected HOST:PORT such as "127.0.0.1:3002", got ":3002"',
      },
      {
        description: "brackets around IPv4",
        argv: ["--http", "[127.0.0.1]:1"],
        message:
          'Invalid value "[127.0.0.1]:1" for --http: Brackets in "[127.0.0.1]:1" are for IPv6 addresses only',
      },
      {
        description: "http URL for ws-connect",
        argv: ["--ws-connect", "http://h:1"],
        message:
          'Invalid value "http://h:1" for --ws-connect: expected a ws:// or wss:// URL, not http://',
      },
      {
        description: "not a URL",
        argv: ["--ws-connect", "agent:3002x"],
        message:
          'Invalid value "agent:3002x" for --ws-connect: expected a ws:// or wss:// URL, not agent://',
      },
      {
        description: "garbage URL",
        argv: ["--ws-connect", "::"],
        message: 'Invalid value "::" for --ws-connect: expected a ws:// or wss:// URL',
      },
      {
        description: "bad env URL names the variable",
        env: { CHRONICLE_AGENT_URL: "https://a" },
        message:
          'Invalid value "https://a" for CHRONICLE_AGENT_URL: expected a ws:// or wss:// URL, not https://',
      },
      {
        description: "bad log format",
        argv: ["--log-format", "xml"],
        message: 'Invalid value "xml" for --log-format: expected text or json',
      },
      {
        description: "bad env boolean",
        env: { CHRONICLE_REPLICATION: "maybe" },
        message: 'Invalid value "maybe" for CHRONICLE_REPLICATION: expected true or false',
      },
      {
        description: "bad id",
        argv: ["--agent-id", "has space"],
        message:
          'Invalid value "has space" for --agent-id: expected 1 to 128 letters, digits or . _ : @ - starting with a letter or digit',
      },
      {
        description: "reserved sandbox id",
        argv: ["--sandbox-id", "local", "--connect", "/s"],
        message: 'Sandbox id "local" is reserved for origins',
      },
      {
        description: "token with space hides the value",
        argv: ["--token", "a b"],
        message: "Invalid value for --token: expected printable ASCII without spaces",
      },
      {
        description: "empty path",
        argv: ["--data-dir", ""],
        message: 'Invalid value "" for --data-dir: expected a path',
      },
      {
        description: "empty --config",
        argv: ["--config="],
        message: 'Invalid value "" for --config: expected a file',
      },
      {
        description: "empty ignore pattern",
        argv: ["--ignore", " "],
        message: 'Invalid value " " for --ignore: expected non-empty patterns',
      },
      {
        description: "master and replica",
        argv: ["--replication", "--connect", "/s.sock"],
        message:
          'A master (--replication or --ws-listen) cannot also be a replica (--connect "/s.sock")',
      },
      {
        description: "listener and replica",
        argv: ["--ws-listen", "127.0.0.1:1", "--ws-connect", "ws://h:1"],
        message:
          'A master (--replication or --ws-listen) cannot also be a replica (--ws-connect "ws://h:1")',
      },
      {
        description: "two masters from one source",
        argv: ["--connect", "/s", "--ws-connect", "ws://h:1"],
        message: "Give one master to connect to: --connect and --ws-connect are both set",
      },
      {
        description: "local sync without master",
        argv: ["--local-sync"],
        message: "--local-sync needs a master: give --connect PATH or --ws-connect URL",
      },
      {
        description: "public listener without token",
        argv: ["--ws-listen", "0.0.0.0:3002"],
        message:
          'Refusing to listen on "0.0.0.0:3002" (--ws-listen) without a token: give --token or CHRONICLE_TOKEN, or --insecure',
      },
      {
        description: "public REST without token",
        argv: ["--http", "[::]:8080"],
        message:
          'Refusing to listen on "[::]:8080" (--http) without a token: give --token or CHRONICLE_TOKEN, or --insecure',
      },
      {
        description: "socket path too long",
        argv: ["--connect", `/${"s".repeat(120)}`],
        message: `Socket path "/${"s".repeat(120)}" is 121 bytes; Unix sockets allow at most 107`,
      },
      {
        description: "config not YAML",
        argv: ["--config", file("bad.yaml", "a: [1,\n")],
        message: `Config file "${join(dir, "bad.yaml")}" is not valid YAML:`,
      },
      {
        description: "config not a mapping",
        argv: ["--config", file("list.yaml", "- a\n")],
        message: `Config file "${join(dir, "list.yaml")}" must hold a mapping of keys to values`,
      },
      {
        description: "unknown config key",
        argv: ["--config", file("unknown.yaml", "heartbeat: 3\n")],
        message: `Unknown key "heartbeat" in "${join(dir, "unknown.yaml")}"`,
      },
      {
        description: "unknown key in section",
        argv: ["--config", file("section.yaml", "chronicle:\n  max_snaps: 3\n")],
        message: `Unknown key "chronicle.max_snaps" in "${join(dir, "section.yaml")}"`,
      },
      {
        description: "section not a mapping",
        argv: ["--config", file("flat.yaml", "chronicle: 3\n")],
        message: `Key "chronicle" in "${
          join(dir, "flat.yaml")
        }" must hold max_snapshots and max_age_days`,
      },
      {
        description: "file value of the wrong type",
        argv: ["--config", file("type.yaml", "http: [1]\n")],
        message: `Invalid value "[1]" for http in "${join(dir, "type.yaml")}": expected a string`,
      },
      {
        description: "file number out of range",
        argv: ["--config", file("range.yaml", "chronicle:\n  max_age_days: 0\n")],
        message: `Invalid value "0" for chronicle.max_age_days in "${
          join(dir, "range.yaml")
        }": must be at least 1`,
      },
      {
        description: "a negative number is a bad value, not a missing one",
        argv: ["--heartbeat-ms", "-5"],
        message: `Invalid value "-5" for --heartbeat-ms: expected a whole number of milliseconds`,
      },
      {
        description: "a negative size",
        argv: ["--max-writeback-bytes", "-1"],
        message: `Invalid value "-1" for --max-writeback-bytes: expected a byte count`,
      },
      {
        description: "a data folder under /proc names the flag (not Deno's --allow-all)",
        argv: ["--data-dir", "/proc/nope"],
        message:
          `Invalid value "/proc/nope" for --data-dir: /proc is the system's own folder, not a place for Chronicle's files`,
      },
      {
        description: "a workspace under /dev",
        argv: ["/dev/shm/ws"],
        message: `Invalid value "/dev/shm/ws" for WORKSPACE: /dev is the system's own folder`,
      },
      {
        description: "a CAS under /sys from the environment",
        env: { CHRONICLE_CAS_DIR: "/sys" },
        message: `Invalid value "/sys" for CHRONICLE_CAS_DIR: /sys is the system's own folder`,
      },
      {
        description: "file fraction",
        argv: ["--config", file("frac.yaml", "heartbeat_ms: 20.5\n")],
        message: `Invalid value "20.5" for heartbeat_ms in "${
          join(dir, "frac.yaml")
        }": expected a whole number of milliseconds`,
      },
    ];
    for (const row of table) {
      await t.step(row.description, () => {
        const error = assertThrows(
          () => resolveConfig({ argv: row.argv ?? [], env: row.env ?? {}, cwd: dir }),
          ConfigError,
        );
        if (!error.message.startsWith(row.message)) {
          throw new Error(
            `Expected a message starting ${JSON.stringify(row.message)}, got ${
              JSON.stringify(error.message)
            }`,
          );
        }
      });
    }
  });
});

Deno.test("resolveConfig() requires the sandbox's agent", () => {
  assertThrows(
    () => resolveConfig({ argv: [], env: {}, role: "sandbox" }),
    ConfigError,
    "The sandbox needs its agent: give --ws-connect URL, --connect PATH or CHRONICLE_AGENT_URL",
  );
});

Deno.test("resolveConfig() gives local-sync its longer debounce unless one is set", () => {
  const base = { env: {}, cwd: "/nonexistent/ws" };
  const localSync = resolveConfig({ ...base, argv: ["--local-sync", "--connect", "/tmp/m.sock"] });
  assertEquals([localSync.debounceMs, localSync.sources.debounceMs], [300, { source: "default" }]);
  const chosen = resolveConfig({
    ...base,
    argv: ["--local-sync", "--connect", "/tmp/m.sock", "--debounce-ms", "20"],
  });
  assertEquals(chosen.debounceMs, 20);
  const replica = resolveConfig({ ...base, argv: ["--connect", "/tmp/m.sock"] });
  assertEquals(replica.debounceMs, 50);
});

Deno.test("resolveConfig() reads the object store's options", async (t) => {
  const table: { description: string; argv: string[]; expected: unknown }[] = [
    {
      description: "an interval in minutes",
      argv: ["--checkpoint-interval", "15m", "--object-store", "s3://fleet/a"],
      expected: 900_000,
    },
    {
      description: "a bare number is seconds",
      argv: ["--checkpoint-interval", "90", "--object-store", "s3://fleet/a"],
      expected: 90_000,
    },
    {
      description: "hours",
      argv: ["--checkpoint-interval", "1h", "--object-store", "s3://fleet/a"],
      expected: 3_600_000,
    },
    {
      description: "an interval without an object store",
      argv: ["--checkpoint-interval", "1h"],
      expected: ConfigError,
    },
    {
      description: "a cache limit without an object store",
      argv: ["--cache-limit", "1GiB"],
      expected: ConfigError,
    },
    { description: "too short", argv: ["--checkpoint-interval", "10ms"], expected: ConfigError },
    {
      description: "not a duration",
      argv: ["--checkpoint-interval", "soon"],
      expected: ConfigError,
    },
    {
      description: "a bucket location",
      argv: ["--object-store", "s3://fleet/a1"],
      expected: "s3://fleet/a1",
    },
    { description: "not s3", argv: ["--object-store", "gs://fleet"], expected: ConfigError },
    {
      description: "an endpoint",
      argv: ["--s3-endpoint", "http://127.0.0.1:9000"],
      expected: "http://127.0.0.1:9000",
    },
    {
      description: "an endpoint that is not http",
      argv: ["--s3-endpoint", "ftp://x"],
      expected: ConfigError,
    },
  ];
  for (const { description, argv, expected } of table) {
    await t.step(description, () => {
      const resolve = () => resolveConfig({ argv, env: {}, cwd: "/nonexistent/ws" });
      if (expected === ConfigError) {
        assertThrows(resolve, ConfigError);
        return;
      }
      const config = resolve();
      const value = argv[0] === "--checkpoint-interval"
        ? config.checkpointInterval
        : argv[0] === "--object-store"
        ? config.objectStore
        : config.s3Endpoint;
      assertEquals(value, expected);
    });
  }
});

Deno.test("resolveConfig() reads --writeback-mode-bits in octal and refuses anything else", async (t) => {
  const cases = [
    { description: "leading zero", input: "0755", expected: 0o755 },
    { description: "bare digits", input: "755", expected: 0o755 },
    { description: "0o prefix", input: "0o4755", expected: 0o4755 },
  ];
  for (const { description, input, expected } of cases) {
    await t.step(description, () => {
      const config = resolveConfig({
        argv: ["--writeback-mode-bits", input],
        env: {},
        cwd: "/nonexistent/ws",
      });
      assertEquals(config.writebackModeBits, expected);
    });
  }
  for (const bad of ["0x1ff", "789", "99999"]) {
    await t.step(`refuses "${bad}"`, () => {
      let failed = false;
      try {
        resolveConfig({ argv: ["--writeback-mode-bits", bad], env: {}, cwd: "/nonexistent/ws" });
      } catch (error) {
        failed = error instanceof Error && error.message.includes("writeback-mode-bits");
      }
      assertEquals(failed, true);
    });
  }
});
