import type { ToolCall, ToolResult } from "../registry/types.js";
import { registry as defaultRegistry } from "../registry/singleton.js";
import { handleFunctionCallDetailed, type HandleFunctionCallOptions } from "./handle-function-call.js";
import { fail } from "./result.js";

export interface ExecuteToolCallsOptions extends Omit<HandleFunctionCallOptions, "toolCallId"> {
  /** Most parallel-safe calls running at once (default: the registry's `maxConcurrency`, 8 unless config.yaml's `tools.max_concurrency` was applied). */
  maxConcurrency?: number | undefined;
  /**
   * Told when a call starts and when it settles (an agent loop's activity line: name, elapsed time,
   * status). `index` is the call's place in `calls`. A callback that throws is ignored: reporting
   * must never change what runs.
   */
  onCallStart?: ((index: number, call: ToolCall) => void) | undefined;
  onCallEnd?: ((index: number, outcome: ToolCallOutcome, elapsedMs: number) => void) | undefined;
}

export interface ToolCallOutcome {
  id?: string | undefined;
  name: string;
  content: string;
  isError: boolean;
  result: ToolResult;
}

/**
 * Runs one model turn's tool calls. Consecutive calls to parallel-safe tools
 * run together (at most `maxConcurrency` at once); any other call waits for
 * everything before it and runs alone, so side effects keep the model's order.
 * Results come back in call order, and one call's failure never touches another's.
 */
export async function executeToolCalls(calls: readonly ToolCall[], options: ExecuteToolCallsOptions = {}): Promise<ToolCallOutcome[]> {
  if (!Array.isArray(calls)) {
    throw new TypeError(`executeToolCalls takes an array of tool calls, got ${calls === null ? "null" : typeof calls}`);
  }
  const target = options.registry ?? defaultRegistry;
  const limit = Math.max(1, Math.floor(options.maxConcurrency ?? target.maxConcurrency));
  const outcomes: ToolCallOutcome[] = new Array(calls.length);
  const { onCallStart, onCallEnd } = options;
  const runOne =
    onCallStart === undefined && onCallEnd === undefined
      ? (index: number) => runCall(index)
      : async (index: number): Promise<void> => {
          const started = performance.now();
          if (onCallStart !== undefined) quietly(() => onCallStart(index, calls[index] as ToolCall));
          await runCall(index);
          if (onCallEnd !== undefined) quietly(() => onCallEnd(index, outcomes[index]!, performance.now() - started));
        };
  const runCall = async (index: number): Promise<void> => {
    const problem = malformation(calls[index]);
    if (problem !== undefined) {
      outcomes[index] = malformedOutcome(calls[index], index, problem);
      return;
    }
    const call = calls[index] as ToolCall;
    const outcome = await handleFunctionCallDetailed(call.name, call.arguments, {
      registry: target,
      agentLoop: options.agentLoop,
      signal: options.signal,
      sessionId: options.sessionId,
      taskId: options.taskId,
      session: options.session,
      allowedTools: options.allowedTools,
      timeoutMs: options.timeoutMs,
      surface: options.surface,
      // Every call of the batch carries the same scope: a grant is spent by the first check of its text.
      approvalScope: options.approvalScope,
      toolCallId: call.id,
    });
    outcomes[index] = { id: call.id, name: call.name, content: outcome.content, isError: outcome.isError, result: outcome.result };
  };
  const parallelSafe = (index: number): boolean => {
    const call = calls[index] as unknown;
    return malformation(call) === undefined && target.get((call as ToolCall).name)?.parallelSafe === true;
  };

  let index = 0;
  while (index < calls.length) {
    if (!parallelSafe(index)) {
      await runOne(index++);
      continue;
    }
    const batch: number[] = [];
    while (index < calls.length && parallelSafe(index)) batch.push(index++);
    await runLimited(batch, limit, runOne);
  }
  return outcomes;
}

function quietly(report: () => void): void {
  try {
    report();
  } catch {
    // A UI callback's fault is not the call's.
  }
}

async function runLimited(indices: readonly number[], limit: number, run: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < indices.length) await run(indices[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, indices.length) }, worker));
}

/** Longer than any tool name can be (64) with room for a pre-hook's aliases; a longer one is not echoed back whole. */
const MAX_CALL_NAME = 256;

/**
 * What is wrong with a call's shape, or `undefined` when it can be run. The
 * calls come from a model's output (or a provider SDK's parse of it), so any
 * shape is possible; arguments are checked later by dispatch like any other.
 */
function malformation(call: unknown): string | undefined {
  if (call === null || typeof call !== "object" || Array.isArray(call)) {
    return `expected an object with a name, got ${call === null ? "null" : Array.isArray(call) ? "an array" : `a ${typeof call}`}`;
  }
  const { name } = call as { name?: unknown };
  if (typeof name !== "string" || name === "") return `its name must be a non-empty string, got ${name === "" ? "an empty string" : typeof name}`;
  if (name.length > MAX_CALL_NAME) return `its name is ${name.length} characters long; no tool name is longer than ${MAX_CALL_NAME}`;
  return undefined;
}

function malformedOutcome(call: unknown, index: number, problem: string): ToolCallOutcome {
  const { id, name } = (typeof call === "object" && call !== null ? call : {}) as { id?: unknown; name?: unknown };
  const message = `Malformed tool call #${index + 1}: ${problem}`;
  const result = fail(message, "invalid_args");
  return {
    id: typeof id === "string" ? id : undefined,
    name: typeof name === "string" ? name.slice(0, MAX_CALL_NAME) : "",
    content: JSON.stringify({ error: message }),
    isError: true,
    result,
  };
}
