import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { wireCommand } from "../../lib/cli/wire_command.ts";
import { encodeFrame } from "../../lib/wire/mod.ts";
import { runChronicle } from "../_helpers/processes.ts";
import { readVector } from "../wire/_vectors.ts";

const WIRE_MAIN = new URL("./_wire_main.ts", import.meta.url).pathname;

/** Runs `wire ARGS` in a child process with `input` on stdin (and no permissions). */
async function child(args: string[], input: Uint8Array) {
  const { code, bytes, stderr } = await runChronicle(args, {
    script: WIRE_MAIN,
    permissions: ["--quiet", "--no-prompt"],
    stdin: input,
  });
  return { code, stdout: bytes, stderr };
}

/** Runs `wireCommand` in this process on in-memory streams. */
async function inProcess(args: string[], input: Uint8Array) {
  const out: Uint8Array[] = [];
  let err = "";
  const code = await wireCommand(args, {
    stdin: ReadableStream.from([input]),
    stdout: new WritableStream({
      write(chunk) {
        out.push(chunk.slice());
      },
    }),
    stderr: new WritableStream({
      write(chunk) {
        err += new TextDecoder().decode(chunk);
      },
    }),
  });
  const stdout = new Uint8Array(out.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of out) {
    stdout.set(c, at);
    at += c.length;
  }
  return { code, stdout, stderr: err, text: new TextDecoder().decode(stdout) };
}

Deno.test("chronicle wire round-trips all.frames and all.jsonl through a child process", async (t) => {
  const frames = readVector("all.frames");
  const jsonl = readVector("all.jsonl");
  await t.step("decode", async () => {
    const { code, stdout, stderr } = await child(["decode"], frames);
    strictEqual(stderr, "");
    strictEqual(code, 0);
    deepStrictEqual(stdout, jsonl);
  });
  await t.step("encode", async () => {
    const { code, stdout, stderr } = await child(["encode"], jsonl);
    strictEqual(stderr, "");
    strictEqual(code, 0);
    deepStrictEqual(stdout, frames);
  });
  await t.step("decode stops at a bad frame with exit 1", async () => {
    const bad = readVector("invalid/invalid_bool.bin");
    const input = new Uint8Array(frames.length + bad.length);
    input.set(frames);
    input.set(bad, frames.length);
    const { code, stdout, stderr } = await child(["decode"], input);
    strictEqual(code, 1);
    deepStrictEqual(stdout, jsonl);
    strictEqual(stderr.split("\n").length, 2);
    strictEqual(stderr.startsWith("error: frame 34: Invalid bool byte '2'"), true, stderr);
  });
});

Deno.test("wireCommand() reports bad input after writing what came before", async (t) => {
  const ack = encodeFrame({ type: "Ack", up_to_sequence: 1n });
  await t.step("truncated frame", async () => {
    const input = new Uint8Array(ack.length * 2 - 1);
    input.set(ack);
    input.set(ack.subarray(0, ack.length - 1), ack.length);
    const r = await inProcess(["decode"], input);
    strictEqual(r.code, 1);
    strictEqual(r.text, '{"Ack":{"up_to_sequence":1}}\n');
    strictEqual(r.stderr.startsWith("error: frame 2: Stream ended inside a frame payload"), true);
  });
  await t.step("bad JSON line", async () => {
    const input = new TextEncoder().encode(
      '{"Ack":{"up_to_sequence":1}}\n\n{"Ack":{"up_to_sequence":1.5}}\n{"Ack":{"up_to_sequence":2}}\n',
    );
    const r = await inProcess(["encode"], input);
    strictEqual(r.code, 1);
    deepStrictEqual(r.stdout, ack);
    strictEqual(r.stderr, "error: line 3: Number '1.5' is not an integer\n");
  });
  await t.step("invalid UTF-8", async () => {
    const r = await inProcess(["encode"], new Uint8Array([0x7b, 0xff, 0x0a]));
    strictEqual(r.code, 1);
    strictEqual(r.stderr, "error: line 1: input is not valid UTF-8\n");
  });
  await t.step("last line without newline, CRLF endings", async () => {
    const input = new TextEncoder().encode(
      '{"Ack":{"up_to_sequence":1}}\r\n{"Ack":{"up_to_sequence":1}}',
    );
    const r = await inProcess(["encode"], input);
    strictEqual(r.stderr, "");
    strictEqual(r.code, 0);
    strictEqual(r.stdout.length, ack.length * 2);
  });
});

Deno.test("wireCommand() exits 2 with usage on bad arguments", async (t) => {
  for (const args of [[], ["frobnicate"], ["decode", "extra"]]) {
    await t.step(JSON.stringify(args), async () => {
      const r = await inProcess(args, new Uint8Array());
      strictEqual(r.code, 2);
      strictEqual(r.text, "");
      strictEqual(r.stderr.startsWith("error: "), true);
      strictEqual(r.stderr.includes("usage: chronicle wire decode"), true);
    });
  }
  const help = await inProcess(["--help"], new Uint8Array());
  strictEqual(help.code, 0);
  strictEqual(help.text.startsWith("usage: "), true);
});
