/**
 * The `todo` agent-loop tool: its schema (registered so the model sees it; dispatch refuses to
 * run it) and the handler the loop runs it with, over a `TodoStore`.
 *
 * Result: `{"todos":[…],"summary":{"total","pending","in_progress","completed","cancelled"}}`, or
 * `{"error": …}` for arguments it cannot use (the original's texts).
 */

import type { AgentLoopContext, AgentLoopHandler } from "../../dispatch/agent-loop.js";
import type { FunctionSchema, MibyanToolOptions } from "../../registry/types.js";
import { MAX_TODO_CONTENT_CHARS, MAX_TODO_ITEMS, summarizeTodos, TODO_STATUSES, type TodoStore } from "../stores/todo-store.js";

export const TODO_SCHEMA: FunctionSchema = {
  name: "todo",
  description: [
    "Manage your task list for the current session. Use it for complex tasks with 3 or more steps, or when the user gives you several tasks.",
    "Call with no parameters to read the current list.",
    "Writing: provide `todos` (each item {id, content, status}). merge=false (default) replaces the whole list with a fresh plan; merge=true updates existing items by id (only the fields you give) and appends new ones.",
    "List order is priority. Keep only ONE item in_progress at a time. Mark an item completed as soon as it is done and verified; if something fails, cancel it and add a revised item.",
    `Statuses: ${TODO_STATUSES.join(", ")}. At most ${MAX_TODO_ITEMS} items; content longer than ${MAX_TODO_CONTENT_CHARS} characters is cut.`,
    "Always returns the full current list with a summary of counts.",
  ].join("\n\n"),
  parameters: {
    type: "object",
    properties: {
      todos: {
        type: "array",
        description: "Task items to write. Omit to read the current list.",
        items: {
          type: "object",
          properties: {
            id: { type: "string", description: "Unique item identifier." },
            content: { type: "string", description: "Task description." },
            status: { type: "string", enum: [...TODO_STATUSES], description: "Current status." },
          },
          required: ["id", "content", "status"],
        },
      },
      merge: {
        type: "boolean",
        default: false,
        description: "true: update existing items by id and add new ones. false (default): replace the entire list.",
      },
    },
    required: [],
  },
};

/** Python's type names, which the original's error texts use. */
function pythonTypeName(value: unknown): string {
  if (value === null) return "NoneType";
  if (Array.isArray(value)) return "list";
  switch (typeof value) {
    case "string":
      return "str";
    case "boolean":
      return "bool";
    case "number":
      return Number.isInteger(value) ? "int" : "float";
    case "object":
      return "dict";
    default:
      return typeof value;
  }
}

const error = (message: string): string => JSON.stringify({ error: message });

/** The todo handler as the loop sees it: the tool, and its part in a compaction (types.ts `AgentLoopToolHandler`). */
export type TodoHandler = AgentLoopHandler & {
  /** The active items under `TODO_INJECTION_HEADER`, or null: what the loop re-injects after a compaction. */
  snapshotForCompaction(sessionId: string): Promise<string | null>;
  /** The list follows the conversation into the compaction's continuation session. */
  continueSession(fromSessionId: string, toSessionId: string): Promise<void>;
};

/**
 * The loop's `todo` handler over `store`, one list per `ctx.sessionId` (calls without a session id
 * share the list of the empty id). `store` may be undefined: every call then gets the original's
 * "TodoStore not initialized" error.
 */
export function createTodoHandler(store: TodoStore | undefined): TodoHandler {
  const todo = async function todo(args: Record<string, unknown>, ctx: AgentLoopContext): Promise<string> {
    if (store === undefined) return error("TodoStore not initialized");
    const sessionId = ctx.sessionId ?? "";
    let todos: unknown = args.todos;
    let items;
    if (todos === undefined || todos === null) {
      items = await store.read(sessionId);
    } else {
      // Models sometimes send the list as a JSON string.
      if (typeof todos === "string") {
        try {
          todos = JSON.parse(todos);
        } catch {
          return error("todos must be a list of objects, got unparseable string");
        }
      }
      if (!Array.isArray(todos)) return error(`todos must be a list, got ${pythonTypeName(todos)}`);
      // Only a real true merges: the original took any truthy value, so "false" merged.
      const merge = args.merge === true || args.merge === "true";
      items = await store.write(sessionId, todos, merge);
    }
    return JSON.stringify({ todos: items, summary: summarizeTodos(items) });
  };
  return Object.assign(todo, {
    snapshotForCompaction: async (sessionId: string) => (store === undefined ? null : await store.snapshotForCompaction(sessionId)),
    continueSession: async (from: string, to: string) => {
      if (store === undefined) return;
      const items = await store.read(from);
      if (items.length > 0) await store.restore(to, items);
    },
  });
}

/**
 * The registration that lists `todo` among the model's tools (toolset `todo`). Dispatch refuses
 * agent-loop tools before calling a handler, so the one here only explains that, should a
 * registry be configured without `todo` among its agent-loop tools.
 */
export const TODO_TOOL: MibyanToolOptions = {
  name: "todo",
  toolset: "todo",
  emoji: "📋",
  schema: TODO_SCHEMA,
  handler: () => error("todo is an agent-loop tool: run it through the agent loop (createTodoHandler)"),
};
