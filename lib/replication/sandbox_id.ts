import { RESERVED_ORIGINS } from "../store/mod.ts";

/** Longest sandbox id, in UTF-8 bytes. */
export const MAX_SANDBOX_ID_BYTES = 128;

/**
 * Why `id` is not an acceptable sandbox id, or `null` when it is.
 *
 * A sandbox id names a replica in the master's records, logs and status. Any printable
 * UTF-8 text is accepted (the test vectors carry `"песочница-🧪"`): 1 to 128 bytes, no
 * control characters (C0, DEL, C1), no `/` or `\`, no leading or trailing whitespace,
 * not `.` or `..`, and not an origin Chronicle gives iterations itself (`local`, `api`,
 * `restore`, `rollback`, `master`, `local-sync-merge`): the master records a write-back
 * with its sandbox id as origin, and tells a replica's own changes from others' by it.
 *
 * @param id The id as received.
 * @returns A sentence-case problem, or `null`.
 *
 * @example Checking ids
 * ```ts
 * import { sandboxIdProblem } from "./sandbox_id.ts";
 * if (sandboxIdProblem("sb-1") !== null) throw new Error("expected valid");
 * if (sandboxIdProblem("a/b") === null) throw new Error("expected invalid");
 * ```
 */
export function sandboxIdProblem(id: string): string | null {
  if (typeof id !== "string" || id.length === 0) return "it is empty";
  const bytes = new TextEncoder().encode(id).length;
  if (bytes > MAX_SANDBOX_ID_BYTES) {
    return `it is ${bytes} bytes long, over the limit of ${MAX_SANDBOX_ID_BYTES}`;
  }
  if (/\p{Cc}/u.test(id)) return "it contains a control character";
  if (/[\/\\]/.test(id)) return "it contains a slash or backslash";
  if (id.trim() !== id) return "it starts or ends with whitespace";
  if (id === "." || id === "..") return `it is "${id}"`;
  if (RESERVED_ORIGINS.includes(id)) return `"${id}" is reserved for Chronicle's own origins`;
  if (id.isWellFormed && !id.isWellFormed()) return "it contains a lone surrogate";
  return null;
}

/**
 * Checks a sandbox id (see {@linkcode sandboxIdProblem} for the rule).
 *
 * @param id The id.
 * @returns The same id.
 * @throws {TypeError} When the id is not acceptable, naming the problem.
 */
export function validateSandboxId(id: string): string {
  const problem = sandboxIdProblem(id);
  if (problem !== null) {
    throw new TypeError(`Invalid sandbox id "${printable(id)}": ${problem}`);
  }
  return id;
}

function printable(id: string): string {
  return String(id).replace(
    /\p{Cc}/gu,
    (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`,
  )
    .slice(0, 160);
}
