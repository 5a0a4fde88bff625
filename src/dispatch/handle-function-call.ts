import type { CallOptions, ToolResult } from "../registry/types.js";
import type { ToolRegistry } from "../registry/tool-registry.js";
import { registry as defaultRegistry } from "../registry/singleton.js";
import { capText, describeThrown } from "../util/text.js";
import type { AgentLoopHandler } from "./agent-loop.js";
import { parseArguments } from "./arguments.js";
import { redactForModel } from "../redaction/tool-output.js";
import { fail, resultFromHandlerValue } from "./result.js";

export interface HandleFunctionCallOptions extends CallOptions {
  registry?: ToolRegistry | undefined;
  /** The agent loop's own tools (todo, memory, ...), run before registry dispatch. */
  agentLoop?: Readonly<Record<string, AgentLoopHandler>> | undefined;
}

export interface FunctionCallOutcome {
  /** The model-facing string. */
  content: string;
  /** Whether the call failed (an error result, not a tool's ordinary output). */
  isError: boolean;
  result: ToolResult;
}

/**
 * The agent loop's entry point for one model tool call: agent-loop tools
 * first, then registry dispatch, all inside a second error wrap so that even
 * a fault in the runtime reaches the model as `{"error": "Error executing <tool>: ..."}`.
 */
export async function handleFunctionCall(name: string, args?: unknown, options: HandleFunctionCallOptions = {}): Promise<string> {
  return (await handleFunctionCallDetailed(name, args, options)).content;
}

export async function handleFunctionCallDetailed(
  name: string,
  args?: unknown,
  options: HandleFunctionCallOptions = {},
): Promise<FunctionCallOutcome> {
  const target = options.registry ?? defaultRegistry;
  try {
    const loopHandler = options.agentLoop?.[name];
    if (loopHandler !== undefined && target.isAgentLoopTool(name)) {
      return await runAgentLoopTool(target, name, args, loopHandler, options);
    }
    const outcome = await target.run(name, args, options);
    return { content: outcome.content, isError: !outcome.result.success, result: outcome.result };
  } catch (thrown) {
    const message = capText(`Error executing ${name}: ${describeThrown(thrown)}`, target.maxErrorChars);
    return { content: JSON.stringify({ error: capText(redactForModel(message), target.maxErrorChars) }), isError: true, result: fail(message) };
  }
}

async function runAgentLoopTool(
  target: ToolRegistry,
  name: string,
  args: unknown,
  handler: AgentLoopHandler,
  options: HandleFunctionCallOptions,
): Promise<FunctionCallOutcome> {
  const parsed = parseArguments(name, args);
  if (!parsed.ok) {
    const content = JSON.stringify({ error: parsed.result.error?.message });
    return { content, isError: true, result: parsed.result };
  }
  const content = await handler(parsed.args, {
    signal: options.signal,
    sessionId: options.sessionId,
    taskId: options.taskId,
    toolCallId: options.toolCallId,
  });
  if (typeof content !== "string") {
    const message = `Agent-loop tool ${name} returned a ${typeof content}; agent-loop handlers must return a string`;
    return { content: JSON.stringify({ error: capText(message, target.maxErrorChars) }), isError: true, result: fail(message, "invalid_result") };
  }
  const result = resultFromHandlerValue(name, content);
  return { content, isError: !result.success, result };
}
