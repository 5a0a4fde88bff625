/**
 * A framework's approval, honoured once by the approval gate, for exactly the call it was given
 * for; and the gate's questions during a framework's call, routed back to the framework instead
 * of a prompt the framework's user never sees.
 *
 * Grants. When a person approved a call in the framework's own human-in-the-loop (the AI SDK's
 * `tool-approval-response`, an Agents SDK `state.approve(item)`, LangChain's `interruptOn`), what
 * that call puts to the gate must run without our gate asking a second time; nothing else may
 * ride on that approval. The adapter gives the approved call a `CallApprovalScope` holding its
 * grants: the exact texts (a command, or an action's text such as the program `execute_code`
 * runs) the person approved, each unused. The scope travels with the call, not in an async
 * context: `CallOptions.approvalScope`, then `ctx.approvalScope`, then the `CheckOptions` of every
 * check the call's tool makes (terminal, execute_code and the calls its program makes, the file
 * tools' writes, a plugin's `approve` directive). A check carrying the scope, for the scope's
 * session and exactly one of its texts, is marked `personApproved` (smart review skipped: a
 * person's answer wins over the reviewer's guess), uses a surface that answers "once", and spends
 * the grant. Every step before the prompt still runs: hardline rules and deny rules still block.
 * A check that does not carry the scope (another call, even one of the same session running at
 * the same time; another session; a retry after the call ended) never sees the grant, so it
 * cannot outlive the call the way a session-wide `approveOnce` grant could.
 *
 * Questions. A check carrying a scope that the gate would put to a person (step 7: nothing
 * covered it, smart review did not decide) and that no grant answers goes to the scope's `ask`
 * instead of the gate's own surface: the adapter records what was asked (so that the next call of
 * the same tool with the same arguments asks the person through the framework first) and denies
 * with a reason that tells the model so. Without a scope (no adapter call), the gate asks as usual.
 *
 * Why on the call and not in an `AsyncLocalStorage`: on Node 20 the first `AsyncLocalStorage.run`
 * installs promise hooks process-wide, and every later promise of the process pays for them (a
 * trivial `handleFunctionCall` measured 3.1–3.2× slower after one adapter call that entered a scope).
 */

import type { ApprovalSurface, CheckOptions } from "./types.js";

/** Answers for a person who already said yes in the framework. */
const FRAMEWORK_APPROVED: ApprovalSurface = {
  kind: "framework",
  ask: async () => ({ scope: "once", by: "user" }),
};

/**
 * The options a check of `text` runs with under `options.approvalScope`: a grant of exactly
 * `text` is spent here (the check is then person-approved, answered "once"); else the scope's
 * `ask` is the surface; else, and for a scope of another session, `options` as they are.
 */
export function applyCallApproval(text: string, options: CheckOptions): CheckOptions {
  const scope = options.approvalScope;
  if (scope === undefined || scope.sessionId !== options.sessionId) return options;
  if (scope.grants.delete(text)) return { ...options, surface: FRAMEWORK_APPROVED, personApproved: true };
  const ask = scope.ask;
  if (ask === undefined) return options;
  return { ...options, surface: { kind: "framework", ask: async (request) => ask(request) } };
}
