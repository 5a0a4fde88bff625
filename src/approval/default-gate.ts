import { ApprovalGate, type ApprovalGateOptions } from "./flow/gate.js";

let shared: ApprovalGate | undefined;

/**
 * The gate the built-in tools ask, created on first use from config.yaml (mode,
 * allowlist, deny rules, smart reviewer) with the default surface: the terminal
 * prompt when stdin and stderr are terminals, otherwise non-interactive (deny).
 * Embedders replace it with `setApprovalGate` (for a gateway surface, say).
 */
export function getApprovalGate(): ApprovalGate {
  shared ??= new ApprovalGate();
  return shared;
}

/** Replaces the process-wide gate; pass options to build one, or a gate you built. Returns the new gate. */
export function setApprovalGate(gate: ApprovalGate | ApprovalGateOptions): ApprovalGate {
  shared = gate instanceof ApprovalGate ? gate : new ApprovalGate(gate);
  return shared;
}
