/**
 * The surface of runs with nobody to ask (CI, pipes, scripts). It denies by default;
 * `approvals.non_interactive: allow` approves non-hardline flagged commands once each,
 * and the gate logs every such approval as a warning (never a silent fail-open).
 */

import type { ApprovalAnswer, ApprovalRequest, ApprovalSurface } from "../flow/types.js";

export type NonInteractivePolicy = "deny" | "allow";

export class NonInteractiveSurface implements ApprovalSurface {
  readonly kind = "non_interactive";

  constructor(readonly policy: NonInteractivePolicy = "deny") {}

  async ask(_request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    if (signal.aborted) return { scope: "deny", by: "cancelled" };
    return this.policy === "allow" ? { scope: "once", by: "non_interactive" } : { scope: "deny", by: "non_interactive" };
  }
}
