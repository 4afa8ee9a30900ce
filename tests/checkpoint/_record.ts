/** Test helper for `tests/checkpoint`: content recorded as a workspace records it. */
import type { Cas } from "../../lib/cas/mod.ts";
import { S_IFREG, type Store } from "../../lib/store/mod.ts";

/**
 * Stores `content` in the CAS and records it at `path` as a local change.
 *
 * @param content Text (encoded as UTF-8) or bytes; a link's target text for a link mode.
 * @param mode The full `st_mode`. @default {a regular file, 0o644}
 * @param timestamp When it was recorded, epoch ms. @default {now}
 * @returns The content's hash.
 */
export async function recordContent(
  store: Store,
  cas: Cas,
  path: string,
  content: string | Uint8Array,
  mode = S_IFREG | 0o644,
  timestamp?: number,
): Promise<string> {
  const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
  const stored = await cas.putBytes(bytes);
  store.record([{
    path,
    hash: stored.hash,
    size: stored.size,
    mode,
    deleted: false,
    origin: "local",
    ...(timestamp === undefined ? {} : { timestamp }),
  }]);
  return stored.hash;
}
