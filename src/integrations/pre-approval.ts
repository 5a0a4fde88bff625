/**
 * A framework's approval, honoured once by the approval gate, for exactly the call it was given
 * for. When a person approved a call in the framework's own human-in-the-loop (the AI SDK's
 * `tool-approval-response`, say), the command must run without our gate asking a second time;
 * nothing else may ride on that approval.
 *
 * How: the adapter runs the approved call inside an `AsyncLocalStorage` scope holding a grant
 * (session, exact command text, unused). The gate's `check` is wrapped once per gate instance:
 * a check made from inside that scope, for that session and exactly that command, uses a surface
 * that answers "once" in place of the gate's own prompt, and spends the grant. Every step before
 * the prompt still runs: hardline rules and deny rules still block, a smart reviewer still
 * reviews. A check from anywhere else (another call, another session, a second command of the
 * same call, a retry after the call ended) never sees the grant, so it cannot outlive the call
 * the way a session-wide `approveOnce` grant could (ten minutes, any caller of the session).
 */

import { AsyncLocalStorage } from "node:async_hooks";

import type { ApprovalGate } from "../approval/flow/gate.js";
import type { ApprovalSurface } from "../approval/flow/types.js";

interface CallGrant {
  readonly sessionId: string;
  readonly command: string;
  /** Which call the framework approved: for the log only, the scope is what binds the grant to it. */
  readonly toolCallId: string | undefined;
  used: boolean;
}

const grants = new AsyncLocalStorage<CallGrant>();
const bridged = new WeakSet<ApprovalGate>();

/** Answers for a person who already said yes in the framework. */
const FRAMEWORK_APPROVED: ApprovalSurface = {
  kind: "framework",
  ask: async () => ({ scope: "once", by: "user" }),
};

/** Makes `gate` honour grants of `withCallGrant` (idempotent). */
export function bridgeGate(gate: ApprovalGate): void {
  if (bridged.has(gate)) return;
  bridged.add(gate);
  const check = gate.check.bind(gate);
  gate.check = (command, options) => {
    const grant = grants.getStore();
    if (grant === undefined || grant.used || grant.command !== command || grant.sessionId !== options.sessionId) return check(command, options);
    grant.used = true;
    return check(command, { ...options, surface: FRAMEWORK_APPROVED });
  };
}

/** Runs `fn` with a one-shot approval of `command` in `sessionId`, for checks made inside it. */
export function withCallGrant<T>(grant: { sessionId: string; command: string; toolCallId?: string | undefined }, fn: () => Promise<T>): Promise<T> {
  return grants.run({ sessionId: grant.sessionId, command: grant.command, toolCallId: grant.toolCallId, used: false }, fn);
}
