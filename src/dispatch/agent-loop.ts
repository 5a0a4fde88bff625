/**
 * Tools that need agent-level state (a todo list, memory, the session store,
 * sub-agents). Their schemas may live in the registry so the model sees them,
 * but only the agent loop can run them: `handleFunctionCall` hands them to the
 * loop's handlers before dispatch, and dispatch refuses them.
 */
export const AGENT_LOOP_TOOLS: readonly string[] = Object.freeze(["todo", "memory", "session_search", "delegate_task"]);

/** A handler the agent loop supplies for one of its tools; returns the model-facing string. */
export type AgentLoopHandler = (args: Record<string, unknown>, ctx: AgentLoopContext) => string | Promise<string>;

export interface AgentLoopContext {
  readonly signal?: AbortSignal | undefined;
  readonly sessionId?: string | undefined;
  readonly taskId?: string | undefined;
  readonly toolCallId?: string | undefined;
}
