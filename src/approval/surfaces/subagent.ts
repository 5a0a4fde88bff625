/**
 * The surface of a delegated subagent's session (src/agent/delegation/): nobody watches a child
 * run, so it never prompts. It denies by default; `delegation.subagent_auto_approve: true` approves
 * each flagged command once (never for the session, never for good), and the gate logs every such
 * approval as a warning. Hardline and deny rules decide before any surface is asked.
 */

import type { ApprovalAnswer, ApprovalRequest, ApprovalSurface } from "../flow/types.js";

export class SubagentSurface implements ApprovalSurface {
  readonly kind = "subagent";

  constructor(readonly autoApprove: boolean = false) {}

  async ask(_request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    if (signal.aborted) return { scope: "deny", by: "cancelled" };
    return this.autoApprove ? { scope: "once", by: "subagent" } : { scope: "deny", by: "subagent" };
  }
}
