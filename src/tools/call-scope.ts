/**
 * Which task and which session a tool call belongs to. Calls whose context
 * names neither share the "default" task (one environment: working directory,
 * exported variables) and the "default" session (approvals, processes), so
 * the terminal, process and file tools of one agent see the same state.
 */

import type { ToolContext } from "../registry/types.js";

export const DEFAULT_TASK = "default";
export const DEFAULT_SESSION = "default";

export function taskIdOf(ctx: ToolContext | undefined): string {
  return ctx?.taskId ?? DEFAULT_TASK;
}

export function sessionIdOf(ctx: ToolContext | undefined): string {
  return ctx?.sessionId ?? DEFAULT_SESSION;
}
