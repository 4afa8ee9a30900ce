import type { ConflictChoice } from "../replication/mod.ts";

/** Every way a person may settle a local-sync conflict. */
export const CONFLICT_CHOICES: readonly ConflictChoice[] = ["local", "upstream", "merged"];

/** Whether `value` is a {@linkcode ConflictChoice}: `"local"`, `"upstream"` or `"merged"`. */
export function isConflictChoice(value: unknown): value is ConflictChoice {
  return (CONFLICT_CHOICES as readonly unknown[]).includes(value);
}
