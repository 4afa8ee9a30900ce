import type { CallToolResult } from "@modelcontextprotocol/sdk/types";
import { errorMessage, log } from "../log/mod.ts";
import { PathError } from "../paths/mod.ts";
import {
  AmbiguousIdError,
  CaptureError,
  SnapshotContentError,
  TransactionStateError,
  UnknownIdError,
} from "../snapshot/mod.ts";

/** Longest text one tool result carries before it is cut with a note on how to page. */
export const MAX_RESULT_CHARS = 60_000;

/** A problem with what the model asked for: it comes back as `isError` with this message. */
export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ToolError";
  }
}

/** A result of one text block. */
export function textResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }] };
}

/**
 * A result of one JSON text block, cut at {@linkcode MAX_RESULT_CHARS} with a note (the
 * tools page before that, so the cut is a last resort for a single huge entry).
 */
export function jsonResult(value: unknown): CallToolResult {
  return textResult(capText(JSON.stringify(value, null, 1), "narrow the request"));
}

/**
 * Cuts `text` at `max` characters, saying so and how to get the rest. Pure.
 *
 * @param text The text.
 * @param howToPage What the model should do for the rest.
 * @param max Longest text kept. @default {MAX_RESULT_CHARS}
 * @returns `text` itself when short enough, else its start and a `[truncated: …]` note.
 */
export function capText(text: string, howToPage: string, max = MAX_RESULT_CHARS): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n[truncated: ${text.length} characters, ${max} shown; ` +
    `${howToPage}]`;
}

/** A tool error the model can read. */
export function errorResult(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

/**
 * Runs a tool's work and turns every failure into an `isError` result: the model's own
 * mistakes (bad paths, unknown ids) with their message, anything else logged and
 * reported as an internal error. A tool never fails the protocol.
 */
export async function guarded(
  tool: string,
  work: () => CallToolResult | Promise<CallToolResult>,
): Promise<CallToolResult> {
  try {
    return await work();
  } catch (error) {
    if (isModelMistake(error)) return errorResult(errorMessage(error));
    log("error", "mcp tool failed", { tool, error });
    return errorResult(`Chronicle could not run ${tool}: ${errorMessage(error)}`);
  }
}

function isModelMistake(error: unknown): boolean {
  return [
    ToolError,
    PathError,
    UnknownIdError,
    AmbiguousIdError,
    SnapshotContentError,
    TransactionStateError,
    CaptureError,
    RangeError,
    SyntaxError,
  ].some((kind) => error instanceof kind);
}
