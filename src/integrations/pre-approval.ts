/**
 * A framework's approval, honoured once by the approval gate, for exactly the call it was given
 * for; and the gate's questions during a framework's call, routed back to the framework instead
 * of a prompt the framework's user never sees.
 *
 * Grants. When a person approved a call in the framework's own human-in-the-loop (the AI SDK's
 * `tool-approval-response`, an Agents SDK `state.approve(item)`), what that call puts to the gate
 * must run without our gate asking a second time; nothing else may ride on that approval. The
 * adapter runs the approved call inside an `AsyncLocalStorage` scope holding its grants: the exact
 * texts (a command, or an action's text such as the program `execute_code` runs) the person
 * approved, each unused. The gate's `check` and `checkAction` are wrapped once per gate instance:
 * a check made from inside that scope, for that session and exactly one of those texts, is marked
 * `personApproved` (smart review skipped: a person's answer wins over the reviewer's guess) and
 * uses a surface that answers "once", and spends the grant. Every step before the prompt still
 * runs: hardline rules and deny rules still block. A check from anywhere else (another call,
 * another session, another text of the same call, a retry after the call ended) never sees the
 * grant, so it cannot outlive the call the way a session-wide `approveOnce` grant could.
 *
 * Questions. A check from inside a scope that the gate would put to a person (step 7: nothing
 * covered it, smart review did not decide) and that no grant answers goes to the scope's `ask`
 * instead of the gate's own surface: the adapter records what was asked (so that the next call of
 * the same tool with the same arguments asks the person through the framework first) and denies
 * with a reason that tells the model so. Without a scope (no adapter call), the gate asks as usual.
 *
 * Cost: `AsyncLocalStorage` on Node 20 installs promise hooks process-wide on its first `run`, so
 * adapters enter a scope only for calls that can reach the gate (see run-call.ts), never for the
 * others.
 */

import { AsyncLocalStorage } from "node:async_hooks";

import type { ApprovalGate } from "../approval/flow/gate.js";
import type { ApprovalAnswer, ApprovalRequest, ApprovalSurface, CheckOptions } from "../approval/flow/types.js";

export interface CallScope {
  readonly sessionId: string;
  /** Exact texts a person approved through the framework, unspent. Spent ones are removed. */
  readonly grants: Set<string>;
  /** Which call the framework approved or ran: for the log only, the scope is what binds it. */
  readonly toolCallId: string | undefined;
  /** A question no grant answers; undefined: the gate's own surface is asked. */
  readonly ask?: ((request: ApprovalRequest) => ApprovalAnswer) | undefined;
}

const scopes = new AsyncLocalStorage<CallScope>();
const bridged = new WeakSet<object>();

/** Answers for a person who already said yes in the framework. */
const FRAMEWORK_APPROVED: ApprovalSurface = {
  kind: "framework",
  ask: async () => ({ scope: "once", by: "user" }),
};

type Checker<S> = (subject: S, options: CheckOptions) => ReturnType<ApprovalGate["check"]>;

function wrap<S>(check: Checker<S>, textOf: (subject: S) => string): Checker<S> {
  return (subject, options) => {
    const scope = scopes.getStore();
    if (scope === undefined || scope.sessionId !== options.sessionId) return check(subject, options);
    const text = textOf(subject);
    if (scope.grants.delete(text)) return check(subject, { ...options, surface: FRAMEWORK_APPROVED, personApproved: true });
    const ask = scope.ask;
    if (ask === undefined) return check(subject, options);
    return check(subject, { ...options, surface: { kind: "framework", ask: async (request) => ask(request) } });
  };
}

/** Makes `gate` honour the scopes of `withCallScope` / `withCallGrant` (idempotent). */
export function bridgeGate(gate: Pick<ApprovalGate, "check" | "checkAction">): void {
  if (bridged.has(gate)) return;
  bridged.add(gate);
  gate.check = wrap(gate.check.bind(gate), (command: string) => command);
  gate.checkAction = wrap(gate.checkAction.bind(gate), (action) => action.text);
}

/** Runs `fn` inside `scope`: its grants and its `ask` apply to the gate checks made inside it. */
export function withCallScope<T>(scope: CallScope, fn: () => Promise<T>): Promise<T> {
  return scopes.run(scope, fn);
}

/** Runs `fn` with a one-shot approval of `command` in `sessionId`, for checks made inside it. */
export function withCallGrant<T>(grant: { sessionId: string; command: string; toolCallId?: string | undefined }, fn: () => Promise<T>): Promise<T> {
  return scopes.run({ sessionId: grant.sessionId, grants: new Set([grant.command]), toolCallId: grant.toolCallId }, fn);
}
