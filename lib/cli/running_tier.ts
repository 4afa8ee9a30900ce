import { ContentNotFoundError, type ContentTier } from "../cas/mod.ts";
import type { WorkspaceLayout } from "../workspace/mod.ts";
import { controlRequest, refusal } from "./control_client.ts";

/**
 * Reads content a command's own CAS lacks through the Chronicle running on the workspace
 * (`GET /content/{hash}` on its control socket). A sandbox replica keeps no copy of the
 * master's content and reads it through its connection to the master, which a command
 * run beside it does not have: `cat --at`, `diff` and the snapshot commands' reads of the
 * master's versions there go through the running replica. Nothing runs there: the content is not found.
 *
 * @param layout The workspace.
 * @returns The tier, for `Cas.setTier`; the CAS verifies what it answers, and leaves the
 * keeping to the running Chronicle.
 */
export function runningChronicleTier(layout: WorkspaceLayout): ContentTier {
  return {
    async getObject(hash: string): Promise<Uint8Array | null> {
      const response = await controlRequest(layout, `/content/${hash}`);
      if (response === undefined) return null;
      if (response.ok) return new Uint8Array(await response.arrayBuffer());
      const message = refusal(response, await response.json().catch(() => undefined));
      if (response.status === 404) throw new NotFoundByRunningError(hash, message);
      throw new Error(`The running Chronicle could not read content "${hash}": ${message}`);
    },
    // The running Chronicle answers a content whole, however it holds it.
    getManifest: () => Promise.resolve(null),
    // It keeps what it reads through its own tier (its master), in this same store.
    keepsWhatItAnswers: true,
  };
}

/** Content the running Chronicle did not find either, with its reason (such as: its master holds it). */
class NotFoundByRunningError extends ContentNotFoundError {
  constructor(hash: string, reason: string) {
    super(hash);
    this.message = reason;
    this.name = "NotFoundByRunningError";
  }
}
