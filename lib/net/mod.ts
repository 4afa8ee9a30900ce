/**
 * What every listener of Chronicle shares, below the transports and the REST layer:
 * connection limits (per listener and per process, sized to the open-file limit),
 * handshake and idle timeouts, byte budgets for partial frames, and the access rule
 * (token, loopback `Host`) a daemon builds from its configuration and injects.
 *
 * @example Limits shared by two listeners
 * ```ts
 * import { strictEqual } from "node:assert/strict";
 * import { ConnectionLimits } from "./mod.ts";
 * const limits = new ConnectionLimits({ maxTotal: 2 });
 * const a = limits.listener(1);
 * const slot = a.admit();
 * strictEqual(typeof a.admit(), "string"); // the listener is full
 * if (typeof slot !== "string") slot.release();
 * ```
 *
 * @module
 */
export {
  type AccessCheck,
  accessPolicy,
  type AccessPolicyOptions,
  isLoopbackHostHeader,
  type Refusal,
  type RequestHead,
  sameSecret,
  tokenProblem,
} from "./access.ts";
export {
  acceptConnections,
  type AcceptConnectionsOptions,
  type AcceptLoop,
} from "./accept_loop.ts";
export { type BudgetHolder, ByteBudget, type ByteBudgetOptions } from "./byte_budget.ts";
export {
  admitConnection,
  type AdmitInput,
  ConnectionLimits,
  type ConnectionLimitsOptions,
  type ConnectionSlot,
  defaultMaxConnections,
  ListenerLimit,
  ownListenerLimit,
} from "./connection_limits.ts";
export type { Routes } from "./routes.ts";
export {
  type HttpAddress,
  type HttpListener,
  serveHttp,
  type ServeHttpOptions,
} from "./http_server.ts";
