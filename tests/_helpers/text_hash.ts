import { sha256Hex } from "../../lib/cas/mod.ts";

/** SHA-256 of UTF-8 text, as Chronicle names content. */
export function sha256OfText(text: string): string {
  return sha256Hex(new TextEncoder().encode(text));
}
