/**
 * The todo list and the conversation history: the block re-injected after a context compaction,
 * and the list rebuilt from a stored history when a session is resumed (the store itself lives in
 * memory and is gone with the process).
 */

import { TODO_INJECTION_HEADER, type TodoItem, type TodoStore } from "./todo-store.js";

/** Largest `todo` tool result trusted when rebuilding the list from history (a forged giant one is skipped). */
export const MAX_TODO_RESULT_CHARS = 512_000;

/** The few message fields these helpers read (OpenAI chat shape). */
export interface HistoryMessage {
  role: string;
  content?: unknown;
  tool_call_id?: string | undefined;
  tool_calls?: ReadonlyArray<{ id?: string; function?: { name?: string } }> | undefined;
}

/** Whether `message` is a todo block injected after an earlier compaction. */
export function isTodoInjection(message: HistoryMessage): boolean {
  return message.role === "user" && typeof message.content === "string" && message.content.startsWith(TODO_INJECTION_HEADER);
}

/**
 * `messages` after a compaction, with the todo block in it exactly once: blocks left by earlier
 * compactions are dropped (two stale lists side by side were the original's bug, #97604) and
 * `block` (from `TodoStore.snapshotForCompaction`) is appended as a user message, when not null.
 */
export function withTodoInjection<M extends HistoryMessage>(messages: readonly M[], block: string | null): (M | { role: "user"; content: string })[] {
  const kept: (M | { role: "user"; content: string })[] = messages.filter((m) => !isTodoInjection(m));
  if (block !== null) kept.push({ role: "user", content: block });
  return kept;
}

/**
 * Rebuilds the session's list from the last `todo` tool result in `messages` (a resumed session).
 * Returns the restored list, or undefined when the history holds no usable todo result.
 */
export async function hydrateTodosFromHistory(store: TodoStore, sessionId: string, messages: readonly HistoryMessage[]): Promise<TodoItem[] | undefined> {
  const todoCallIds = new Set<string>();
  for (const message of messages) {
    for (const call of message.tool_calls ?? []) {
      if (call.function?.name === "todo" && typeof call.id === "string") todoCallIds.add(call.id);
    }
  }
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== "tool" || message.tool_call_id === undefined || !todoCallIds.has(message.tool_call_id)) continue;
    if (typeof message.content !== "string" || message.content.length > MAX_TODO_RESULT_CHARS) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(message.content);
    } catch {
      continue;
    }
    const todos = (parsed as { todos?: unknown } | null)?.todos;
    if (!Array.isArray(todos)) continue;
    return await store.restore(sessionId, todos);
  }
  return undefined;
}
