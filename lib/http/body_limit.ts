import { HttpError } from "./errors.ts";

/**
 * Reads a request body as it streams in, refusing it (413) as soon as it passes `max`
 * bytes: a chunked upload of any size costs at most `max` bytes of memory, and its
 * remainder is never read.
 *
 * @param request The request.
 * @param max Largest accepted body, in bytes.
 * @returns The whole body.
 * @throws {HttpError} 413 `too_large` when the declared or received length exceeds `max`.
 */
export async function readBodyLimited(request: Request, max: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > max) throw tooLarge(`${declared} bytes`, max);
  if (request.body === null) return new Uint8Array(0);
  const pieces: Uint8Array[] = [];
  let total = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > max) {
      await reader.cancel().catch(() => {});
      throw tooLarge(`more than ${max} bytes`, max);
    }
    pieces.push(value);
  }
  if (pieces.length === 1) return pieces[0]!;
  const body = new Uint8Array(total);
  let offset = 0;
  for (const piece of pieces) {
    body.set(piece, offset);
    offset += piece.length;
  }
  return body;
}

function tooLarge(size: string, max: number): HttpError {
  return new HttpError(413, "too_large", `Body of ${size} exceeds the limit of ${max} bytes`);
}
