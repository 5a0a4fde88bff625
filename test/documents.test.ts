/**
 * The two design documents' examples, in TypeScript, run as written in spirit.
 */
import { describe, expect, it } from "vitest";
import { ToolRegistry, createMemoryLogger, ok, type ToolCall, type ToolDefinitionOptions, type ToolResult } from "../src/index.js";

describe("Mibyan document: registry.register()", () => {
  it("registers with every documented field and dispatches", async () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    process.env.MIBYAN_DOC_VAR = "set";
    const handleTerminal = (args: Record<string, unknown>) => JSON.stringify({ output: `ran ${String(args.command)}`, exit_code: 0 });
    const checkTerminal = () => true;
    const entry = registry.register({
      name: "terminal", // Unique tool name (used in API schemas)
      toolset: "terminal", // Toolset this tool belongs to
      schema: {
        description: "Run commands",
        parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
      },
      handler: handleTerminal,
      checkFn: checkTerminal, // Optional: returns true/false for availability
      requiresEnv: ["MIBYAN_DOC_VAR"], // Optional: env vars needed
      isAsync: false, // Accepted; async handlers are detected at run time
      description: "Run commands", // Optional registry metadata
      emoji: "💻", // Emoji for spinner/progress display
    });
    expect(entry?.emoji).toBe("💻");
    expect(registry.isToolsetAvailable("terminal")).toBe(true);
    expect(await registry.dispatch("terminal", { command: "ls" })).toBe('{"output":"ran ls","exit_code":0}');
    delete process.env.MIBYAN_DOC_VAR;
  });
});

describe("ToolRegistry document", () => {
  type Session = { isAdmin: boolean; log: string[] };

  function sessionRegistry() {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    const tools: ToolDefinitionOptions[] = [
      {
        name: "search",
        description: "Search the knowledge base",
        parameters: [{ name: "query", type: "string", description: "What to look for" }],
        category: "query",
        handler: async (_session, { query }) => ok({ hits: [`${String(query)}-1`, `${String(query)}-2`] }),
      },
      {
        name: "manage",
        description: "Administer the knowledge base",
        parameters: [{ name: "action", type: "string", enum: ["reindex", "purge"] }],
        category: "admin",
        handler: async (_session, { action }) => ok({ done: action }),
      },
      {
        name: "circle",
        description: "Draw a circle",
        parameters: [
          { name: "radius", type: "number" },
          { name: "fill", type: "string", required: false },
        ],
        category: "shape",
        handler: (_session, { radius }) => ok({ area: Math.PI * Number(radius) ** 2 }),
      },
    ];
    registry.registerMany(tools);
    return registry;
  }

  it("lists, filters by category, counts, tests membership and looks up", () => {
    const registry = sessionRegistry();
    expect(registry.listTools().map((t) => t.name)).toEqual(["circle", "manage", "search"]);
    expect(registry.listTools({ category: "shape" }).map((t) => t.name)).toEqual(["circle"]);
    expect(registry.listTools({ category: "query" }).map((t) => t.name)).toEqual(["search"]);
    expect(registry.size).toBe(3);
    expect(registry.has("search")).toBe(true);
    expect(registry.names).toEqual(["circle", "manage", "search"]);
    expect(registry.get("search")?.description).toBe("Search the knowledge base");
  });

  it("invokes a call with a session and returns a typed ToolResult", async () => {
    const registry = sessionRegistry();
    const call: ToolCall = { id: "call_1", name: "search", arguments: { query: "kinase" } };
    const result = await registry.invoke(call, { isAdmin: false, log: [] } satisfies Session);
    expect(result).toEqual({ success: true, data: { hits: ["kinase-1", "kinase-2"] } });
  });

  it("validates required parameters before calling the handler", async () => {
    const registry = sessionRegistry();
    const result = await registry.invoke({ id: "call_2", name: "circle", arguments: { fill: "red" } });
    expect(result.success).toBe(false);
    expect(result.error).toMatchObject({ kind: "invalid_args", issues: [{ path: "radius", message: "is required" }] });
  });

  it("returns clean error results for unknown tools and raising handlers", async () => {
    const registry = sessionRegistry();
    expect((await registry.invoke({ name: "nope" })).error?.kind).toBe("unknown_tool");
    registry.register({ name: "raiser", description: "raises", handler: () => { throw new Error("kaput"); } });
    expect((await registry.invoke({ name: "raiser" })).error).toEqual({ kind: "failed", message: "Tool execution failed: Error: kaput" });
  });

  it("runs the document's auth pre-hook and logging post-hook", async () => {
    const registry = sessionRegistry();
    const authHook = async (call: ToolCall, ctx: { session?: unknown }) => {
      if (call.name === "manage" && !(ctx.session as Session).isAdmin) throw new Error("Unauthorized");
    };
    const logHook = async (call: ToolCall, result: ToolResult, ctx: { session?: unknown }) => {
      (ctx.session as Session).log.push(`${call.name} -> ${result.success}`);
    };
    registry.registerPreHook(authHook);
    registry.registerPostHook(logHook);
    const user: Session = { isAdmin: false, log: [] };
    const blocked = await registry.invoke({ name: "manage", arguments: { action: "purge" } }, user);
    expect(blocked.error).toMatchObject({ kind: "blocked", message: expect.stringContaining("Unauthorized") });
    await registry.invoke({ name: "search", arguments: { query: "q" } }, user);
    expect(user.log).toEqual(["search -> true"]);
    const admin: Session = { isAdmin: true, log: [] };
    expect((await registry.invoke({ name: "manage", arguments: { action: "reindex" } }, admin)).data).toEqual({ done: "reindex" });
    expect(registry.removeHook(authHook)).toBe(true);
    expect(registry.removeHook(logHook, "post")).toBe(true);
    expect(registry.removeHook(logHook)).toBe(false);
  });

  it("exports raw JSON-serialisable schemas that adapters translate further", () => {
    const registry = sessionRegistry();
    const schemas = registry.exportSchemas();
    expect(JSON.parse(JSON.stringify(schemas))).toEqual(schemas);
    expect(schemas.find((s) => s.name === "circle")).toEqual({
      name: "circle",
      description: "Draw a circle",
      category: "shape",
      toolset: "shape",
      parameters: { type: "object", properties: { radius: { type: "number" }, fill: { type: "string" } }, required: ["radius"] },
    });
  });
});
