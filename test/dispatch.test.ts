import { describe, expect, it } from "vitest";
import { ToolRegistry, createMemoryLogger, fail, ok, handleFunctionCall, handleFunctionCallDetailed } from "../src/index.js";

function setup() {
  const registry = new ToolRegistry({ logger: createMemoryLogger() });
  registry.register({
    name: "add",
    toolset: "math",
    schema: {
      description: "Add two numbers",
      parameters: {
        type: "object",
        properties: { a: { type: "number" }, b: { type: "number" }, mode: { type: "string", enum: ["int", "float"] } },
        required: ["a", "b"],
        additionalProperties: false,
      },
    },
    handler: ({ a, b }) => JSON.stringify({ sum: (a as number) + (b as number) }),
  });
  return registry;
}

describe("dispatch", () => {
  it("runs a sync handler and returns its string verbatim", async () => {
    expect(await setup().dispatch("add", { a: 1, b: 2 })).toBe('{"sum":3}');
  });

  it("parses JSON-string arguments and treats an empty string as no arguments", async () => {
    const registry = setup();
    expect(await registry.dispatch("add", '{"a": 2, "b": 5}')).toBe('{"sum":7}');
    registry.register({ name: "now", toolset: "t", schema: { description: "time" }, handler: () => "noon" });
    expect(await registry.dispatch("now", "")).toBe("noon");
    expect(await registry.dispatch("now", "  ")).toBe("noon");
    expect(await registry.dispatch("now")).toBe("noon");
  });

  it("answers malformed JSON and non-object arguments with a specific invalid_args error", async () => {
    const registry = setup();
    const malformed = JSON.parse(await registry.dispatch("add", '{"a": 1,'));
    expect(malformed.error).toMatch(/^Invalid JSON arguments for add: /);
    expect(JSON.parse(await registry.dispatch("add", "[1,2]")).error).toBe("Arguments for add must be a JSON object, got an array");
    expect(JSON.parse(await registry.dispatch("add", "42")).error).toBe("Arguments for add must be a JSON object, got a number");
    const result = await registry.invoke({ name: "add", arguments: "{" });
    expect(result.error?.kind).toBe("invalid_args");
  });

  it("returns {error: Unknown tool: x} for an unknown tool", async () => {
    expect(await setup().dispatch("nope", {})).toBe('{"error":"Unknown tool: nope"}');
    expect((await setup().invoke({ name: "nope" })).error?.kind).toBe("unknown_tool");
  });

  it("validates required parameters, types, enums and unknown parameters, listing every issue", async () => {
    const registry = setup();
    const result = await registry.invoke({ name: "add", arguments: { a: "one", mode: "hex", extra: true } });
    expect(result.success).toBe(false);
    expect(result.error?.kind).toBe("invalid_args");
    const issues = result.error!.issues!;
    expect(issues).toEqual(
      expect.arrayContaining([
        { path: "b", message: "is required", keyword: "required" },
        { path: "a", message: 'must be of type number, got the string "one"', keyword: "type" },
        { path: "mode", message: 'must be one of: "int", "float"', keyword: "enum" },
        { path: "extra", message: "is not a parameter of this tool", keyword: "additionalProperties" },
      ]),
    );
    const content = JSON.parse(await registry.dispatch("add", { a: 1 }));
    expect(content.error).toBe("Invalid arguments for add: b: is required");
    expect(content.issues).toEqual([{ path: "b", message: "is required" }]);
  });

  it("awaits async handlers", async () => {
    const registry = setup();
    registry.register({
      name: "slow",
      toolset: "t",
      schema: { description: "slow" },
      handler: async () => {
        await new Promise((r) => setTimeout(r, 5));
        return { done: true };
      },
    });
    expect(await registry.dispatch("slow")).toBe('{"done":true}');
  });

  it("wraps a throwing handler as Tool execution failed: Type: message", async () => {
    const registry = setup();
    registry.register({ name: "boom", toolset: "t", schema: { description: "b" }, handler: () => { throw new TypeError("bad thing"); } });
    registry.register({ name: "reject", toolset: "t", schema: { description: "r" }, handler: async () => { throw new RangeError("later"); } });
    registry.register({ name: "throws_string", toolset: "t", schema: { description: "s" }, handler: () => { throw "plain"; } });
    expect(await registry.dispatch("boom")).toBe('{"error":"Tool execution failed: TypeError: bad thing"}');
    expect(await registry.dispatch("reject")).toBe('{"error":"Tool execution failed: RangeError: later"}');
    expect(await registry.dispatch("throws_string")).toBe('{"error":"Tool execution failed: plain"}');
  });

  it("rejects unsupported handler return values with a clear invalid_result error", async () => {
    const registry = setup();
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    registry.register({ name: "undef", toolset: "t", schema: { description: "u" }, handler: () => undefined });
    registry.register({ name: "fn", toolset: "t", schema: { description: "f" }, handler: () => () => 1 });
    registry.register({ name: "big", toolset: "t", schema: { description: "b" }, handler: () => 10n });
    registry.register({ name: "circ", toolset: "t", schema: { description: "c" }, handler: () => circular });
    expect(JSON.parse(await registry.dispatch("undef")).error).toMatch(/returned undefined/);
    expect(JSON.parse(await registry.dispatch("fn")).error).toMatch(/returned a function/);
    expect(JSON.parse(await registry.dispatch("big")).error).toMatch(/returned a bigint/);
    expect(JSON.parse(await registry.dispatch("circ")).error).toMatch(/not JSON-serialisable/);
    expect((await registry.invoke({ name: "undef" })).error?.kind).toBe("invalid_result");
  });

  it("serialises values and ToolResults; a JSON error string is a failure", async () => {
    const registry = setup();
    registry.register({ name: "num", toolset: "t", schema: { description: "n" }, handler: () => 4 });
    registry.register({ name: "nul", toolset: "t", schema: { description: "n" }, handler: () => null });
    registry.register({ name: "okr", toolset: "t", schema: { description: "o" }, handler: () => ok({ x: 1 }) });
    registry.register({ name: "failr", toolset: "t", schema: { description: "f" }, handler: () => fail("no luck") });
    registry.register({ name: "plainfail", toolset: "t", schema: { description: "p" }, handler: () => ({ success: false, error: "plain message" }) });
    registry.register({ name: "pyerr", toolset: "t", schema: { description: "p" }, handler: () => JSON.stringify({ error: "python style", code: 3 }) });
    registry.register({ name: "nullerr", toolset: "t", schema: { description: "p" }, handler: () => '{"output":"hi","error":null}' });
    expect(await registry.dispatch("num")).toBe("4");
    expect(await registry.dispatch("nul")).toBe("null");
    expect(await registry.dispatch("okr")).toBe('{"x":1}');
    expect(await registry.dispatch("failr")).toBe('{"error":"no luck"}');
    expect(await registry.dispatch("plainfail")).toBe('{"error":"plain message"}');
    expect((await registry.invoke({ name: "plainfail" })).error).toEqual({ kind: "failed", message: "plain message" });
    const py = await registry.run("pyerr");
    expect(py.result.success).toBe(false);
    expect(py.content).toBe('{"error":"python style","code":3}');
    expect((await registry.run("nullerr")).result.success).toBe(true);
  });

  it("caps long results, keeping head and tail in well-formed JSON", async () => {
    const registry = setup();
    registry.register({ name: "long", toolset: "t", schema: { description: "l" }, maxResultChars: 100, handler: () => `HEAD${"x".repeat(1000)}TAIL` });
    const content = JSON.parse(await registry.dispatch("long"));
    expect(content.truncated).toBe(true);
    expect(content.total_chars).toBe(1008);
    expect(content.content.startsWith("HEAD")).toBe(true);
    expect(content.content.endsWith("TAIL")).toBe(true);
    expect(content.content).toMatch(/\[\.\.\. 908 characters omitted \.\.\.\]/);
  });

  it("caps error text sent to the model", async () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger(), maxErrorChars: 50 });
    registry.register({ name: "loud", toolset: "t", schema: { description: "l" }, handler: () => { throw new Error("e".repeat(500)); } });
    const error = JSON.parse(await registry.dispatch("loud")).error as string;
    expect(error.length).toBeLessThan(90);
    expect(error).toMatch(/more characters\]$/);
  });
});

describe("availability at dispatch", () => {
  it("refuses a tool whose check fails, throws, or whose env var is missing", async () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    registry.register({ name: "off", toolset: "t", schema: { description: "o" }, handler: () => "ran", checkFn: () => false });
    registry.register({ name: "throwing", toolset: "t2", schema: { description: "t" }, handler: () => "ran", checkFn: () => { throw new Error("probe broke"); } });
    registry.register({ name: "needs_key", toolset: "t3", schema: { description: "k" }, handler: () => "ran", requiresEnv: ["MIBYAN_TEST_SURELY_UNSET"] });
    expect(JSON.parse(await registry.dispatch("off")).error).toBe("Tool off is unavailable: availability check failed");
    expect(JSON.parse(await registry.dispatch("throwing")).error).toBe("Tool throwing is unavailable: availability check threw Error: probe broke");
    expect(JSON.parse(await registry.dispatch("needs_key")).error).toBe("Tool needs_key is unavailable: missing environment variable MIBYAN_TEST_SURELY_UNSET");
    expect((await registry.invoke({ name: "off" })).error?.kind).toBe("unavailable");
  });
});

describe("agent-loop tools", () => {
  it("dispatch refuses them with a clear error; handleFunctionCall hands them to the loop", async () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    registry.register({ name: "todo", toolset: "todo", schema: { description: "plan" }, handler: () => "registry stub ran" });
    const viaRegistry = await registry.invoke({ name: "todo" });
    expect(viaRegistry.error?.kind).toBe("agent_loop");
    expect(await registry.dispatch("memory")).toMatch(/memory is an agent-loop tool/);
    const seen: unknown[] = [];
    const content = await handleFunctionCall("todo", '{"items":["a"]}', {
      registry,
      sessionId: "s1",
      agentLoop: { todo: (args, ctx) => { seen.push(args, ctx.sessionId); return JSON.stringify({ ok: true }); } },
    });
    expect(content).toBe('{"ok":true}');
    expect(seen).toEqual([{ items: ["a"] }, "s1"]);
    expect(await handleFunctionCall("todo", "{}", { registry })).toMatch(/agent-loop tool/);
  });
});

describe("handleFunctionCall", () => {
  it("passes through dispatch results and reports errors", async () => {
    const registry = setup();
    const outcome = await handleFunctionCallDetailed("add", { a: 1, b: 1 }, { registry });
    expect(outcome).toMatchObject({ content: '{"sum":2}', isError: false });
    expect((await handleFunctionCallDetailed("add", {}, { registry })).isError).toBe(true);
  });

  it("wraps a fault of the runtime itself as Error executing <tool>", async () => {
    class BrokenRegistry extends ToolRegistry {
      override run(): never {
        throw new Error("registry exploded");
      }
    }
    const registry = new BrokenRegistry({ logger: createMemoryLogger() });
    expect(await handleFunctionCall("anything", {}, { registry })).toBe('{"error":"Error executing anything: Error: registry exploded"}');
  });
});

describe("strict-mode nulls", () => {
  it("treats null for an optional parameter as not given, but keeps required nulls an error", async () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    const seen: unknown[] = [];
    registry.register({
      name: "find",
      toolset: "t",
      schema: {
        description: "find",
        parameters: { type: "object", properties: { q: { type: "string" }, limit: { type: "integer" } }, required: ["q"] },
      },
      handler: (args) => { seen.push(args); return "ok"; },
    });
    expect(await registry.dispatch("find", '{"q":"x","limit":null}')).toBe("ok");
    expect(seen).toEqual([{ q: "x" }]);
    const bad = await registry.invoke({ name: "find", arguments: { q: null, limit: null } });
    expect(bad.error?.kind).toBe("invalid_args");
    expect(bad.error?.issues).toEqual([{ path: "q", message: "must be of type string, got null", keyword: "type" }]);
  });
});

describe("handler-written error JSON", () => {
  it("is kept whole within the result cap, and truncated with its error kept beyond it", async () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger(), maxResultChars: 20_000 });
    const output = "o".repeat(15_000);
    registry.register({ name: "slowcmd", toolset: "t", schema: { description: "s" }, handler: () => JSON.stringify({ output, exit_code: 124, error: "timed out" }) });
    const run = await registry.run("slowcmd");
    expect(run.result.success).toBe(false);
    expect(JSON.parse(run.content)).toEqual({ output, exit_code: 124, error: "timed out" });
    registry.maxResultChars = 1_000;
    const cut = JSON.parse(await registry.dispatch("slowcmd"));
    expect(cut.error).toBe("timed out");
    expect(cut.truncated).toBe(true);
  });
});

describe("allowedTools", () => {
  it("refuses tools outside the session's offered set", async () => {
    const registry = setup();
    registry.register({ name: "other", toolset: "t", schema: { description: "o" }, handler: () => "ran" });
    const result = await registry.invoke({ name: "other" }, undefined, { allowedTools: ["add"] });
    expect(result.error).toEqual({ kind: "unavailable", message: "Tool other is not enabled for this session" });
    expect(await registry.dispatch("add", { a: 1, b: 1 }, { allowedTools: new Set(["add"]) })).toBe('{"sum":2}');
  });
});
