/**
 * One `tools/call`: the call goes through `handleFunctionCall` (hooks, validation, approvals, time
 * limits, redaction all apply) with the request's AbortSignal, so a client's `notifications/cancelled`
 * (or a closed connection) aborts the tool — the terminal then ends the command's process tree.
 * Only the tools listed now may be called (`allowedTools`): `--exclude` holds for calls as well as
 * for the list. While it runs, the call sits in the elicitation surface's scope (which client to ask),
 * and sends `notifications/progress` every interval when the request carried a progress token.
 */
import type { AgentLoopHandler } from "../../dispatch/agent-loop.js";
import { handleFunctionCallDetailed } from "../../dispatch/handle-function-call.js";
import type { ToolRegistry } from "../../registry/tool-registry.js";
import { mcpCallScope, type McpCallScope } from "./elicitation-surface.js";
import { toMcpResult, type McpCallResult } from "./results.js";
import type { McpAgentLoopBinding } from "./types.js";
import type { ToolSearchBridge } from "../../agent/tool-search/bridge.js";

export interface CallRequest {
  name: string;
  /** The JSON-RPC request id: hooks and logs see the call as `mcp-<id>`. */
  requestId: string | number;
  arguments?: Record<string, unknown> | undefined;
  progressToken?: string | number | undefined;
}

export interface CallContext {
  registry: ToolRegistry;
  /** The tools listed now. */
  allowedTools: () => ReadonlySet<string>;
  sessionId: string;
  signal: AbortSignal;
  scope: McpCallScope;
  progressIntervalMs: number;
  sendProgress: (token: string | number, progress: number, message: string) => Promise<void>;
  /** The agent-loop tools' handlers and the stored session they work on (`McpServerOptions.agentLoop`). */
  agentLoop?: McpAgentLoopBinding | undefined;
  /** The tool search bridge when tool search defers tools: it answers the bridges and unwraps `tool_call`. */
  toolSearch?: (() => ToolSearchBridge | undefined) | undefined;
}

export async function callTool(request: CallRequest, context: CallContext): Promise<McpCallResult> {
  const { name } = request;
  let timer: ReturnType<typeof setInterval> | undefined;
  const token = request.progressToken;
  if (token !== undefined && context.progressIntervalMs > 0) {
    const started = Date.now();
    let progress = 0;
    timer = setInterval(() => {
      progress += 1;
      const seconds = Math.round((Date.now() - started) / 1000);
      // A lost notification is not worth failing the call over.
      context.sendProgress(token, progress, `${name} running for ${seconds} s`).catch(() => undefined);
    }, context.progressIntervalMs);
  }
  // An agent-loop tool works on the bound stored session (its todo list, its memory snapshot), not on
  // the MCP client's session; every other tool keeps the client's own.
  const bound = context.agentLoop;
  const loopCall = bound !== undefined && bound.handlers[name] !== undefined && context.registry.isAgentLoopTool(name);
  try {
    const bridge = context.toolSearch?.();
    const dispatch = bridge === undefined ? handleFunctionCallDetailed : bridge.handleFunctionCallDetailed.bind(bridge);
    const outcome = await mcpCallScope.run(context.scope, () =>
      dispatch(name, request.arguments ?? {}, {
        registry: context.registry,
        signal: context.signal,
        sessionId: loopCall ? bound.sessionId : context.sessionId,
        agentLoop: loopCall ? (bound.handlers as Record<string, AgentLoopHandler>) : undefined,
        // Each MCP session has its own working directory and variables, as an agent's task would.
        taskId: context.sessionId,
        toolCallId: `mcp-${request.requestId}`,
        allowedTools: context.allowedTools(),
        // Hooks tell an MCP client's calls from the program's own (`ctx.surface`, a plugin hook's `event.surface`).
        surface: "mcp",
      }),
    );
    return toMcpResult(outcome, outcome.result.success ? context.registry.get(name)?.outputSchema : undefined);
  } finally {
    if (timer !== undefined) clearInterval(timer);
  }
}
