/**
 * A hostile replica: a client that speaks the wire protocol to a real master over its
 * Unix socket and sends whatever WriteBack frames a test builds, with no replica logic
 * (no journal, no checks) in between.
 *
 * @module
 */
import { sha256Hex } from "../../lib/cas/mod.ts";
import { connectUnix, type Transport } from "../../lib/replication/mod.ts";
import type { WireMessage, WriteBackEntry, WriteOperation } from "../../lib/wire/mod.ts";
import { S_IFLNK, S_IFREG } from "../../lib/store/mod.ts";

/** An entry with defaults: `local_seq` counts up, content is hashed right. */
export interface EntrySpec {
  path: string;
  operation?: WriteOperation;
  /** Content (a link's target for a link). */
  content?: string | null;
  /** Full `st_mode` or permission bits. @default {0o100644} */
  permissions?: number;
  /** The master sequence the sender claims to have seen. @default {the master's latest} */
  seen?: number;
}

/** A connection to a master that sends raw write-backs. */
export class HostileReplica {
  readonly sandboxId: string;
  readonly #transport: Transport;
  readonly #messages: AsyncIterator<WireMessage>;
  #nextSeq = 1n;

  private constructor(sandboxId: string, transport: Transport) {
    this.sandboxId = sandboxId;
    this.#transport = transport;
    this.#messages = transport.messages()[Symbol.asyncIterator]();
  }

  /** Connects and introduces itself with a catch-up request, as a replica does. */
  static async connect(socket: string, sandboxId: string): Promise<HostileReplica> {
    const transport = await connectUnix(socket);
    await transport.send({ type: "CatchupRequest", sandbox_id: sandboxId, since_sequence: 0n });
    return new HostileReplica(sandboxId, transport);
  }

  /** Builds an entry (see {@linkcode EntrySpec}). */
  entry(spec: EntrySpec, defaultSeen: number): WriteBackEntry {
    const operation = spec.operation ?? { type: "Write" };
    const bytes = spec.content === undefined || spec.content === null
      ? null
      : new TextEncoder().encode(spec.content);
    return {
      local_seq: this.#nextSeq++,
      filepath: spec.path,
      operation,
      content_hash: bytes === null ? null : sha256Hex(bytes),
      content_bytes: bytes,
      size: BigInt(bytes?.length ?? 0),
      permissions: BigInt(spec.permissions ?? 0o100644),
      is_deletion: operation.type === "Delete",
      master_rowid_seen: BigInt(spec.seen ?? defaultSeen),
    };
  }

  /**
   * Sends one WriteBack frame and waits for its result.
   *
   * @returns The reason per entry: `""` when accepted.
   */
  async writeBack(entries: WriteBackEntry[]): Promise<string[]> {
    await this.#transport.send({ type: "WriteBack", sandbox_id: this.sandboxId, entries });
    for (;;) {
      const next = await this.#messages.next();
      if (next.done) throw new Error("the master closed the connection");
      const message = next.value;
      if (message.type !== "WriteBackResult") continue;
      const reasons = new Map<bigint, string>();
      for (const [seq] of message.accepted) reasons.set(seq, "");
      for (const [seq, reason] of message.rejected) reasons.set(seq, reason);
      return entries.map((entry) => reasons.get(entry.local_seq) ?? "no answer");
    }
  }

  /** Closes the connection. */
  close(): void {
    this.#transport.close();
  }
}

/** A link's full mode. */
export const LINK_MODE = S_IFLNK | 0o777;
/** A regular file's full mode with these permission bits. */
export const fileMode = (bits: number): number => S_IFREG | bits;
