// Unknown tool names under `allowedTools`, the discoverBuiltinTools() hint, and
// replacements of a built-in (or another source's) tool being logged.
import { describe, expect, it } from "vitest";

import {
  ToolRegistry,
  createMemoryLogger,
  discoverBuiltinTools,
  executeToolCalls,
  handleFunctionCallDetailed,
  registry as defaultRegistry,
} from "../src/index.js";
import { BUILTIN_TOOL_NAMES } from "../src/registry/builtin-names.js";

function setup() {
  const logger = createMemoryLogger();
  const registry = new ToolRegistry({ logger });
  for (const name of ["terminal", "process", "read_file"]) {
    registry.register({ name, toolset: name === "read_file" ? "file" : "terminal", schema: { description: name }, handler: () => `${name} ran` });
  }
  return { registry, logger };
}

describe("unknown tools in a session limited by allowedTools", () => {
  it("a misspelt name is an unknown tool with suggestions among the allowed tools", async () => {
    const { registry } = setup();
    const outcome = await handleFunctionCallDetailed("termnal", '{"command":"ls"}', { registry, allowedTools: ["terminal", "process"] });
    expect(outcome.content).toBe('{"error":"Unknown tool: termnal. Did you mean: terminal?"}');
    expect(outcome.result.error?.kind).toBe("unknown_tool");
  });

  it("suggests nothing outside allowedTools", async () => {
    const { registry } = setup();
    const outcome = await handleFunctionCallDetailed("read_fil", "{}", { registry, allowedTools: ["terminal"] });
    expect(outcome.result.error).toEqual({ kind: "unknown_tool", message: "Unknown tool: read_fil" });
  });

  it("a real tool outside allowedTools stays 'not enabled', naming no other tool", async () => {
    const { registry } = setup();
    const outcome = await handleFunctionCallDetailed("read_file", "{}", { registry, allowedTools: ["terminal"] });
    expect(outcome.result.error).toEqual({ kind: "unavailable", message: "Tool read_file is not enabled for this session" });
    // An agent-loop tool the session was not offered is refused the same way, not called unknown.
    const loop = await handleFunctionCallDetailed("todo", "{}", { registry, allowedTools: ["terminal"] });
    expect(loop.result.error?.kind).toBe("unavailable");
  });

  it("executeToolCalls answers nonexistent names as unknown tools", async () => {
    const { registry } = setup();
    const outcomes = await executeToolCalls(
      [
        { id: "1", name: "proces", arguments: "{}" },
        { id: "2", name: "nosuch_tool", arguments: "{}" },
        { id: "3", name: "terminal", arguments: "{}" },
      ],
      { registry, allowedTools: ["terminal", "process"] },
    );
    expect(outcomes.map((o) => [o.result.error?.kind, o.result.error?.message])).toEqual([
      ["unknown_tool", "Unknown tool: proces. Did you mean: process?"],
      ["unknown_tool", "Unknown tool: nosuch_tool"],
      [undefined, undefined],
    ]);
    expect(outcomes[2]!.content).toBe("terminal ran");
  });
});

describe("a built-in name in a registry without the built-ins", () => {
  it("hints at discoverBuiltinTools()", async () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    const outcome = await handleFunctionCallDetailed("terminal", '{"command":"ls"}', { registry });
    expect(outcome.result.error?.kind).toBe("unknown_tool");
    expect(outcome.result.error?.message).toMatch(/^Unknown tool: terminal\. Built-in tools are registered by discoverBuiltinTools\(\)/);
    // Not for names that are no built-in's.
    const other = await handleFunctionCallDetailed("nosuch", "{}", { registry });
    expect(other.result.error?.message).toBe("Unknown tool: nosuch");
    // Also when the session limits the tools (the name is answered as unknown there too).
    const limited = await handleFunctionCallDetailed("read_file", "{}", { registry, allowedTools: ["x"] });
    expect(limited.result.error?.message).toMatch(/discoverBuiltinTools\(\)/);
  });

  it("no hint once built-ins are registered in that registry", async () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    registry.register({ name: "read_file", toolset: "file", source: { kind: "builtin" }, schema: { description: "r" }, handler: () => "" });
    expect(registry.builtinsRegistered).toBe(true);
    const outcome = await handleFunctionCallDetailed("terminal", "{}", { registry });
    expect(outcome.result.error?.message).toBe("Unknown tool: terminal");
  });

  it("the static list of built-in names is what discovery registers", async () => {
    await discoverBuiltinTools({ cacheFile: false });
    const discovered = defaultRegistry
      .listTools()
      .filter((entry) => entry.source.kind === "builtin")
      .map((entry) => entry.name)
      .sort();
    expect(discovered).toEqual([...BUILTIN_TOOL_NAMES].sort());
    expect(defaultRegistry.builtinsRegistered).toBe(true);
  }, 60_000);
});

describe("replacing a registered tool", () => {
  const warnings = (logger: ReturnType<typeof createMemoryLogger>) => logger.messages.filter((m) => m.level === "warn").map((m) => m.message);

  it("replacing a built-in in its own toolset works and is logged, naming the tool and both sources", async () => {
    const logger = createMemoryLogger();
    const registry = new ToolRegistry({ logger });
    registry.register({ name: "terminal", toolset: "terminal", source: { kind: "builtin" }, schema: { description: "t" }, handler: () => "builtin" });
    expect(warnings(logger)).toEqual([]);
    const replaced = registry.register({ name: "terminal", toolset: "terminal", schema: { description: "mine" }, handler: () => "mine" });
    expect(replaced).toBeDefined();
    expect(await registry.dispatch("terminal", {})).toBe("mine");
    expect(warnings(logger)).toEqual([
      'Tool "terminal" (built-in, toolset "terminal") was replaced by a registration from user code',
    ]);
  });

  it("logs a replacement from another source, not a source replacing its own tool", () => {
    const { registry, logger } = setup();
    registry.register({ name: "read_file", toolset: "file", schema: { description: "again" }, handler: () => "" });
    expect(warnings(logger)).toEqual([]);
    registry.register({ name: "read_file", toolset: "file", source: { kind: "mcp", server: "fs" }, schema: { description: "mcp" }, handler: () => "" });
    registry.register({ name: "read_file", toolset: "file", source: { kind: "mcp", server: "fs" }, schema: { description: "mcp2" }, handler: () => "" });
    registry.register({ name: "read_file", toolset: "file", source: { kind: "plugin", id: "p" }, schema: { description: "p" }, handler: () => "" });
    expect(warnings(logger)).toEqual([
      'Tool "read_file" (user code, toolset "file") was replaced by a registration from MCP server "fs"',
      'Tool "read_file" (MCP server "fs", toolset "file") was replaced by a registration from plugin "p"',
    ]);
  });
});
