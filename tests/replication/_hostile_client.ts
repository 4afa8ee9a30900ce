/**
 * A hostile peer for security tests: it speaks raw bytes on a replication socket (frames
 * it encodes itself, bare length headers, half frames) and holds connections open
 * without ever completing a handshake; plus a Chronicle daemon started as a child process
 * with the binaries' permissions and, optionally, a lowered open-file limit.
 *
 * @module
 */
import { BINARY_PERMISSIONS } from "../../lib/cli/sync_commands.ts";
import { encodeFrame, type WireMessage } from "../../lib/wire/mod.ts";
import { MAIN, PROJECT_ROOT } from "../_helpers/processes.ts";
import { waitFor } from "../_helpers/wait_for.ts";

/** One raw connection to a listener of the master (a Unix socket or a TCP port). */
export class HostileConnection {
  readonly conn: Deno.Conn;
  #closed = false;

  private constructor(conn: Deno.Conn) {
    this.conn = conn;
  }

  /** Connects to `path`. */
  static async unix(path: string): Promise<HostileConnection> {
    return new HostileConnection(await Deno.connect({ transport: "unix", path }));
  }

  /** Connects to `127.0.0.1:port`. */
  static async tcp(port: number): Promise<HostileConnection> {
    return new HostileConnection(await Deno.connect({ hostname: "127.0.0.1", port }));
  }

  /** Writes encoded messages back to back. */
  async sendMessages(messages: WireMessage[]): Promise<boolean> {
    const frames = messages.map((message) => encodeFrame(message));
    const total = frames.reduce((sum, frame) => sum + frame.length, 0);
    const bytes = new Uint8Array(total);
    let offset = 0;
    for (const frame of frames) {
      bytes.set(frame, offset);
      offset += frame.length;
    }
    return await this.write(bytes);
  }

  /** Writes a bare 4-byte little-endian length header. */
  sendLength(length: number): Promise<boolean> {
    const header = new Uint8Array(4);
    new DataView(header.buffer).setUint32(0, length, true);
    return this.write(header);
  }

  /**
   * Writes `count` filler bytes in pieces of `piece`.
   *
   * @returns False once the peer closed the connection (the write failed).
   */
  async sendFiller(count: number, piece = 1024 * 1024): Promise<boolean> {
    const filler = new Uint8Array(piece).fill(0x61);
    for (let sent = 0; sent < count; sent += piece) {
      if (!await this.write(filler.subarray(0, Math.min(piece, count - sent)))) return false;
    }
    return true;
  }

  /** Writes all of `bytes`; false when the connection is gone. */
  async write(bytes: Uint8Array): Promise<boolean> {
    try {
      let offset = 0;
      while (offset < bytes.length) offset += await this.conn.write(bytes.subarray(offset));
      return true;
    } catch {
      return false;
    }
  }

  /** Resolves once the peer closed the connection (what it sends is read and dropped). */
  async closedByPeer(): Promise<void> {
    const buffer = new Uint8Array(64 * 1024);
    try {
      while (await this.conn.read(buffer) !== null) { /* drained */ }
    } catch { /* reset: closed too */ }
  }

  /** Closes our side. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.conn.close();
    } catch { /* already closed */ }
  }
}

/** A Chronicle daemon started as a child process for hostile tests. */
export interface DaemonChild {
  process: Deno.ChildProcess;
  /** Its log lines so far. */
  logs(): string;
  /** Resident memory of the daemon in bytes (`VmRSS`), or null once it exited. */
  rss(): number | null;
  /** Whether it still runs. */
  alive(): boolean;
  /** SIGTERM, then waits. */
  stop(): Promise<void>;
}

/** Options for {@linkcode startDaemon}. */
export interface StartDaemonOptions {
  /** `ulimit -n` for the daemon. @default {undefined} (the inherited limit) */
  openFiles?: number;
}

/**
 * Starts `main.ts WORKSPACE …args` with the compiled binaries' permissions, through
 * `sh -c 'ulimit -n N; exec …'` when a limit is asked, and waits for its control socket.
 */
export async function startDaemon(
  workspace: string,
  args: string[],
  options: StartDaemonOptions = {},
): Promise<DaemonChild> {
  const command = [Deno.execPath(), "run", ...BINARY_PERMISSIONS, MAIN, workspace, ...args];
  const limit = options.openFiles === undefined ? "" : `ulimit -n ${options.openFiles}; `;
  const process = new Deno.Command("sh", {
    args: ["-c", `${limit}exec "$@"`, "sh", ...command],
    cwd: PROJECT_ROOT,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  let exited = false;
  const decoder = new TextDecoder();
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  };
  const drained = Promise.all([drain(process.stdout), drain(process.stderr)]);
  process.status.then(() => exited = true);
  const child: DaemonChild = {
    process,
    logs: () => text,
    alive: () => !exited,
    rss: () => {
      try {
        const status = Deno.readTextFileSync(`/proc/${process.pid}/status`);
        const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
        return kb === undefined ? null : Number(kb) * 1024;
      } catch {
        return null;
      }
    },
    stop: async () => {
      try {
        process.kill("SIGTERM");
      } catch { /* gone */ }
      await process.status;
      await drained;
    },
  };
  await waitFor("the daemon to run", () => {
    if (exited) throw new Error(`The daemon exited:\n${text}`);
    return text.includes("chronicle running");
  }, { timeoutMs: 60_000 });
  return child;
}

/**
 * Sends one raw HTTP/1.1 request and reads the answer until it is complete, the server
 * closes, or `deadlineMs` passes (then the connection is closed and the status is 0).
 *
 * @returns The status code (0 when none came) and the whole answer text.
 */
export async function rawHttp(
  port: number,
  request: string,
  deadlineMs = 10_000,
): Promise<{ status: number; text: string }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  // Closing the connection ends a read that would otherwise wait forever.
  const deadline = setTimeout(() => {
    try {
      conn.close();
    } catch { /* closed */ }
  }, deadlineMs);
  try {
    await conn.write(new TextEncoder().encode(request));
    let text = "";
    const buffer = new Uint8Array(16 * 1024);
    const decoder = new TextDecoder();
    for (;;) {
      const n = await conn.read(buffer).catch(() => null);
      if (n === null) break;
      text += decoder.decode(buffer.subarray(0, n), { stream: true });
      if (/\r\n\r\n/.test(text) && bodyComplete(text)) break;
    }
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? "0");
    return { status, text };
  } finally {
    clearTimeout(deadline);
    try {
      conn.close();
    } catch { /* closed */ }
  }
}

function bodyComplete(text: string): boolean {
  const [head, ...rest] = text.split("\r\n\r\n");
  const length = /content-length:\s*(\d+)/i.exec(head!)?.[1];
  if (length === undefined) return false;
  return new TextEncoder().encode(rest.join("\r\n\r\n")).length >= Number(length);
}
