import { describe, expect, it } from "vitest";
import { ToolRegistry, createMemoryLogger, getToolDefinitions, selectTools, type OpenAIToolDefinition } from "../src/index.js";

function setup() {
  const logger = createMemoryLogger();
  const registry = new ToolRegistry({ logger });
  const add = (name: string, toolset: string, extra: Record<string, unknown> = {}) =>
    registry.register({ name, toolset, schema: { description: `${name} does things` }, handler: () => name, ...extra });
  add("terminal", "terminal");
  add("process", "terminal");
  add("read_file", "file");
  add("write_file", "file");
  add("web_search", "web");
  add("web_extract", "web", { checkFn: () => false });
  add("mcp_issue", "mcp-github");
  return { registry, logger };
}

const names = (defs: unknown[]) => (defs as OpenAIToolDefinition[]).map((d) => d.function.name);

describe("getToolDefinitions", () => {
  it("with neither list includes every available tool, sorted, in the OpenAI format", () => {
    const { registry } = setup();
    const defs = getToolDefinitions({ registry });
    expect(names(defs)).toEqual(["mcp_issue", "process", "read_file", "terminal", "web_search", "write_file"]);
    expect(defs[0]).toEqual({ type: "function", function: { name: "mcp_issue", description: "mcp_issue does things", parameters: { type: "object", properties: {} } } });
  });

  it("with enabled toolsets includes only those (composites, legacy names and dynamic toolsets expand)", () => {
    const { registry } = setup();
    expect(names(getToolDefinitions({ registry, enabledToolsets: ["file"] }))).toEqual(["read_file", "write_file"]);
    expect(names(getToolDefinitions({ registry, enabledToolsets: ["web_tools"] }))).toEqual(["web_search"]);
    expect(names(getToolDefinitions({ registry, enabledToolsets: ["mcp-github"] }))).toEqual(["mcp_issue"]);
    expect(names(getToolDefinitions({ registry, enabledToolsets: ["debugging"] }))).toEqual(["process", "read_file", "terminal", "web_search", "write_file"]);
    expect(names(getToolDefinitions({ registry, enabledToolsets: ["*"] }))).toHaveLength(6);
  });

  it("with disabled toolsets subtracts them from all tools, or from the enabled ones when both are given", () => {
    const { registry } = setup();
    expect(names(getToolDefinitions({ registry, disabledToolsets: ["terminal", "web"] }))).toEqual(["mcp_issue", "read_file", "write_file"]);
    expect(names(getToolDefinitions({ registry, enabledToolsets: ["debugging"], disabledToolsets: ["file"] }))).toEqual(["process", "terminal", "web_search"]);
  });

  it("throws UnknownToolsetError for an unknown toolset; with unknownToolsets: warn, warns with close matches", () => {
    const { registry, logger } = setup();
    expect(() => getToolDefinitions({ registry, enabledToolsets: ["termnal"] })).toThrow(/Unknown toolset "termnal"; did you mean: terminal/);
    const warn = { unknownToolsets: "warn" } as const;
    expect(getToolDefinitions({ registry, enabledToolsets: ["termnal"], ...warn })).toEqual([]);
    expect(logger.messages.map((m) => m.message).join("\n")).toMatch(/Unknown toolset "termnal"; did you mean: terminal/);
    const quiet = setup();
    getToolDefinitions({ registry: quiet.registry, enabledToolsets: ["termnal"], quiet: true, ...warn });
    expect(quiet.logger.messages).toEqual([]);
    expect(selectTools({ registry: quiet.registry, enabledToolsets: ["termnal"], ...warn }).warnings[0]).toMatch(/did you mean/);
  });

  it("exports the other provider formats", () => {
    const { registry } = setup();
    const anthropic = getToolDefinitions({ registry, enabledToolsets: ["file"], format: "anthropic" });
    expect(anthropic[0]).toEqual({ name: "read_file", description: "read_file does things", input_schema: { type: "object", properties: {} } });
    const raw = getToolDefinitions({ registry, enabledToolsets: ["file"], format: "raw" }) as { toolset: string }[];
    expect(raw[0]).toMatchObject({ name: "read_file", toolset: "file", category: "file" });
    expect(() => getToolDefinitions({ registry, format: "cohere" as never })).toThrow(/Unknown export format/);
  });
});

describe("dynamic schema patching", () => {
  function patchingRegistry() {
    const { registry, logger } = setup();
    registry.register({
      name: "orchestrate",
      toolset: "orchestration",
      schema: { description: "Runs tools: terminal, read_file, web_search, web_extract" },
      handler: () => "",
      patchSchema: (schema, available) => {
        const usable = ["terminal", "read_file", "web_search", "web_extract"].filter((n) => available.has(n));
        return { ...schema, description: usable.length ? `Runs tools: ${usable.join(", ")}` : "Runs no tools" };
      },
    });
    return { registry, logger };
  }
  const description = (defs: unknown[], name: string) => (defs as OpenAIToolDefinition[]).find((d) => d.function.name === name)?.function.description;

  it("rebuilds a schema from the tools that survived filtering and availability", () => {
    const { registry } = patchingRegistry();
    expect(description(getToolDefinitions({ registry }), "orchestrate")).toBe("Runs tools: terminal, read_file, web_search");
    expect(description(getToolDefinitions({ registry, enabledToolsets: ["orchestration", "file"] }), "orchestrate")).toBe("Runs tools: read_file");
    expect(description(getToolDefinitions({ registry, enabledToolsets: ["orchestration"] }), "orchestrate")).toBe("Runs no tools");
    expect(registry.get("orchestrate")!.schema.description).toBe("Runs tools: terminal, read_file, web_search, web_extract");
  });

  it("patches before exporting to other formats", () => {
    const { registry } = patchingRegistry();
    const [def] = getToolDefinitions({ registry, enabledToolsets: ["orchestration"], format: "anthropic" }) as { description: string }[];
    expect(def!.description).toBe("Runs no tools");
  });

  it("leaves out a tool whose patcher throws, rather than showing a stale schema", () => {
    const { registry, logger } = setup();
    registry.register({ name: "fragile", toolset: "x", schema: { description: "mentions terminal" }, handler: () => "", patchSchema: () => { throw new Error("oops"); } });
    expect(names(getToolDefinitions({ registry }))).not.toContain("fragile");
    expect(logger.messages.map((m) => m.message).join()).toMatch(/schema patch of fragile failed/);
  });
});
