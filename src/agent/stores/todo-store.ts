/**
 * The agent's todo list: one ordered list per session, kept in memory (the Python original's
 * `TodoStore`). The loop reaches it only through the `TodoStore` interface, so an embedding
 * application can keep todos elsewhere (a database, its own UI state).
 *
 * Writes normalise what the model sends instead of refusing it: a malformed item becomes a
 * visible placeholder, a bad status becomes `pending`, over-long content is cut, and the list
 * is capped, because the list rides through every context compaction (todo-injection.ts) and
 * must stay small.
 */

export const TODO_STATUSES = ["pending", "in_progress", "completed", "cancelled"] as const;
export type TodoStatus = (typeof TODO_STATUSES)[number];

export interface TodoItem {
  id: string;
  content: string;
  status: TodoStatus;
}

/** Longest item content kept; longer content keeps its head and ends with `TODO_TRUNCATION_MARKER`. */
export const MAX_TODO_CONTENT_CHARS = 4000;
/** Most items kept in one list (the head: list order is priority). */
export const MAX_TODO_ITEMS = 256;
export const TODO_TRUNCATION_MARKER = "… [truncated]";

type Awaitable<T> = T | Promise<T>;

/** Where the loop keeps each session's todo list. Implementations may be synchronous or not. */
export interface TodoStore {
  /** A copy of the session's list (empty when it has none). */
  read(sessionId: string): Awaitable<TodoItem[]>;
  /**
   * Writes `todos` (raw, as the model sent them) and returns the list after the write:
   * `merge: false` replaces the list, `merge: true` updates items by id and appends new ones.
   */
  write(sessionId: string, todos: readonly unknown[], merge: boolean): Awaitable<TodoItem[]>;
  /** Replaces the list with already-trusted items (history hydration on resume); normalised the same way. */
  restore(sessionId: string, todos: readonly unknown[]): Awaitable<TodoItem[]>;
  /**
   * The block the loop appends after a context compaction: the session's pending and
   * in-progress items under `TODO_INJECTION_HEADER`, or null when none is active.
   */
  snapshotForCompaction(sessionId: string): Awaitable<string | null>;
  /** Forgets the session's list (the session ended). */
  clear(sessionId: string): Awaitable<void>;
}

const STATUS_SET: ReadonlySet<string> = new Set(TODO_STATUSES);

export function isTodoStatus(value: unknown): value is TodoStatus {
  return typeof value === "string" && STATUS_SET.has(value);
}

/** Python's `str(x).strip()` for the values a model sends; objects and null count as missing. */
function text(value: unknown): string {
  if (typeof value === "string") return value.trim();
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value).trim();
  return "";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Content cut to `MAX_TODO_CONTENT_CHARS`, head kept, marker appended. */
export function capTodoContent(content: string): string {
  if (content.length <= MAX_TODO_CONTENT_CHARS) return content;
  return content.slice(0, MAX_TODO_CONTENT_CHARS - TODO_TRUNCATION_MARKER.length) + TODO_TRUNCATION_MARKER;
}

/** A clean `{id, content, status}` from whatever the model sent for one item. */
export function normalizeTodoItem(item: unknown): TodoItem {
  if (!isRecord(item)) return { id: "?", content: "(invalid item)", status: "pending" };
  const id = text(item.id) || "?";
  const content = text(item.content);
  const status = text(item.status ?? "pending").toLowerCase();
  return {
    id,
    content: content ? capTodoContent(content) : "(no description)",
    status: isTodoStatus(status) ? status : "pending",
  };
}

/**
 * Duplicate ids collapse to their last occurrence, which keeps its own position. Items without an
 * id (and non-objects) cannot collide and are all kept.
 */
export function dedupeTodosById(todos: readonly unknown[]): unknown[] {
  const lastIndex = new Map<string, number>();
  const keep: number[] = [];
  todos.forEach((item, i) => {
    const id = isRecord(item) ? text(item.id) : "";
    if (id === "") keep.push(i);
    else lastIndex.set(id, i);
  });
  for (const i of lastIndex.values()) keep.push(i);
  return keep.sort((a, b) => a - b).map((i) => todos[i]);
}

/** The replace-mode list for `todos`. */
export function replaceTodos(todos: readonly unknown[]): TodoItem[] {
  return dedupeTodosById(todos).map(normalizeTodoItem).slice(0, MAX_TODO_ITEMS);
}

/**
 * The merge-mode list: an existing id gets only the fields given (non-empty content, a valid
 * status); a new id is normalised and appended; items without an id are skipped.
 */
export function mergeTodos(current: readonly TodoItem[], todos: readonly unknown[]): TodoItem[] {
  const items = current.map((item) => ({ ...item }));
  const byId = new Map(items.map((item) => [item.id, item]));
  for (const raw of dedupeTodosById(todos)) {
    if (!isRecord(raw)) continue;
    const id = text(raw.id);
    if (id === "") continue;
    const existing = byId.get(id);
    if (existing === undefined) {
      const added = normalizeTodoItem(raw);
      items.push(added);
      byId.set(id, added);
      continue;
    }
    const content = text(raw.content);
    if (content) existing.content = capTodoContent(content);
    const status = text(raw.status).toLowerCase();
    if (isTodoStatus(status)) existing.status = status;
  }
  return items.slice(0, MAX_TODO_ITEMS);
}

export interface TodoSummary {
  total: number;
  pending: number;
  in_progress: number;
  completed: number;
  cancelled: number;
}

export function summarizeTodos(items: readonly TodoItem[]): TodoSummary {
  const summary: TodoSummary = { total: items.length, pending: 0, in_progress: 0, completed: 0, cancelled: 0 };
  for (const item of items) summary[item.status] += 1;
  return summary;
}

/** Marks the header of the block re-injected after a compaction (a compactor finds earlier blocks by it). */
export const TODO_INJECTION_HEADER = "[Your active task list was preserved across context compression]";

const MARKERS: Record<TodoStatus, string> = { completed: "[x]", in_progress: "[>]", pending: "[ ]", cancelled: "[~]" };

/**
 * The post-compaction block: pending and in-progress items only (finished ones would make the
 * model redo them), or null when nothing is active.
 */
export function formatTodosForInjection(items: readonly TodoItem[]): string | null {
  const active = items.filter((item) => item.status === "pending" || item.status === "in_progress");
  if (active.length === 0) return null;
  return [TODO_INJECTION_HEADER, ...active.map((item) => `- ${MARKERS[item.status]} ${item.id}. ${item.content} (${item.status})`)].join("\n");
}

/** The in-memory `TodoStore`: one list per session id, gone with the process. */
export class InMemoryTodoStore implements TodoStore {
  private readonly lists = new Map<string, TodoItem[]>();

  read(sessionId: string): TodoItem[] {
    return (this.lists.get(sessionId) ?? []).map((item) => ({ ...item }));
  }

  write(sessionId: string, todos: readonly unknown[], merge: boolean): TodoItem[] {
    const next = merge ? mergeTodos(this.lists.get(sessionId) ?? [], todos) : replaceTodos(todos);
    this.lists.set(sessionId, next);
    return this.read(sessionId);
  }

  restore(sessionId: string, todos: readonly unknown[]): TodoItem[] {
    return this.write(sessionId, todos, false);
  }

  snapshotForCompaction(sessionId: string): string | null {
    return formatTodosForInjection(this.lists.get(sessionId) ?? []);
  }

  clear(sessionId: string): void {
    this.lists.delete(sessionId);
  }
}
