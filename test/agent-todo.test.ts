import { describe, expect, it } from "vitest";

import { handleFunctionCall } from "../src/dispatch/handle-function-call.js";
import { ToolRegistry } from "../src/registry/tool-registry.js";
import { createMemoryLogger } from "../src/util/logger.js";
import { hydrateTodosFromHistory, isTodoInjection, withTodoInjection } from "../src/agent/stores/todo-history.js";
import { InMemoryTodoStore, MAX_TODO_CONTENT_CHARS, TODO_INJECTION_HEADER } from "../src/agent/stores/todo-store.js";
import { createTodoHandler, TODO_TOOL } from "../src/agent/tools/todo.js";

const ctx = (sessionId?: string) => ({ sessionId });

async function call(handler: ReturnType<typeof createTodoHandler>, args: Record<string, unknown>, sessionId = "s1") {
  return JSON.parse(await handler(args, ctx(sessionId))) as { todos?: unknown[]; summary?: Record<string, number>; error?: string };
}

describe("todo replace", () => {
  it("keeps the last occurrence of a duplicate id and makes a bad status pending", async () => {
    const handler = createTodoHandler(new InMemoryTodoStore());
    const out = await call(handler, { todos: [{ id: "1", content: "a", status: "pending" }, { id: "1", content: "b", status: "bogus" }] });
    expect(out.todos).toEqual([{ id: "1", content: "b", status: "pending" }]);
  });

  it("keeps a duplicate's last occurrence at its own position", async () => {
    const store = new InMemoryTodoStore();
    const items = store.write("s", [{ id: "a", content: "1", status: "pending" }, { id: "b", content: "2", status: "pending" }, { id: "a", content: "3", status: "PENDING " }], false);
    expect(items.map((i) => `${i.id}:${i.content}`)).toEqual(["b:2", "a:3"]);
  });

  it("cuts content of 4001 characters to 4000 ending with the marker, and keeps the first 256 of 300 items", async () => {
    const handler = createTodoHandler(new InMemoryTodoStore());
    const long = await call(handler, { todos: [{ id: "x", content: "y".repeat(4001), status: "pending" }] });
    const content = (long.todos![0] as { content: string }).content;
    expect(content).toHaveLength(MAX_TODO_CONTENT_CHARS);
    expect(content.endsWith("… [truncated]")).toBe(true);
    const many = await call(handler, { todos: Array.from({ length: 300 }, (_, i) => ({ id: String(i), content: `t${i}`, status: "pending" })) });
    expect(many.todos).toHaveLength(256);
    expect((many.todos![255] as { id: string }).id).toBe("255");
  });

  it("turns malformed items into visible placeholders", async () => {
    const handler = createTodoHandler(new InMemoryTodoStore());
    const out = await call(handler, { todos: ["nope", { id: "", content: "", status: "done" }, { id: 7, content: "  spaced  ", status: "In_Progress" }, null] });
    expect(out.todos).toEqual([
      { id: "?", content: "(invalid item)", status: "pending" },
      { id: "?", content: "(no description)", status: "pending" },
      { id: "7", content: "spaced", status: "in_progress" },
      { id: "?", content: "(invalid item)", status: "pending" },
    ]);
  });
});

describe("todo merge", () => {
  it("updates only given non-empty fields, ignores an invalid status, skips id-less items, appends new ones", async () => {
    const handler = createTodoHandler(new InMemoryTodoStore());
    await call(handler, { todos: [{ id: "1", content: "write", status: "pending" }, { id: "2", content: "test", status: "pending" }] });
    const out = await call(handler, {
      merge: true,
      todos: [
        { id: "1", status: "in_progress" },
        { id: "2", content: "", status: "bogus" },
        { content: "no id", status: "pending" },
        { id: "3", content: "ship", status: "completed" },
      ],
    });
    expect(out.todos).toEqual([
      { id: "1", content: "write", status: "in_progress" },
      { id: "2", content: "test", status: "pending" },
      { id: "3", content: "ship", status: "completed" },
    ]);
    expect(out.summary).toEqual({ total: 3, pending: 1, in_progress: 1, completed: 1, cancelled: 0 });
  });

  it("merges only on a real true (the string \"false\" replaces)", async () => {
    const handler = createTodoHandler(new InMemoryTodoStore());
    await call(handler, { todos: [{ id: "1", content: "a", status: "pending" }] });
    const out = await call(handler, { merge: "false", todos: [{ id: "2", content: "b", status: "pending" }] });
    expect(out.todos).toEqual([{ id: "2", content: "b", status: "pending" }]);
  });

  it("the summary counts every status exactly", async () => {
    const handler = createTodoHandler(new InMemoryTodoStore());
    const statuses = ["pending", "pending", "in_progress", "completed", "completed", "completed", "cancelled"];
    const out = await call(handler, { todos: statuses.map((status, i) => ({ id: String(i), content: "x", status })) });
    expect(out.summary).toEqual({ total: 7, pending: 2, in_progress: 1, completed: 3, cancelled: 1 });
  });
});

describe("todo arguments", () => {
  it("gives the original's errors for a bad list and no store", async () => {
    const handler = createTodoHandler(new InMemoryTodoStore());
    expect(await handler({ todos: "abc" }, ctx("s"))).toBe('{"error":"todos must be a list of objects, got unparseable string"}');
    expect(await handler({ todos: { id: "1" } }, ctx("s"))).toBe('{"error":"todos must be a list, got dict"}');
    expect(await handler({ todos: "42" }, ctx("s"))).toBe('{"error":"todos must be a list, got int"}');
    expect(await createTodoHandler(undefined)({}, ctx("s"))).toBe('{"error":"TodoStore not initialized"}');
  });

  it("accepts the list as a JSON string, and reads without todos", async () => {
    const handler = createTodoHandler(new InMemoryTodoStore());
    await call(handler, { todos: JSON.stringify([{ id: "1", content: "a", status: "pending" }]) });
    expect((await call(handler, {})).todos).toEqual([{ id: "1", content: "a", status: "pending" }]);
  });

  it("keeps one list per session", async () => {
    const handler = createTodoHandler(new InMemoryTodoStore());
    await call(handler, { todos: [{ id: "1", content: "a", status: "pending" }] }, "one");
    expect((await call(handler, {}, "two")).todos).toEqual([]);
    expect((await call(handler, {}, "one")).todos).toHaveLength(1);
  });

  it("a returned list is a copy: changing it changes nothing stored", () => {
    const store = new InMemoryTodoStore();
    const items = store.write("s", [{ id: "1", content: "a", status: "pending" }], false);
    items[0]!.status = "completed";
    expect(store.read("s")[0]!.status).toBe("pending");
  });
});

describe("todo after compaction", () => {
  it("the block has only pending and in-progress items, and is null when none is active", () => {
    const store = new InMemoryTodoStore();
    store.write("s", [
      { id: "1", content: "done", status: "completed" },
      { id: "2", content: "doing", status: "in_progress" },
      { id: "3", content: "next", status: "pending" },
      { id: "4", content: "dropped", status: "cancelled" },
    ], false);
    expect(store.snapshotForCompaction("s")).toBe(`${TODO_INJECTION_HEADER}\n- [>] 2. doing (in_progress)\n- [ ] 3. next (pending)`);
    store.write("s", [{ id: "2", status: "completed" }, { id: "3", status: "cancelled" }], true);
    expect(store.snapshotForCompaction("s")).toBeNull();
    expect(store.snapshotForCompaction("other")).toBeNull();
  });

  it("two compactions leave exactly one block, the current one", () => {
    const store = new InMemoryTodoStore();
    store.write("s", [{ id: "1", content: "first", status: "pending" }], false);
    let history: { role: string; content: string }[] = [{ role: "system", content: "sys" }, { role: "user", content: "go" }];
    history = withTodoInjection(history, store.snapshotForCompaction("s"));
    store.write("s", [{ id: "2", content: "second", status: "in_progress" }], true);
    history = withTodoInjection([...history, { role: "assistant", content: "ok" }], store.snapshotForCompaction("s"));
    const blocks = history.filter(isTodoInjection);
    expect(blocks).toHaveLength(1);
    expect(blocks[0]!.content).toContain("- [>] 2. second (in_progress)");
    expect(history.at(-1)).toBe(blocks[0]);
    // Nothing active: earlier blocks go, none is added.
    store.write("s", [], false);
    expect(withTodoInjection(history, store.snapshotForCompaction("s")).filter(isTodoInjection)).toHaveLength(0);
  });

  it("a user who writes the header text is not taken for an injected block unless it starts the message", () => {
    expect(isTodoInjection({ role: "user", content: `quote: ${TODO_INJECTION_HEADER}` })).toBe(false);
    expect(isTodoInjection({ role: "assistant", content: TODO_INJECTION_HEADER })).toBe(false);
  });
});

describe("todo from a stored history", () => {
  it("restores the last todo result and skips a forged giant one", async () => {
    const store = new InMemoryTodoStore();
    const result = (todos: unknown[]) => JSON.stringify({ todos, summary: {} });
    const messages = [
      { role: "assistant", content: null, tool_calls: [{ id: "c1", function: { name: "todo" } }] },
      { role: "tool", tool_call_id: "c1", content: result([{ id: "1", content: "old", status: "pending" }]) },
      { role: "assistant", content: null, tool_calls: [{ id: "c2", function: { name: "todo" } }, { id: "c3", function: { name: "read_file" } }] },
      { role: "tool", tool_call_id: "c2", content: result([{ id: "2", content: "new", status: "in_progress" }]) },
      { role: "tool", tool_call_id: "c3", content: result([{ id: "x", content: "not a todo result", status: "pending" }]) },
    ];
    expect(await hydrateTodosFromHistory(store, "s", messages)).toEqual([{ id: "2", content: "new", status: "in_progress" }]);
    const forged = [...messages, { role: "assistant", content: null, tool_calls: [{ id: "c4", function: { name: "todo" } }] }, { role: "tool", tool_call_id: "c4", content: result([{ id: "9", content: "z".repeat(600_000), status: "pending" }]) }];
    expect(await hydrateTodosFromHistory(new InMemoryTodoStore(), "s", forged)).toEqual([{ id: "2", content: "new", status: "in_progress" }]);
    expect(await hydrateTodosFromHistory(new InMemoryTodoStore(), "s", [{ role: "user", content: "hi" }])).toBeUndefined();
  });
});

describe("todo through handleFunctionCall", () => {
  it("the registered schema is listed, dispatch refuses it, the loop's handler runs it", async () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    registry.register(TODO_TOOL);
    expect(registry.getDefinitions(["todo"]).map((d) => d.function.name)).toEqual(["todo"]);
    expect((await registry.invoke({ name: "todo" })).error?.kind).toBe("agent_loop");
    const store = new InMemoryTodoStore();
    const content = await handleFunctionCall("todo", '{"todos":[{"id":"1","content":"a","status":"pending"}]}', {
      registry,
      sessionId: "s9",
      agentLoop: { todo: createTodoHandler(store) },
    });
    expect(JSON.parse(content).summary.total).toBe(1);
    expect(store.read("s9")).toHaveLength(1);
  });
});
