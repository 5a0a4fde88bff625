/**
 * One model turn's tool calls with tool search active: `executeToolCalls`' contract (parallel-safe calls
 * together, results in call order, one call's failure never touching another's), with `tool_search` and
 * `tool_describe` answered by the bridge and every `tool_call` unwrapped BEFORE the batch runs. The
 * underlying call then is an ordinary call of the batch: its hooks, approvals, parallel-safety, the
 * `onCallStart`/`onCallEnd` activity line and the outcome's `name` all carry the real tool's name (the
 * outcome keeps the model's call id, so the tool message still answers the `tool_call` call).
 */

import { executeToolCalls, type ExecuteToolCallsOptions, type ToolCallOutcome } from "../../dispatch/execute-tool-calls.js";
import type { ToolCall } from "../../registry/types.js";
import type { ToolSearchBridge } from "./bridge.js";
import { TOOL_CALL_NAME, TOOL_DESCRIBE_NAME, TOOL_SEARCH_NAME } from "./names.js";

export async function executeToolCallsWithToolSearch(
  bridge: ToolSearchBridge,
  calls: readonly ToolCall[],
  options: ExecuteToolCallsOptions = {},
): Promise<ToolCallOutcome[]> {
  if (!Array.isArray(calls)) return executeToolCalls(calls, { ...options, registry: bridge.registry });
  const outcomes: ToolCallOutcome[] = new Array(calls.length);
  /** Calls the batch runs, and where each came from. */
  const batch: ToolCall[] = [];
  const origin: number[] = [];
  /** Batch position of an unwrapped tool_call → the model's tool_call arguments (for the repeat hint). */
  const bridged = new Map<number, unknown>();
  const { onCallStart, onCallEnd } = options;
  calls.forEach((call, index) => {
    const name = (call as ToolCall | null)?.name;
    if (name === TOOL_SEARCH_NAME || name === TOOL_DESCRIBE_NAME) {
      const started = performance.now();
      quietly(() => onCallStart?.(index, call));
      const answer = name === TOOL_SEARCH_NAME ? bridge.search(call.arguments) : bridge.describe(call.arguments);
      const outcome = bridge.rememberFailure(name, call.arguments, answer);
      outcomes[index] = { id: call.id, name, content: outcome.content, isError: outcome.isError, result: outcome.result };
      quietly(() => onCallEnd?.(index, outcomes[index]!, performance.now() - started));
      return;
    }
    if (name === TOOL_CALL_NAME) {
      const unwrapped = bridge.unwrap(call.arguments, options.allowedTools);
      if (!unwrapped.ok) {
        quietly(() => onCallStart?.(index, call));
        const outcome = bridge.rememberFailure(name, call.arguments, unwrapped.outcome);
        outcomes[index] = { id: call.id, name, content: outcome.content, isError: outcome.isError, result: outcome.result };
        quietly(() => onCallEnd?.(index, outcomes[index]!, 0));
        return;
      }
      bridged.set(batch.length, call.arguments);
      batch.push({ id: call.id, name: unwrapped.name, arguments: unwrapped.arguments });
      origin.push(index);
      return;
    }
    batch.push(call);
    origin.push(index);
  });
  if (batch.length === 0) return outcomes;
  const ran = await executeToolCalls(batch, {
    ...options,
    registry: bridge.registry,
    // One reach for the whole batch: a direct call of a deferred tool is as reachable as a bridged one.
    allowedTools: bridge.allowedTools(options.allowedTools),
    onCallStart: onCallStart === undefined ? undefined : (i, call) => onCallStart(origin[i]!, call),
    onCallEnd: onCallEnd === undefined ? undefined : (i, outcome, elapsed) => onCallEnd(origin[i]!, outcome, elapsed),
  });
  ran.forEach((outcome, i) => {
    if (!bridged.has(i)) {
      outcomes[origin[i]!] = outcome;
      return;
    }
    const finished = bridge.finishCall(outcome.name, { content: outcome.content, isError: outcome.isError, result: outcome.result });
    const remembered = bridge.rememberFailure(TOOL_CALL_NAME, bridged.get(i), finished);
    outcomes[origin[i]!] = { ...outcome, content: remembered.content };
  });
  return outcomes;
}

function quietly(report: () => void): void {
  try {
    report();
  } catch {
    // A UI callback's fault is not the call's.
  }
}
