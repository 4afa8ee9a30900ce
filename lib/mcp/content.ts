import { Buffer } from "node:buffer";
import type { Cas } from "../cas/mod.ts";
import { decodeText } from "../textdiff/mod.ts";

/** Bytes of one read of a file's content. */
export interface ContentWindow {
  /** The bytes from `offset`, at most the limit asked. */
  bytes: Uint8Array;
  /** Where they start. */
  offset: number;
}

/**
 * Reads `limit` bytes of stored content from `offset`, verified, without holding more than
 * the window (and one piece) in memory, however large the file.
 */
export async function readWindow(
  cas: Cas,
  hash: string,
  offset: number,
  limit: number,
): Promise<ContentWindow> {
  const out = new Uint8Array(limit);
  let filled = 0;
  let position = 0;
  const reader = cas.readStream(hash).getReader();
  try {
    while (filled < limit) {
      const next = await reader.read();
      if (next.done) break;
      const piece = next.value;
      const start = Math.max(0, offset - position);
      position += piece.length;
      if (start >= piece.length) continue;
      const take = piece.subarray(start, start + (limit - filled));
      out.set(take, filled);
      filled += take.length;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return { bytes: out.subarray(0, filled), offset };
}

/**
 * The window as text, or `null` for binary content. A window cut inside a multi-byte
 * character is still text: up to three bytes at either edge are left out.
 */
export function windowText(bytes: Uint8Array, cutStart: boolean, cutEnd: boolean): string | null {
  const whole = decodeText(bytes);
  if (whole !== null || (!cutStart && !cutEnd)) return whole;
  for (let head = 0; head <= (cutStart ? 3 : 0); head++) {
    for (let tail = 0; tail <= (cutEnd ? 3 : 0); tail++) {
      const text = decodeText(bytes.subarray(head, bytes.length - tail));
      if (text !== null) return text;
    }
  }
  return null;
}

const MIME_TYPES: Record<string, string> = {
  md: "text/markdown",
  txt: "text/plain",
  json: "application/json",
  ts: "text/x-typescript",
  js: "text/javascript",
  html: "text/html",
  css: "text/css",
  csv: "text/csv",
  yaml: "application/yaml",
  yml: "application/yaml",
  py: "text/x-python",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  svg: "image/svg+xml",
  pdf: "application/pdf",
};

/** A MIME type for a path and whether its content is text. Pure. */
export function mimeTypeOf(path: string, isText: boolean): string {
  const dot = path.lastIndexOf(".");
  const known = dot > path.lastIndexOf("/") ? MIME_TYPES[path.slice(dot + 1).toLowerCase()] : "";
  if (known) return known;
  return isText ? "text/plain" : "application/octet-stream";
}

/** Bytes as base64, for a blob resource. */
export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}
