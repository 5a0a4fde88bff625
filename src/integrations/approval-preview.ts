/**
 * Whether a call needs a person's approval, decided before it runs so that a framework can ask
 * in its own human-in-the-loop (the AI SDK's `needsApproval`, ...) instead of our gate asking
 * from inside the call. What is foreseen from the arguments alone: the `terminal` tool's command
 * and the program `execute_code` runs (put to the gate as a whole). What cannot be foreseen (the
 * paths a file tool's write resolves to, a plugin's `approve` directive) is learned when the gate
 * asks during a call (approval-bridge.ts).
 *
 * The preview repeats the gate's steps 1 to 5 (src/approval/flow/gate.ts) without their side
 * effects (no log line, no observer, no spent one-time grant, no reviewer call): a hardline
 * match or a deny rule needs no approval (the gate refuses it whatever a person says, and the
 * model is told why); approvals off, the session's yolo toggle, an isolated sandbox, a command
 * detection finds nothing in, and one whose every match is approved for the session or in the
 * allowlist need none either. Anything else does.
 *
 * In smart mode with a reviewer, step 6 comes first: the framework does not ask, the gate's
 * reviewer judges, and only what it escalates is put to a person (learned, as below).
 *
 * It can only err towards safety. Asking when the gate would not have asked costs one
 * question. Not asking when the gate would ask (a custom `detect`, an allowlist store other
 * than config.yaml) is caught inside the call: the gate's question is denied for now and
 * learned, and the next call with the same arguments asks through the framework. Never run
 * unasked.
 */

import { getApprovalGate } from "../approval/default-gate.js";
import { actionMatch } from "../approval/flow/action.js";
import { isIsolatedBackend } from "../approval/flow/backends.js";
import { findDenyRule } from "../approval/flow/deny-rules.js";
import { approvalId, keyOf } from "../approval/flow/keys.js";
import { listApprovals } from "../approval/flow/allowlist.js";
import type { ApprovalGate } from "../approval/flow/gate.js";
import type { BackendInfo } from "../approval/flow/types.js";
import type { Detection, RuleMatch } from "../approval/types.js";

/** The command a `terminal` call would put to the gate, or undefined (not a terminal call, no command). */
export function gatedCommand(toolName: string, args: unknown): string | undefined {
  if (toolName !== "terminal" || args === null || typeof args !== "object") return undefined;
  const command = (args as { command?: unknown }).command;
  return typeof command === "string" && command.trim() !== "" ? command : undefined;
}

/** The program an `execute_code` call would put to the gate, or undefined. */
export function gatedProgram(toolName: string, args: unknown): string | undefined {
  if (toolName !== "execute_code" || args === null || typeof args !== "object") return undefined;
  const code = (args as { code?: unknown }).code;
  return typeof code === "string" && code.trim() !== "" ? code : undefined;
}

/** The text a call puts to the gate that is foreseen from its arguments (a command, a program), or undefined. */
export function gatedText(toolName: string, args: unknown): string | undefined {
  return gatedCommand(toolName, args) ?? gatedProgram(toolName, args);
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

/** What the gate would judge: its detection, the text deny rules see, where it runs, whether the reviewer may see it. */
interface Judged {
  detection: Detection;
  denyText: string;
  backend: BackendInfo;
  reviewable: boolean;
}

async function judgedFor(toolName: string, args: unknown, scope: PreviewScope): Promise<{ text: string; judged: () => Promise<Judged> } | undefined> {
  const command = gatedCommand(toolName, args);
  if (command !== undefined) {
    return {
      text: command,
      judged: async () => {
        const { detectAsync } = await import("../approval/detection/index.js");
        return { detection: await detectAsync(command), denyText: command, backend: await backendOf(scope.taskId), reviewable: true };
      },
    };
  }
  const code = gatedProgram(toolName, args);
  if (code !== undefined) {
    return {
      text: code,
      judged: async () => {
        const { executeCodeAction, EXECUTE_CODE_BACKEND } = await import("../code-execution/approval.js");
        const action = await executeCodeAction(code);
        const match = actionMatch(action);
        const detection: Detection = { command: code, analysable: true, unanalysable: [], matches: [match], hardline: match.hardline, dangerous: true };
        return { detection, denyText: action.prefix, backend: { name: EXECUTE_CODE_BACKEND }, reviewable: action.review !== undefined };
      },
    };
  }
  return undefined;
}

/**
 * Whether smart mode's reviewer judges this before a person would be asked (gate step 6): then
 * the framework does not ask first. What the reviewer escalates comes back as a question the
 * framework asks on the next call (approval-bridge.ts); what it denies is denied.
 */
function reviewerFirst(gate: ApprovalGate, sessionId: string, uncovered: readonly RuleMatch[], reviewable: boolean): boolean {
  if (gate.settings.mode !== "smart" || gate.settings.smart.model === undefined) return false;
  if (gate.breakerTripped(sessionId) || !reviewable) return false;
  return !uncovered.some((m) => m.category === "unanalysable");
}

export interface ForeseeOptions {
  /**
   * Smart mode with a reviewer: leave the command to the reviewer first (none foreseen), for a
   * caller whose calls route the reviewer's escalations back to the framework (a call scope with
   * `ask`, approval-bridge.ts). Default false: in smart mode a person is asked first.
   */
  reviewerFirst?: boolean | undefined;
}

/**
 * The texts of this call a person must approve first (the command, the program), or none.
 * Never throws: a failure to preview asks.
 */
export async function foreseenApprovals(toolName: string, args: unknown, scope: PreviewScope, options: ForeseeOptions = {}): Promise<string[]> {
  const subject = await judgedFor(toolName, args, scope);
  if (subject === undefined) return [];
  try {
    const gate = getApprovalGate();
    const { detection, denyText, backend, reviewable } = await subject.judged();
    const matches = detection.matches;
    // 1. Hardline: refused whatever a person says; the gate tells the model why.
    if (detection.hardline || matches.some((m) => m.hardline)) return [];
    // 2. A user deny rule: refused too.
    if (findDenyRule(gate.settings.deny, denyText, matches, backend.name) !== undefined) return [];
    // 3. Mode off, yolo, an isolated sandbox.
    if (gate.settings.mode === "off" || gate.isYolo(scope.sessionId)) return [];
    if (isIsolatedBackend(backend) && !gate.settings.isolatedBackendsNeedApproval) return [];
    // 5. Nothing found.
    if (matches.length === 0) return [];
    // 4. Every match approved for the session or for good.
    const covered = new Set(gate.sessionApprovals(scope.sessionId).map((entry) => entry.id));
    for (const entry of listApprovals({ home: gate.home })) covered.add(entry.id);
    const uncovered = matches.filter((match) => !covered.has(approvalId(keyOf(match, backend.name))));
    if (uncovered.length === 0) return [];
    // 6. Smart review decides first when it can.
    if (options.reviewerFirst === true && reviewerFirst(gate, scope.sessionId, uncovered, reviewable)) return [];
    return [subject.text];
  } catch {
    return [subject.text];
  }
}

/** True when a `terminal` call's command would be put to a person (smart mode: a person first). Never throws. */
export async function approvalRequired(toolName: string, args: unknown, scope: PreviewScope): Promise<boolean> {
  return gatedCommand(toolName, args) !== undefined && (await foreseenApprovals(toolName, args, scope)).length > 0;
}
