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
  /** Set on messages the loop made up (a session store keeps it): only those are read as an injected block. */
  synthetic?: string | undefined;
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

/** A line of the injected block: `- [>] <id>. <content> (in_progress)` (formatTodosForInjection). */
const INJECTED_ITEM = /^- \[[ >]\] ([\s\S]*?)\. ([\s\S]*) \((pending|in_progress)\)$/;

/** The items of an injected block (active ones only: that is all the block holds); undefined when it does not parse. */
function itemsOfInjection(content: string): { id: string; content: string; status: string }[] | undefined {
  const body = content.slice(TODO_INJECTION_HEADER.length).replace(/^\n/, "");
  if (body.trim() === "") return undefined;
  const items = [];
  // An item's content may span lines: an item starts only where a line starts with a marker.
  for (const entry of body.split(/\n(?=- \[[ >x~]\] )/)) {
    const match = INJECTED_ITEM.exec(entry);
    if (match === null) return undefined;
    items.push({ id: match[1]!, content: match[2]!, status: match[3]! });
  }
  return items;
}

/**
 * Rebuilds the session's list from the last `todo` tool result in `messages` (a resumed session), or
 * from the block a compaction injected when that came later: after a compaction the todo calls may
 * have been summarised away, and the block (active items) is what the conversation still shows.
 * Returns the restored list, or undefined when the history holds neither.
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
    // Only a block the loop injected (marked synthetic): a user who types the header does not set the list.
    if (message.synthetic !== undefined && isTodoInjection(message) && (message.content as string).length <= MAX_TODO_RESULT_CHARS) {
      const items = itemsOfInjection(message.content as string);
      if (items !== undefined) return await store.restore(sessionId, items);
      continue;
    }
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
