/**
 * One model tool call from a framework, run the way every other caller runs it: through
 * `handleFunctionCallDetailed` (validation, hooks, the approval gate, time limits, redaction,
 * result caps), with the framework's AbortSignal. Never throws: a failure comes back as the
 * `{"error": ...}` text the model reads, so one bad call cannot end the framework's run.
 */

import { handleFunctionCallDetailed } from "../dispatch/handle-function-call.js";
import { DEFAULT_SESSION, DEFAULT_TASK } from "../tools/call-scope.js";
import { redactForModel } from "../redaction/tool-output.js";
import { describeThrown } from "../util/text.js";
import type { CallApprovalScope } from "../approval/flow/types.js";
import type { CallSurface } from "../registry/types.js";
import type { ToolSearchBridge } from "../agent/tool-search/bridge.js";
import { gatedCommand } from "./approval-preview.js";
import { integrationResult, type IntegrationResult } from "./result-parts.js";
import type { IntegrationOptions } from "./types.js";

export interface IntegrationCall {
  name: string;
  args: unknown;
  toolCallId?: string | undefined;
  signal?: AbortSignal | undefined;
  /**
   * A person approved exactly this call in the framework's human-in-the-loop. The gate then does
   * not ask again for this call's command (once, inside this call only); hardline and deny rules
   * still refuse it.
   */
  approved?: boolean | undefined;
  /**
   * The approval scope the call runs in (approval-bridge.ts `scopeFor`): what a person approved
   * through the framework, and where the gate's questions go. Takes the place of `approved`.
   * Passed with the call (`CallOptions.approvalScope`), so only this call's checks see it.
   */
  scope?: CallApprovalScope | undefined;
  /** Overrides the tool's time limit for this call (ms; 0: none, when the framework enforces its own). */
  timeoutMs?: number | undefined;
}

/** The session and task a call belongs to. */
export function callScope(options: IntegrationOptions): { sessionId: string; taskId: string } {
  return { sessionId: options.session?.id ?? DEFAULT_SESSION, taskId: options.session?.taskId ?? DEFAULT_TASK };
}

/**
 * One call, with what every call of a tool set shares worked out once (`createCallRunner`): the
 * per-call cost is what the benchmark measures against `handleFunctionCall` itself.
 */
export type CallRunner = (call: IntegrationCall) => Promise<IntegrationResult>;

export function createCallRunner(options: IntegrationOptions, allowedTools: ReadonlySet<string>, surface: CallSurface = "library", toolSearch?: ToolSearchBridge): CallRunner {
  return createCallRunnerWith(options, allowedTools, (result) => result, surface, toolSearch);
}

/**
 * `createCallRunner` with the adapter's own result mapping folded into the same promise step:
 * one `.then` per call between `handleFunctionCallDetailed` and the framework, not one for our
 * result, one for the backstop and one for the adapter's mapping (each a microtask hop and a
 * promise on every call). `map` should not throw; if it does, it is given the backstop's error
 * result instead.
 */
export function createCallRunnerWith<T>(
  options: IntegrationOptions,
  allowedTools: ReadonlySet<string>,
  map: (result: IntegrationResult, call: IntegrationCall) => T,
  /** Which framework the calls come from, for hooks (`ctx.surface`, a plugin hook's `event.surface`). */
  surface: CallSurface = "library",
  /** With tool search active: answers the bridge tools and unwraps `tool_call` before dispatch. */
  toolSearch?: ToolSearchBridge | undefined,
): (call: IntegrationCall) => Promise<T> {
  const { sessionId, taskId } = callScope(options);
  const registry = options.registry;
  const agentLoop = options.session?.agentLoop;
  const session = options.session?.data;
  // handleFunctionCallDetailed does not throw; this is the backstop for the adapter's own steps.
  const backstop = (call: IntegrationCall, thrown: unknown): IntegrationResult => ({
    content: JSON.stringify({ error: redactForModel(`Error executing ${call.name}: ${describeThrown(thrown)}`) }),
    isError: true,
  });
  const finish = (call: IntegrationCall, result: IntegrationResult): T => {
    try {
      return map(result, call);
    } catch (thrown) {
      return map(backstop(call, thrown), call);
    }
  };
  // Plain promise chains, not async wrappers: each async layer costs a microtask hop on every call.
  const dispatch = toolSearch === undefined ? handleFunctionCallDetailed : toolSearch.handleFunctionCallDetailed.bind(toolSearch);
  const run = (call: IntegrationCall, approvalScope: CallApprovalScope | undefined): Promise<T> =>
    dispatch(call.name, call.args, {
      registry,
      agentLoop,
      session,
      sessionId,
      taskId,
      toolCallId: call.toolCallId,
      signal: call.signal,
      // Only what the framework was given: a tool that calls tools (execute_code) passes this on.
      allowedTools,
      timeoutMs: call.timeoutMs,
      surface,
      // On the call, not in an async context: no process-wide promise hooks (src/approval/flow/call-approval.ts).
      approvalScope,
    }).then(
      (outcome) => {
        let result: IntegrationResult;
        try {
          result = integrationResult(outcome);
        } catch (thrown) {
          result = backstop(call, thrown);
        }
        return finish(call, result);
      },
      (thrown: unknown) => finish(call, backstop(call, thrown)),
    );
  return (call) => {
    try {
      if (call.scope !== undefined) return run(call, call.scope);
      const command = call.approved === true ? gatedCommand(call.name, call.args) : undefined;
      if (command === undefined) return run(call, undefined);
      return run(call, { sessionId, grants: new Set([command]), toolCallId: call.toolCallId });
    } catch (thrown) {
      return Promise.resolve(finish(call, backstop(call, thrown)));
    }
  };
}

export function runIntegrationCall(call: IntegrationCall, options: IntegrationOptions, allowedTools: ReadonlySet<string>): Promise<IntegrationResult> {
  return createCallRunner(options, allowedTools)(call);
}
