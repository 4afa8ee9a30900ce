/**
 * `chronicle wire decode|encode`: framed bincode on stdin to JSON lines on stdout, and
 * back (PROTOCOL.md §1).
 *
 * @module
 */
import { encodeFrame, FrameReader, fromJson, toJson, WireError } from "../wire/mod.ts";
import { errorMessage } from "../log/mod.ts";

/** Where `wireCommand` reads and writes; defaults to the process's standard streams. */
export interface WireCommandIo {
  /** Input bytes. */
  stdin: ReadableStream<Uint8Array>;
  /** Output bytes. */
  stdout: WritableStream<Uint8Array>;
  /** Diagnostics. */
  stderr: WritableStream<Uint8Array>;
}

const USAGE = `usage: chronicle wire decode   framed bincode on stdin -> one JSON line per message
       chronicle wire encode   JSON lines on stdin -> framed bincode on stdout
`;

/** Output is written in batches of about this many bytes. */
const FLUSH_BYTES = 64 * 1024;

const encoder = new TextEncoder();

/**
 * Runs `chronicle wire …`. Streams are released, not closed, when it returns.
 *
 * @param args The arguments after `wire`: `["decode"]` or `["encode"]`.
 * @param io Streams to use instead of the process's stdin, stdout and stderr.
 * @returns The exit status: 0 success; 1 bad input, after writing everything before
 * it, with `error: …` on stderr; 2 bad usage.
 *
 * @example Decoding frames to JSON lines
 * ```ts
 * import { strictEqual } from "node:assert/strict";
 * import { encodeFrame } from "../wire/mod.ts";
 * import { wireCommand } from "./wire_command.ts";
 *
 * let out = "";
 * const stdout = new WritableStream<Uint8Array>({
 *   write(chunk) {
 *     out += new TextDecoder().decode(chunk);
 *   },
 * });
 * const stdin = ReadableStream.from([encodeFrame({ type: "Ack", up_to_sequence: 1n })]);
 * const code = await wireCommand(["decode"], { stdin, stdout, stderr: new WritableStream() });
 * strictEqual(code, 0);
 * strictEqual(out, '{"Ack":{"up_to_sequence":1}}\n');
 * ```
 */
export async function wireCommand(args: string[], io?: WireCommandIo): Promise<number> {
  const streams = io ?? {
    stdin: Deno.stdin.readable,
    stdout: Deno.stdout.writable,
    stderr: Deno.stderr.writable,
  };
  const [sub, ...rest] = args;
  if ((sub === "-h" || sub === "--help") && rest.length === 0) {
    await writeText(streams.stdout, USAGE);
    return 0;
  }
  if ((sub !== "decode" && sub !== "encode") || rest.length > 0) {
    const problem = sub === undefined
      ? "missing subcommand"
      : sub !== "decode" && sub !== "encode"
      ? `unknown subcommand '${sub}'`
      : `unexpected argument '${rest[0]}'`;
    await writeText(streams.stderr, `error: ${problem}\n${USAGE}`);
    return 2;
  }
  const out = streams.stdout.getWriter();
  let failure: string | null;
  try {
    failure = sub === "decode"
      ? await decode(streams.stdin, out)
      : await encode(streams.stdin, out);
  } catch (error) {
    failure = errorMessage(error);
  } finally {
    out.releaseLock();
  }
  if (failure === null) return 0;
  await writeText(streams.stderr, `error: ${failure.replaceAll("\n", " ")}\n`);
  return 1;
}

/** Frames to JSON lines; returns the problem that stopped it, if any. */
async function decode(
  stdin: ReadableStream<Uint8Array>,
  out: WritableStreamDefaultWriter<Uint8Array>,
): Promise<string | null> {
  const reader = new FrameReader();
  let frame = 0;
  let lines = "";
  let failure: string | null = null;
  try {
    for await (const chunk of stdin) {
      reader.push(chunk);
      for (const msg of reader) {
        lines += toJson(msg) + "\n";
        frame++;
      }
      if (lines.length >= FLUSH_BYTES) {
        await out.write(encoder.encode(lines));
        lines = "";
      }
    }
    reader.end();
  } catch (error) {
    if (!(error instanceof WireError)) throw error;
    failure = `frame ${frame + 1}: ${error.message}`;
  }
  if (lines.length > 0) await out.write(encoder.encode(lines));
  return failure;
}

/** JSON lines to frames; returns the problem that stopped it, if any. */
async function encode(
  stdin: ReadableStream<Uint8Array>,
  out: WritableStreamDefaultWriter<Uint8Array>,
): Promise<string | null> {
  const text = stdin.pipeThrough(new TextDecoderStream("utf-8", { fatal: true }));
  let lineNo = 0;
  let partial = "";
  let frames: Uint8Array[] = [];
  let size = 0;
  const flush = async () => {
    if (frames.length === 0) return;
    const batch = new Uint8Array(size);
    let at = 0;
    for (const f of frames) {
      batch.set(f, at);
      at += f.length;
    }
    frames = [];
    size = 0;
    await out.write(batch);
  };
  /** Encodes one line; returns the problem with it, if any. */
  const take = (line: string): string | null => {
    lineNo++;
    if (line.trim() === "") return null;
    try {
      const frame = encodeFrame(fromJson(line));
      frames.push(frame);
      size += frame.length;
      return null;
    } catch (error) {
      if (error instanceof WireError || error instanceof RangeError) {
        return `line ${lineNo}: ${error.message}`;
      }
      throw error;
    }
  };
  let failure: string | null = null;
  try {
    for await (const piece of text) {
      const parts = (partial + piece).split("\n");
      partial = parts.pop()!;
      for (const line of parts) {
        failure = take(line);
        if (failure !== null) break;
      }
      if (failure !== null) break;
      if (size >= FLUSH_BYTES) await flush();
    }
    if (failure === null) failure = take(partial);
  } catch (error) {
    // The only TypeError the stream raises is the fatal decoder's.
    if (!(error instanceof TypeError)) throw error;
    failure = `line ${lineNo + 1}: input is not valid UTF-8`;
  }
  await flush();
  return failure;
}

async function writeText(stream: WritableStream<Uint8Array>, text: string): Promise<void> {
  const writer = stream.getWriter();
  try {
    await writer.write(encoder.encode(text));
  } finally {
    writer.releaseLock();
  }
}
