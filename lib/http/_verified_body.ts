import type { Cas } from "../cas/mod.ts";
import { log } from "../log/mod.ts";
import type { HttpError } from "./errors.ts";

/**
 * A content's verified bytes as a response body. The first verified piece is read before
 * answering, so a missing or corrupt object is an error response (what `refuse` makes of
 * the error), never served; an error later ends the body and is logged with `about`.
 * Internal to `lib/http`.
 *
 * @returns The body; `null` for empty content.
 * @throws What `refuse` returns, when the first piece cannot be read.
 */
export async function verifiedBody(
  cas: Cas,
  hash: string,
  refuse: (error: unknown) => HttpError,
  about: Record<string, unknown>,
): Promise<ReadableStream<Uint8Array> | null> {
  const reader = cas.readStream(hash).getReader();
  let first: ReadableStreamReadResult<Uint8Array>;
  try {
    first = await reader.read();
  } catch (error) {
    throw refuse(error);
  }
  if (first.done) return null;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(first.value);
    },
    async pull(controller) {
      try {
        const next = await reader.read();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      } catch (error) {
        log("error", "content became unreadable while serving", { ...about, error });
        controller.error(error);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
