import { decodeText } from "../textdiff/mod.ts";

/** How the UI shows a piece of content. */
export type ContentKind =
  | { kind: "text" }
  | { kind: "image"; mime: string }
  | { kind: "binary" };

/** Image types a browser shows, by signature; SVG is left out (it can carry script). */
const IMAGE_SIGNATURES: Array<[string, number[]]> = [
  ["image/png", [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]],
  ["image/jpeg", [0xff, 0xd8, 0xff]],
  ["image/gif", [0x47, 0x49, 0x46, 0x38]],
  ["image/webp", [0x52, 0x49, 0x46, 0x46]],
  ["image/bmp", [0x42, 0x4d]],
];

/**
 * Decides from the bytes themselves (never from the name alone) whether content is
 * text, an image the page may show, or other binary. Pure.
 *
 * @param path The path (a `.webp` needs its `WEBP` tag too).
 * @param bytes The content.
 * @returns The kind, with the image's type.
 * @example
 * ```ts
 * import { contentKind } from "./content_kind.ts";
 * if (contentKind("a.txt", new TextEncoder().encode("hi")).kind !== "text") throw new Error();
 * ```
 */
export function contentKind(path: string, bytes: Uint8Array): ContentKind {
  for (const [mime, signature] of IMAGE_SIGNATURES) {
    if (signature.every((byte, i) => bytes[i] === byte)) {
      if (mime === "image/webp" && !isWebp(bytes)) continue;
      if (mime === "image/bmp" && !path.toLowerCase().endsWith(".bmp")) continue;
      return { kind: "image", mime };
    }
  }
  return decodeText(bytes) === null ? { kind: "binary" } : { kind: "text" };
}

function isWebp(bytes: Uint8Array): boolean {
  return new TextDecoder().decode(bytes.subarray(8, 12)) === "WEBP";
}
