import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import {
  decodeWsMessage,
  encodeFrame,
  encodeWsMessage,
  WireError,
  type WireMessage,
} from "../../lib/wire/mod.ts";

const ack: WireMessage = { type: "Ack", up_to_sequence: 77n };

Deno.test("decodeWsMessage() reads one whole frame from ArrayBuffer or Uint8Array", () => {
  const data = encodeWsMessage(ack);
  deepStrictEqual(data, encodeFrame(ack));
  deepStrictEqual(decodeWsMessage(data), ack);
  deepStrictEqual(decodeWsMessage(data.slice().buffer), ack);
});

Deno.test("decodeWsMessage() rejects text and frames that do not fill the message", async (t) => {
  const frame = encodeFrame(ack).slice();
  const longer = new Uint8Array(frame.length + 1);
  longer.set(frame);
  const oversized = frame.slice();
  new DataView(oversized.buffer).setUint32(0, 104_857_601, true);
  const table: { description: string; input: ArrayBuffer | Uint8Array | string; code: string }[] = [
    { description: "text message", input: '{"Ack":{"up_to_sequence":1}}', code: "text_message" },
    { description: "empty message", input: new Uint8Array(0), code: "truncated_header" },
    { description: "three bytes", input: frame.subarray(0, 3), code: "truncated_header" },
    {
      description: "payload cut",
      input: frame.subarray(0, frame.length - 1),
      code: "truncated_payload",
    },
    { description: "extra byte after the frame", input: longer, code: "trailing_bytes" },
    { description: "oversized header", input: oversized, code: "oversized_frame" },
  ];
  for (const { description, input, code } of table) {
    await t.step(
      description,
      () => throws(() => decodeWsMessage(input), { name: "WireError", code }),
    );
  }
});

Deno.test("WebSocket helpers carry messages over a real WebSocket and refuse text", async () => {
  const received: (WireMessage | string)[] = [];
  const done = Promise.withResolvers<void>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req);
    socket.binaryType = "arraybuffer";
    socket.onmessage = (event) => {
      try {
        const msg = decodeWsMessage(event.data);
        received.push(msg);
        socket.send(encodeWsMessage(msg));
      } catch (error) {
        received.push(error instanceof WireError ? error.code : String(error));
        socket.close(1002, "protocol error");
      }
    };
    return response;
  });
  const client = new WebSocket(`ws://127.0.0.1:${server.addr.port}/`);
  client.binaryType = "arraybuffer";
  const echoed: WireMessage[] = [];
  try {
    const opened = Promise.withResolvers<void>();
    client.onopen = () => opened.resolve();
    client.onerror = () => opened.reject(new Error("WebSocket failed to open"));
    client.onmessage = (event) => {
      echoed.push(decodeWsMessage(event.data));
      if (echoed.length === 1) client.send("not a frame");
    };
    client.onclose = () => done.resolve();
    await opened.promise;
    client.send(encodeWsMessage({ type: "ContentNotFound", content_hash: "Ω" }));
    await done.promise;
  } finally {
    client.close();
    await server.shutdown();
  }
  deepStrictEqual(echoed, [{ type: "ContentNotFound", content_hash: "Ω" }]);
  deepStrictEqual(received, [{ type: "ContentNotFound", content_hash: "Ω" }, "text_message"]);
  strictEqual(received.length, 2);
});
