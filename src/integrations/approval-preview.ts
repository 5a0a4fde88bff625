/**
 * Whether a call needs a person's approval, decided before it runs so that a framework can ask
 * in its own human-in-the-loop (the AI SDK's `needsApproval`, ...) instead of our gate asking
 * from inside the call. Only the `terminal` tool's command is previewed.
 *
 * The preview repeats the gate's steps 1 to 5 (src/approval/flow/gate.ts) without their side
 * effects (no log line, no observer, no spent one-time grant, no reviewer call): a hardline
 * match or a deny rule needs no approval (the gate refuses it whatever a person says, and the
 * model is told why); approvals off, the session's yolo toggle, an isolated sandbox, a command
 * detection finds nothing in, and one whose every match is approved for the session or in the
 * allowlist need none either. Anything else does.
 *
 * It can only err towards safety. Asking when the gate would not have asked costs one
 * question. Not asking when the gate would ask (a custom `detect`, a one-time grant, an
 * allowlist store other than config.yaml) sends the check to the gate's own surface, which
 * without a terminal denies: the command is blocked, never run unasked.
 */

import { getApprovalGate } from "../approval/default-gate.js";
import { isIsolatedBackend } from "../approval/flow/backends.js";
import { findDenyRule } from "../approval/flow/deny-rules.js";
import { approvalId, keyOf } from "../approval/flow/keys.js";
import { listApprovals } from "../approval/flow/allowlist.js";
import type { BackendInfo } from "../approval/flow/types.js";

/** The command a `terminal` call would put to the gate, or undefined (not a terminal call, no command). */
export function gatedCommand(toolName: string, args: unknown): string | undefined {
  if (toolName !== "terminal" || args === null || typeof args !== "object") return undefined;
  const command = (args as { command?: unknown }).command;
  return typeof command === "string" && command.trim() !== "" ? command : undefined;
}

/** Where the task's commands run, as the terminal tool tells the gate; without creating the environment. */
async function backendOf(taskId: string): Promise<BackendInfo> {
  const { getEnvironmentManager } = await import("../environments/manager.js");
  const manager = getEnvironmentManager();
  const ready = manager.peek(taskId);
  if (ready !== undefined) return ready.isolation;
  try {
    // Not created yet: its name only. A docker sandbox then counts as mounting the host (not isolated): ask.
    return { name: manager.backendFor(taskId) };
  } catch {
    return { name: "local" };
  }
}

export interface PreviewScope {
  sessionId: string;
  taskId: string;
}

/** True when the call would be put to a person. Never throws: a failure to preview asks. */
export async function approvalRequired(toolName: string, args: unknown, scope: PreviewScope): Promise<boolean> {
  const command = gatedCommand(toolName, args);
  if (command === undefined) return false;
  try {
    const gate = getApprovalGate();
    const { detectAsync } = await import("../approval/detection/index.js");
    const detection = await detectAsync(command);
    const matches = detection.matches;
    // 1. Hardline: refused whatever a person says; the gate tells the model why.
    if (detection.hardline || matches.some((m) => m.hardline)) return false;
    const backend = await backendOf(scope.taskId);
    // 2. A user deny rule: refused too.
    if (findDenyRule(gate.settings.deny, command, matches, backend.name) !== undefined) return false;
    // 3. Mode off, yolo, an isolated sandbox.
    if (gate.settings.mode === "off" || gate.isYolo(scope.sessionId)) return false;
    if (isIsolatedBackend(backend) && !gate.settings.isolatedBackendsNeedApproval) return false;
    // 5. Nothing found.
    if (matches.length === 0) return false;
    // 4. Every match approved for the session or for good.
    const covered = new Set(gate.sessionApprovals(scope.sessionId).map((entry) => entry.id));
    for (const entry of listApprovals({ home: gate.home })) covered.add(entry.id);
    return !matches.every((match) => covered.has(approvalId(keyOf(match, backend.name))));
  } catch {
    return true;
  }
}
