import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolDefinitionError, ToolRegistry, createMemoryLogger, defineTool } from "../src/index.js";

function makeRegistry(options: ConstructorParameters<typeof ToolRegistry>[0] = {}) {
  const logger = createMemoryLogger();
  return { registry: new ToolRegistry({ logger, ...options }), logger };
}

const echoSchema = {
  description: "Echo the text back",
  parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
};

describe("register (Mibyan shape)", () => {
  it("stores an entry with the schema description as the model-facing one", () => {
    const { registry } = makeRegistry();
    const entry = registry.register({
      name: "echo",
      toolset: "demo",
      schema: echoSchema,
      handler: (args) => args.text,
      description: "registry metadata only",
      emoji: "🔊",
    });
    expect(entry).toBeDefined();
    expect(entry!.description).toBe("registry metadata only");
    expect(entry!.schema.description).toBe("Echo the text back");
    expect(entry!.definition).toEqual({ type: "function", function: { name: "echo", ...echoSchema } });
    expect(registry.get("echo")?.emoji).toBe("🔊");
    expect(registry.has("echo")).toBe(true);
    expect(registry.size).toBe(1);
  });

  it("falls back to the schema description for metadata and never copies description into the schema", () => {
    const { registry } = makeRegistry();
    const entry = registry.register({ name: "a", toolset: "t", schema: echoSchema, handler: () => "" })!;
    expect(entry.description).toBe("Echo the text back");
    const other = registry.register({ name: "b", toolset: "t", schema: { ...echoSchema, description: "model sees this" }, handler: () => "", description: "not this" })!;
    expect(other.definition.function.description).toBe("model sees this");
  });

  it("rejects malformed definitions with a typed error", () => {
    const { registry } = makeRegistry();
    expect(() => registry.register({ name: "bad name!", toolset: "t", schema: echoSchema, handler: () => "" })).toThrow(ToolDefinitionError);
    expect(() => registry.register({ name: "x", toolset: "t", schema: { description: "" }, handler: () => "" })).toThrow(/schema.description/);
    expect(() => registry.register({ name: "x", toolset: "t", schema: echoSchema, handler: "nope" as never })).toThrow(/handler must be a function/);
    expect(() =>
      registry.register({ name: "x", toolset: "t", schema: { description: "d", parameters: { type: "string" } }, handler: () => "" }),
    ).toThrow(/must describe an object/);
    expect(() => registry.register({ name: "x", toolset: "t", schema: { name: "y", description: "d" }, handler: () => "" })).toThrow(/differs/);
    expect(() => registry.register({ name: "x", toolset: "t", schema: echoSchema, handler: () => "", timeoutMs: -1 })).toThrow(/timeoutMs/);
    expect(registry.size).toBe(0);
  });

  it("rejects shadowing a tool of another toolset with a logged error, unless override", () => {
    const { registry, logger } = makeRegistry();
    registry.register({ name: "search", toolset: "web", schema: echoSchema, handler: () => "web" });
    const rejected = registry.register({ name: "search", toolset: "files", schema: echoSchema, handler: () => "files" });
    expect(rejected).toBeUndefined();
    expect(registry.get("search")?.toolset).toBe("web");
    expect(logger.messages.filter((m) => m.level === "error").map((m) => m.message).join()).toMatch(/would shadow.*"web"/);
    const replaced = registry.register({ name: "search", toolset: "files", schema: echoSchema, handler: () => "files", override: true });
    expect(replaced?.toolset).toBe("files");
  });

  it("re-registering in the same toolset replaces the tool (module reload)", async () => {
    const { registry } = makeRegistry();
    registry.register({ name: "v", toolset: "t", schema: echoSchema, handler: () => "one" });
    const before = registry.generation;
    registry.register({ name: "v", toolset: "t", schema: echoSchema, handler: () => "two" });
    expect(registry.generation).toBe(before + 1);
    expect(await registry.dispatch("v", { text: "x" })).toBe("two");
  });

  it("needs both override and the operator's opt-in for a plugin to replace a built-in", () => {
    const allowed = new Set<string>();
    const { registry, logger } = makeRegistry({ allowPluginOverride: (id) => allowed.has(id) });
    registry.register({ name: "terminal", toolset: "terminal", schema: echoSchema, handler: () => "builtin", source: { kind: "builtin" } });
    const plugin = { name: "terminal", toolset: "terminal", schema: echoSchema, handler: () => "plugin", source: { kind: "plugin", id: "acme" } } as const;
    expect(registry.register(plugin)).toBeUndefined();
    expect(registry.register({ ...plugin, override: true })).toBeUndefined();
    expect(logger.messages.at(-1)?.message).toMatch(/plugins\.entries\.acme\.allow_tool_override: true/);
    allowed.add("acme");
    expect(registry.register({ ...plugin, override: true })?.source).toEqual({ kind: "plugin", id: "acme" });
  });

  it("lists, filters and deregisters; the last tool of a toolset takes its check with it", () => {
    const { registry } = makeRegistry();
    const check = () => true;
    registry.register({ name: "b", toolset: "one", category: "shape", schema: echoSchema, handler: () => "", checkFn: check });
    registry.register({ name: "a", toolset: "one", category: "query", schema: echoSchema, handler: () => "", checkFn: check });
    registry.register({ name: "c", toolset: "two", schema: echoSchema, handler: () => "" });
    expect(registry.names).toEqual(["a", "b", "c"]);
    expect(registry.listTools({ category: "shape" }).map((t) => t.name)).toEqual(["b"]);
    expect(registry.listTools({ toolset: "one" }).map((t) => t.name)).toEqual(["a", "b"]);
    expect(registry.isToolsetAvailable("one")).toBe(true);
    const generation = registry.generation;
    expect(registry.deregister("a")).toBe(true);
    expect(registry.isToolsetAvailable("one")).toBe(true);
    expect(registry.deregister("b")).toBe(true);
    expect(registry.isToolsetAvailable("one")).toBe(false);
    expect(registry.deregister("nope")).toBe(false);
    expect(registry.generation).toBe(generation + 2);
  });
});

describe("register (ToolDefinition shape)", () => {
  it("accepts a list of typed parameters and calls handler(session, args)", async () => {
    const { registry } = makeRegistry();
    registry.register({
      name: "my_tool",
      description: "A custom tool",
      parameters: [{ name: "query", type: "string", description: "Input" }],
      category: "external",
      handler: async (session, { query }) => ({ success: true, data: { answer: query, user: (session as { user: string }).user } }),
    });
    expect(registry.get("my_tool")?.schema.parameters).toEqual({
      type: "object",
      properties: { query: { type: "string", description: "Input" } },
      required: ["query"],
    });
    expect(registry.get("my_tool")?.toolset).toBe("external");
    const result = await registry.invoke({ id: "call_1", name: "my_tool", arguments: { query: "kinase" } }, { user: "ada" });
    expect(result).toEqual({ success: true, data: { answer: "kinase", user: "ada" } });
  });

  it("accepts a zod schema: its JSON Schema for the model, zod itself for validation", async () => {
    const { registry } = makeRegistry();
    registry.register({
      name: "weather",
      description: "Weather for a city",
      parameters: z.object({ city: z.string().min(2), units: z.enum(["c", "f"]).optional() }),
      handler: (_session, args) => `sunny in ${args.city}`,
    });
    const parameters = registry.get("weather")!.schema.parameters as { properties: Record<string, unknown>; required: string[] };
    expect(Object.keys(parameters.properties)).toEqual(["city", "units"]);
    expect(parameters.required).toEqual(["city"]);
    expect(await registry.dispatch("weather", { city: "Oslo" })).toBe("sunny in Oslo");
    const bad = await registry.invoke({ name: "weather", arguments: { city: "O", units: "k" } });
    expect(bad.error?.kind).toBe("invalid_args");
    expect(bad.error?.issues?.map((i) => i.path).sort()).toEqual(["city", "units"]);
  });

  it("rejects a parameter list with unknown types or duplicates", () => {
    const { registry } = makeRegistry();
    expect(() =>
      registry.register({ name: "x", description: "d", parameters: [{ name: "q", type: "text" as never }], handler: () => "" }),
    ).toThrow(/type "text"/);
    expect(() =>
      registry.register({
        name: "x",
        description: "d",
        parameters: [
          { name: "q", type: "string" },
          { name: "q", type: "string" },
        ],
        handler: () => "",
      }),
    ).toThrow(/declared twice/);
    expect(() => registry.register({ name: "x", description: "d", schema: echoSchema, parameters: [], handler: () => "" } as never)).toThrow(/not both/);
  });

  it("makes parameters with a default or required: false optional", () => {
    const { registry } = makeRegistry();
    registry.register({
      name: "p",
      description: "d",
      parameters: [
        { name: "a", type: "string" },
        { name: "b", type: "integer", default: 3 },
        { name: "c", type: "boolean", required: false },
        { name: "d", type: "string", enum: ["x", "y"], required: true },
      ],
      handler: () => "",
    });
    expect((registry.get("p")!.schema.parameters as { required: string[] }).required).toEqual(["a", "d"]);
  });
});

describe("defineTool", () => {
  it("types the handler's arguments from a zod schema and hands it zod's parsed value", async () => {
    const { registry } = makeRegistry();
    const tool = defineTool({
      name: "forecast",
      description: "Forecast for a city",
      parameters: z.object({ city: z.string().trim(), days: z.number().int().default(3) }),
      handler: (_session, args) => {
        const city: string = args.city;
        const days: number = args.days;
        return { city, days };
      },
    });
    registry.register(tool);
    expect(await registry.dispatch("forecast", { city: "  Oslo " })).toBe('{"city":"Oslo","days":3}');
  });

  it("accepts an explicit argument type for parameter lists", async () => {
    const { registry } = makeRegistry();
    registry.register(
      defineTool<{ query: string }>({
        name: "lookup",
        description: "Look up",
        parameters: [{ name: "query", type: "string" }],
        handler: (_session, { query }) => query.toUpperCase(),
      }),
    );
    expect(await registry.dispatch("lookup", { query: "abc" })).toBe("ABC");
  });
});
