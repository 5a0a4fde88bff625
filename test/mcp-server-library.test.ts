/**
 * createMcpServer driven by the SDK's own Client over InMemoryTransport: the tool list is
 * getToolDefinitions' (untouched schemas), calls go through handleFunctionCall (hooks,
 * validation, redaction), results map to MCP content, cancellation and progress reach the tool,
 * a registry change is announced with tools/list_changed.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterEach, describe, expect, it } from "vitest";

import { createMcpServer, getToolDefinitions, handleFunctionCall, ToolRegistry, createMemoryLogger, type MibyanMcpServer } from "../src/index.js";
import { annotationsFor } from "../src/mcp/server/annotations.js";
import { InMemoryTodoStore } from "../src/agent/stores/todo-store.js";
import { createTodoHandler, TODO_TOOL } from "../src/agent/tools/todo.js";
import { registerGithubLike, type Ran } from "./tool-search-fixtures.js";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

function testRegistry(): ToolRegistry {
  const registry = new ToolRegistry({ logger: createMemoryLogger() });
  registry.register({
    name: "echo",
    toolset: "basic",
    schema: { description: "Echo the text back.", parameters: { type: "object", properties: { text: { type: "string", minLength: 1 } }, required: ["text"], additionalProperties: false } },
    handler: (args) => `echo: ${String(args.text)}`,
  });
  registry.register({
    name: "stats",
    toolset: "basic",
    schema: { description: "Numbers as an object.", parameters: { type: "object", properties: {} } },
    handler: () => ({ count: 3, names: ["a", "b"] }),
  });
  registry.register({
    name: "boom",
    toolset: "basic",
    schema: { description: "Always throws.", parameters: { type: "object", properties: {} } },
    handler: () => {
      throw new Error("the disk is on fire");
    },
  });
  registry.register({
    name: "refuse",
    toolset: "basic",
    schema: { description: "Answers with an error, as a JSON string (the runtime's convention for a failed result).", parameters: { type: "object", properties: {} } },
    handler: () => JSON.stringify({ error: "quota exceeded for today" }),
  });
  registry.register({
    name: "picture",
    toolset: "media",
    schema: { description: "A caption and a picture.", parameters: { type: "object", properties: {} } },
    handler: () => ({ type: "multimodal", parts: [{ type: "text", text: "a red dot" }, { type: "image", data: PNG, mimeType: "image/png" }] }),
  });
  registry.register({
    name: "leak",
    toolset: "basic",
    redactOutput: true,
    schema: { description: "Prints a configuration with a secret in it.", parameters: { type: "object", properties: {} } },
    handler: () => "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD\nregion=eu",
  });
  registry.register({
    name: "wait",
    toolset: "slow",
    schema: { description: "Waits until aborted or ms elapsed.", parameters: { type: "object", properties: { ms: { type: "number" } } } },
    handler: (args, ctx) =>
      new Promise<string>((resolve) => {
        const timer = setTimeout(() => resolve("waited"), Number(args.ms ?? 30_000));
        ctx.signal.addEventListener("abort", () => {
          clearTimeout(timer);
          aborted.push(ctx.toolName);
          resolve("aborted");
        });
      }),
  });
  return registry;
}

const aborted: string[] = [];
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
});

async function connected(server: MibyanMcpServer, capabilities: Record<string, unknown> = {}): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "test", version: "1" }, { capabilities });
  await client.connect(clientSide);
  open.push(client);
  return client;
}

async function serve(options: Parameters<typeof createMcpServer>[0] = {}): Promise<{ server: MibyanMcpServer; client: Client; registry: ToolRegistry }> {
  const registry = options?.registry ?? testRegistry();
  const server = await createMcpServer({ registry, ...options });
  open.push(server);
  return { server, client: await connected(server), registry };
}

describe("tools/list", () => {
  it("is exactly getToolDefinitions for the same selection: names, descriptions, schemas", async () => {
    const { client, registry } = await serve({ enabledToolsets: ["basic", "media"] });
    const { tools } = await client.listTools();
    const expected = getToolDefinitions({ registry, enabledToolsets: ["basic", "media"] });
    expect(tools.map((t) => t.name)).toEqual(expected.map((d) => d.function.name));
    for (const [i, tool] of tools.entries()) {
      expect(tool.description).toBe(expected[i]!.function.description);
      expect(tool.inputSchema).toEqual(expected[i]!.function.parameters);
    }
    // additionalProperties and minLength survive: no zod round trip.
    expect(tools.find((t) => t.name === "echo")!.inputSchema).toMatchObject({ additionalProperties: false, properties: { text: { minLength: 1 } } });
  });

  it("--tools and --exclude narrow it, and an excluded tool cannot be called", async () => {
    const { client } = await serve({ tools: ["echo", "stats", "boom"], exclude: ["boom"] });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["echo", "stats"]);
    const result = await client.callTool({ name: "boom", arguments: {} });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).not.toContain("disk is on fire");
  });

  it("the agent-loop tools (todo, memory, session_search, delegate_task) are not listed, and cannot be called", async () => {
    const registry = testRegistry();
    for (const name of ["todo", "memory", "session_search", "delegate_task"]) {
      registry.register({ name, toolset: "agent", schema: { description: `${name} of the agent loop.`, parameters: { type: "object", properties: {} } }, handler: () => `${name} ran` });
    }
    const { client } = await serve({ registry });
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain("echo");
    for (const name of ["todo", "memory", "session_search", "delegate_task"]) {
      expect(names).not.toContain(name);
      const result = await client.callTool({ name, arguments: {} });
      expect(result.isError, name).toBe(true);
      expect(JSON.stringify(result.content)).not.toContain(`${name} ran`);
    }
  });

  it("bound to a stored session (agentLoop): the tools with a handler are listed and work on that session, whichever client calls", async () => {
    const registry = testRegistry();
    registry.register(TODO_TOOL);
    registry.register({ name: "memory", toolset: "memory", schema: { description: "memory of the agent loop.", parameters: { type: "object", properties: {} } }, handler: () => "memory ran" });
    const todos = new InMemoryTodoStore();
    const { client } = await serve({ registry, agentLoop: { sessionId: "stored-1", handlers: { todo: createTodoHandler(todos) } } });
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain("todo");
    // No handler for memory here: still neither listed nor callable.
    expect(names).not.toContain("memory");
    expect((await client.callTool({ name: "memory", arguments: {} })).isError).toBe(true);

    const wrote = await client.callTool({ name: "todo", arguments: { todos: [{ id: "1", content: "write the release notes", status: "in_progress" }] } });
    expect(wrote.isError ?? false).toBe(false);
    expect(JSON.stringify(wrote.content)).toContain("write the release notes");
    // The list belongs to the bound session, not to the MCP client's.
    expect(todos.read("stored-1").map((t) => t.content)).toEqual(["write the release notes"]);
    expect(todos.read("mcp")).toEqual([]);
    // A second client reads the same list.
    const other = await serve({ registry, agentLoop: { sessionId: "stored-1", handlers: { todo: createTodoHandler(todos) } } });
    const read = await other.client.callTool({ name: "todo", arguments: {} });
    expect(JSON.stringify(read.content)).toContain("write the release notes");
  });

  it("tool search on: MCP tools deferred behind the bridges; tool_call runs the real tool; an excluded tool stays out of reach", async () => {
    const registry = testRegistry();
    const ran: Ran[] = [];
    registerGithubLike(registry, "gh", ran, 20);
    const hooked: string[] = [];
    registry.addPreHook((call, ctx) => void hooked.push(`${call.name}:${ctx.surface}`));
    const { client } = await serve({ registry, toolSearch: { enabled: "on" }, exclude: ["mcp__gh__delete_issue"] });
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["echo", "tool_search", "tool_describe", "tool_call"]));
    expect(names.some((n) => n.startsWith("mcp__"))).toBe(false);
    const found = await client.callTool({ name: "tool_search", arguments: { query: "create issue" } });
    expect(JSON.stringify(found.content)).toContain("mcp__gh__create_issue");
    const called = await client.callTool({ name: "tool_call", arguments: { name: "mcp__gh__create_issue", arguments: { owner: "acme", repo: "web" } } });
    expect(called.isError ?? false).toBe(false);
    const excluded = await client.callTool({ name: "tool_call", arguments: { name: "mcp__gh__delete_issue", arguments: { owner: "acme", repo: "web" } } });
    expect(excluded.isError).toBe(true);
    expect(ran.map((r) => r.name)).toEqual(["mcp__gh__create_issue"]);
    expect(hooked.filter((h) => h.startsWith("mcp__"))).toEqual(["mcp__gh__create_issue:mcp"]);
  });

  it("a typo in a toolset fails at creation, not as an empty list", async () => {
    await expect(createMcpServer({ registry: testRegistry(), enabledToolsets: ["basci"] })).rejects.toThrow(/basci/);
  });

  it("annotations: reads are read-only, terminal and writes destructive, only for built-ins", () => {
    const builtin = { source: { kind: "builtin" } } as never;
    expect(annotationsFor(builtin, "read_file")).toMatchObject({ readOnlyHint: true });
    expect(annotationsFor(builtin, "terminal")).toMatchObject({ destructiveHint: true });
    expect(annotationsFor(builtin, "write_file")).toMatchObject({ destructiveHint: true });
    expect(annotationsFor({ source: { kind: "plugin", id: "x" } } as never, "read_file")).toBeUndefined();
  });
});

describe("tools/call", () => {
  it("a string result is one text block, not an error", async () => {
    const { client } = await serve();
    const result = await client.callTool({ name: "echo", arguments: { text: "hi" } });
    expect(result).toMatchObject({ content: [{ type: "text", text: "echo: hi" }] });
    expect(result.isError ?? false).toBe(false);
  });

  it("an object result also goes out as structuredContent", async () => {
    const { client } = await serve();
    const result = await client.callTool({ name: "stats", arguments: {} });
    expect(result.structuredContent).toEqual({ count: 3, names: ["a", "b"] });
    expect(JSON.parse((result.content as { text: string }[])[0]!.text)).toEqual({ count: 3, names: ["a", "b"] });
  });

  it("failures are isError results with the text the model would see", async () => {
    const { client, registry } = await serve();
    for (const [name, args] of [
      ["boom", {}],
      ["refuse", {}],
      ["no_such_tool", {}],
      ["echo", { text: "" }],
      ["echo", { text: "x", extra: 1 }],
    ] as const) {
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError, name).toBe(true);
      const text = (result.content as { text: string }[])[0]!.text;
      const model = await handleFunctionCall(name, args, { registry, allowedTools: name === "no_such_tool" ? undefined : new Set(["echo", "boom", "refuse"]) });
      if (name !== "no_such_tool") expect(text).toBe(model);
      expect(JSON.parse(text)).toHaveProperty("error");
    }
    const invalid = await client.callTool({ name: "echo", arguments: { text: "" } });
    expect(JSON.parse((invalid.content as { text: string }[])[0]!.text).issues[0]).toMatchObject({ path: "text" });
  });

  it("a malformed request is a protocol error, not a result", async () => {
    const { client } = await serve();
    await expect(client.request({ method: "tools/call", params: { arguments: {} } } as never, (await import("@modelcontextprotocol/sdk/types.js")).CallToolResultSchema)).rejects.toThrow(/Invalid|-32602/);
  });

  it("a multimodal result becomes text and image blocks", async () => {
    const { client } = await serve();
    const result = await client.callTool({ name: "picture", arguments: {} });
    expect(result.content).toEqual([
      { type: "text", text: "a red dot" },
      { type: "image", data: PNG, mimeType: "image/png" },
    ]);
  });

  it("secrets in a tool's output are redacted before they leave the server", async () => {
    const { client } = await serve();
    const result = await client.callTool({ name: "leak", arguments: {} });
    const text = JSON.stringify(result);
    expect(text).not.toContain("abcdefghijklmnopqrstuvwxyz0123456789");
    expect(text).toContain("region=eu");
  });

  it("hooks apply to MCP calls: a pre-hook blocks", async () => {
    const registry = testRegistry();
    registry.addPreHook((call) => (call.name === "echo" ? null : undefined));
    const { client } = await serve({ registry });
    const result = await client.callTool({ name: "echo", arguments: { text: "hi" } });
    expect(result.isError).toBe(true);
  });

  it("hooks see an MCP call's session and call id", async () => {
    const registry = testRegistry();
    const seen: { sessionId?: string | undefined; taskId?: string | undefined; toolCallId?: string | undefined }[] = [];
    registry.addPostHook((_call, _result, ctx) => {
      seen.push({ sessionId: ctx.sessionId, taskId: ctx.taskId, toolCallId: ctx.toolCallId });
    });
    const { client } = await serve({ registry });
    await client.callTool({ name: "echo", arguments: { text: "hi" } });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ sessionId: "mcp", taskId: "mcp" });
    expect(seen[0]!.toolCallId).toMatch(/^mcp-\d+$/);
  });

  it("the client's cancellation aborts the tool's signal", async () => {
    const { client } = await serve();
    aborted.length = 0;
    const controller = new AbortController();
    const call = client.callTool({ name: "wait", arguments: { ms: 30_000 } }, undefined, { signal: controller.signal });
    await new Promise((r) => setTimeout(r, 200));
    controller.abort("changed my mind");
    await expect(call).rejects.toThrow();
    await expect.poll(() => aborted, { timeout: 2_000 }).toContain("wait");
  });

  it("progress notifications carry the client's token; none without one", async () => {
    const { client } = await serve({ progressIntervalMs: 100 });
    const seen: number[] = [];
    await client.callTool({ name: "wait", arguments: { ms: 450 } }, undefined, { onprogress: (p) => seen.push(p.progress) });
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen[1]!).toBeGreaterThan(seen[0]!);

    let notifications = 0;
    client.fallbackNotificationHandler = async (n) => {
      if (n.method === "notifications/progress") notifications++;
    };
    await client.callTool({ name: "wait", arguments: { ms: 350 } });
    expect(notifications).toBe(0);
  });
});

describe("output schemas (item 3)", () => {
  const outputSchema = { type: "object", properties: { n: { type: "number" } }, required: ["n"] } as const;
  function measured(): ToolRegistry {
    const registry = testRegistry();
    registry.register({ name: "measure", toolset: "out", outputSchema, schema: { description: "A count.", parameters: { type: "object", properties: {} } }, handler: () => ({ n: 3 }) });
    registry.register({ name: "miscount", toolset: "out", outputSchema, schema: { description: "A count, wrongly.", parameters: { type: "object", properties: {} } }, handler: () => ({ n: "three" }) });
    registry.register({ name: "prose", toolset: "out", outputSchema, schema: { description: "Words, not an object.", parameters: { type: "object", properties: {} } }, handler: () => "about three" });
    return registry;
  }

  it("a tool with an output schema lists it, and its result comes as structuredContent the SDK client accepts", async () => {
    const { client } = await serve({ registry: measured() });
    const tools = (await client.listTools()).tools;
    expect(tools.find((t) => t.name === "measure")!.outputSchema).toEqual(outputSchema);
    expect(tools.find((t) => t.name === "echo")!.outputSchema).toBeUndefined();
    // The SDK's Client validates structuredContent against the listed outputSchema and throws on a mismatch.
    const result = await client.callTool({ name: "measure", arguments: {} });
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent).toEqual({ n: 3 });
    expect(result.content).toEqual([{ type: "text", text: '{"n":3}' }]);
  });

  it("a result that does not match, or is no object, is an isError result with the text and what is wrong (not a client-side throw)", async () => {
    const { client } = await serve({ registry: measured() });
    const wrong = await client.callTool({ name: "miscount", arguments: {} });
    expect(wrong.isError).toBe(true);
    expect(wrong.structuredContent).toBeUndefined();
    expect(JSON.stringify(wrong.content)).toContain('{\\"n\\":\\"three\\"}');
    expect(JSON.stringify(wrong.content)).toMatch(/does not match the tool's output schema: n must be of type number/);
    const prose = await client.callTool({ name: "prose", arguments: {} });
    expect(prose.isError).toBe(true);
    expect(JSON.stringify(prose.content)).toMatch(/about three.*not a JSON object/);
  });

  it("plays the attacker: an output schema with a catastrophic pattern is checked in linear time", async () => {
    const registry = testRegistry();
    // With a backtracking engine, ^(a+)+$ against 5,000 a's and a "!" would not finish in our lifetime.
    registry.register({
      name: "redos",
      toolset: "out",
      outputSchema: { type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } } },
      schema: { description: "A string built to backtrack.", parameters: { type: "object", properties: {} } },
      handler: () => ({ s: `${"a".repeat(5_000)}!` }),
    });
    const { client } = await serve({ registry });
    const result = await client.callTool({ name: "redos", arguments: {} });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain("must match pattern");
  });

  it("an output schema that is not an object schema is refused at registration", () => {
    const registry = testRegistry();
    for (const bad of [{ type: "string" }, [], "object", { properties: {} }]) {
      expect(() =>
        registry.register({ name: "bad_out", toolset: "out", outputSchema: bad as never, schema: { description: "x", parameters: { type: "object", properties: {} } }, handler: () => ({}) }),
      ).toThrow(/outputSchema must be a JSON Schema object with type "object"/);
    }
    expect(registry.has("bad_out")).toBe(false);
  });
});

describe("tools/list_changed", () => {
  it("a tool registered at runtime is announced and listed", async () => {
    const registry = testRegistry();
    const server = await createMcpServer({ registry, availabilityRecheckMs: 0 });
    open.push(server);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const changed: string[][] = [];
    const client = new Client(
      { name: "test", version: "1" },
      { listChanged: { tools: { onChanged: (_err, tools) => changed.push((tools ?? []).map((t) => t.name)) } } },
    );
    await client.connect(clientSide);
    open.push(client);
    registry.register({ name: "late", toolset: "basic", schema: { description: "Came later.", parameters: { type: "object", properties: {} } }, handler: () => "late" });
    await expect.poll(() => changed.at(-1) ?? [], { timeout: 1_000 }).toContain("late");
  });

  it("a tool that becomes available is announced (no refresh: the server's recheck finds it)", async () => {
    const registry = testRegistry();
    delete process.env.MCP_SERVER_TEST_KEY;
    registry.register({ name: "needs_key", toolset: "basic", requiresEnv: ["MCP_SERVER_TEST_KEY"], schema: { description: "Needs a key.", parameters: { type: "object", properties: {} } }, handler: () => "ok" });
    const server = await createMcpServer({ registry, availabilityRecheckMs: 50 });
    open.push(server);
    const client = await connected(server);
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain("needs_key");
    let notified = 0;
    client.setNotificationHandler((await import("@modelcontextprotocol/sdk/types.js")).ToolListChangedNotificationSchema, () => {
      notified++;
    });
    process.env.MCP_SERVER_TEST_KEY = "x";
    try {
      await expect.poll(() => notified, { timeout: 1_000 }).toBeGreaterThan(0);
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("needs_key");
    } finally {
      delete process.env.MCP_SERVER_TEST_KEY;
    }
  });
});
