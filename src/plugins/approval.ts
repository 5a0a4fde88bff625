/**
 * The `approve` directive of `pre_tool_call`: the call is put to the approval gate as a non-shell action
 * (`gate.checkAction`, the surface `execute_code` uses), so it gets every step a command gets: deny rules,
 * mode and yolo, the allowlist, smart review (never: a person decides), the terminal prompt or the
 * gateway. The approval key is (`plugin-approval`, the directive's rule key or the tool name, `local`), so
 * "always" persists under the rule key in `approvals.allowlist` and covers every later call with that key.
 * Fails closed: a denial, a timeout or a gate that throws blocks the call.
 */

import { actionDisplay } from "../approval/flow/action.js";
import type { ActionRule, CallApprovalScope, GateAction, GateDecision, CheckOptions } from "../approval/flow/types.js";
import { fail } from "../dispatch/result.js";
import type { Logger, ToolResult } from "../registry/types.js";
import { describeThrown } from "../util/text.js";

/** What the plugin hooks need of an approval gate. */
export interface ActionApprovalGate {
  checkAction(action: GateAction, options: CheckOptions): Promise<GateDecision>;
}

/**
 * The rule every plugin approval request stands for. Its category (`plugin_request`) is none of the
 * command rules', so a deny rule by another category never catches plugin requests by accident;
 * `approvals.deny: [{rule: plugin-approval}]` or `[{category: plugin_request}]` refuses them all.
 */
export const PLUGIN_APPROVAL_RULE: ActionRule = {
  id: "plugin-approval",
  description: "A plugin asks you to approve this tool call before it runs.",
  category: "plugin_request",
  hardline: false,
};

export interface PluginApprovalRequest {
  pluginKey: string;
  toolName: string;
  args: Record<string, unknown>;
  message?: string | undefined;
  ruleKey?: string | undefined;
  sessionId?: string | undefined;
  signal?: AbortSignal | undefined;
  /** The approval scope of the call being approved (`ctx.approvalScope`). */
  approvalScope?: CallApprovalScope | undefined;
}

/** `undefined` when the call may run, else the `blocked` (or `cancelled`) result the model gets. */
export async function askPluginApproval(
  gate: () => ActionApprovalGate | Promise<ActionApprovalGate>,
  request: PluginApprovalRequest,
  logger: Logger,
): Promise<ToolResult | undefined> {
  const { pluginKey, toolName, args } = request;
  let argsText: string;
  try {
    argsText = JSON.stringify(args, null, 2) ?? "{}";
  } catch {
    argsText = "(arguments that cannot be shown)";
  }
  const title = `Plugin "${pluginKey}" asks you to approve a call of ${toolName}${request.message ? `: ${request.message}` : ""}`;
  const action: GateAction = {
    rule: PLUGIN_APPROVAL_RULE,
    prefix: request.ruleKey ?? toolName,
    text: `${toolName} ${argsText}`,
    display: actionDisplay(title, argsText),
  };
  let decision: GateDecision;
  try {
    const options: CheckOptions = { sessionId: request.sessionId ?? "default", backend: "local" };
    if (request.signal !== undefined) options.signal = request.signal;
    if (request.approvalScope !== undefined) options.approvalScope = request.approvalScope;
    decision = await (await gate()).checkAction(action, options);
  } catch (err) {
    logger.error(`plugin "${pluginKey}": the approval gate failed for ${toolName}: ${describeThrown(err)}`);
    return fail(`BLOCKED: plugin approval gate failed for ${toolName}`, "blocked");
  }
  if (decision.allowed) return undefined;
  return fail(decision.reason, decision.by === "cancelled" ? "cancelled" : "blocked");
}
