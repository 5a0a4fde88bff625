/**
 * `runAgent({ approvalSurface })`: who answers the approval gate's questions for the run's session
 * (a gateway surface that posts to a chat platform or a browser, say), registered with the process's
 * gate for that session only and removed when the run ends. Other sessions, and other runs at the
 * same time, keep their own surfaces. The gate is loaded here, on the first run that asks for it.
 */

import type { ApprovalSurface } from "../../approval/flow/types.js";
import { DEFAULT_SESSION } from "../../tools/call-scope.js";

/** Registers `surface` for `sessionId`; the returned function removes it from the id the session has by then. */
export async function useApprovalSurface(surface: ApprovalSurface, sessionId: string | undefined): Promise<(currentId: string | undefined) => void> {
  const { getApprovalGate } = await import("../../approval/default-gate.js");
  const gate = getApprovalGate();
  gate.setSessionSurface(sessionId ?? DEFAULT_SESSION, surface);
  return (currentId) => gate.removeSessionSurface(currentId ?? DEFAULT_SESSION, surface);
}
