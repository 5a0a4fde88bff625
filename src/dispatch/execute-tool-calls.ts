import type { ToolCall, ToolResult } from "../registry/types.js";
import { registry as defaultRegistry } from "../registry/singleton.js";
import { handleFunctionCallDetailed, type HandleFunctionCallOptions } from "./handle-function-call.js";

export interface ExecuteToolCallsOptions extends Omit<HandleFunctionCallOptions, "toolCallId"> {
  /** Most parallel-safe calls running at once (default 8). */
  maxConcurrency?: number;
}

export interface ToolCallOutcome {
  id?: string;
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
  const target = options.registry ?? defaultRegistry;
  const limit = Math.max(1, Math.floor(options.maxConcurrency ?? 8));
  const outcomes: ToolCallOutcome[] = new Array(calls.length);
  const runOne = async (index: number): Promise<void> => {
    const call = calls[index]!;
    const outcome = await handleFunctionCallDetailed(call.name, call.arguments, {
      registry: target,
      agentLoop: options.agentLoop,
      signal: options.signal,
      sessionId: options.sessionId,
      taskId: options.taskId,
      session: options.session,
      allowedTools: options.allowedTools,
      timeoutMs: options.timeoutMs,
      toolCallId: call.id,
    });
    outcomes[index] = { id: call.id, name: call.name, content: outcome.content, isError: outcome.isError, result: outcome.result };
  };

  let index = 0;
  while (index < calls.length) {
    if (!target.get(calls[index]!.name)?.parallelSafe) {
      await runOne(index++);
      continue;
    }
    const batch: number[] = [];
    while (index < calls.length && target.get(calls[index]!.name)?.parallelSafe) batch.push(index++);
    await runLimited(batch, limit, runOne);
  }
  return outcomes;
}

async function runLimited(indices: readonly number[], limit: number, run: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < indices.length) await run(indices[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, indices.length) }, worker));
}
