/**
 * Tool schemas come from MCP servers and plugins: these tests register the
 * schemas an attacker would send and check that registration refuses them with
 * a clear error, or that validation stays linear. Each attack hung or killed
 * the process before the fix (a hanging one now fails on the test time limit).
 */
import { describe, expect, it } from "vitest";
import { SCHEMA_LIMITS, ToolDefinitionError, ToolRegistry, createMemoryLogger } from "../src/index.js";
import { patternCost } from "../src/schema/pattern-cost.js";

function makeRegistry() {
  return new ToolRegistry({ logger: createMemoryLogger() });
}

function registerWith(parameters: unknown, registry = makeRegistry()) {
  return registry.register({
    name: "victim",
    toolset: "mcp",
    description: "a tool whose schema came from a server",
    parameters: parameters as never,
    handler: () => "ran",
  });
}

function refusal(parameters: unknown): ToolDefinitionError {
  try {
    registerWith(parameters);
  } catch (thrown) {
    expect(thrown).toBeInstanceOf(ToolDefinitionError);
    return thrown as ToolDefinitionError;
  }
  throw new Error("the schema was accepted");
}

describe("schema patterns run on a linear-time engine", () => {
  it("answers a catastrophic-backtracking pattern on a 33-character string at once (96 s on the built-in engine)", async () => {
    const registry = makeRegistry();
    registerWith({ type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } }, required: ["s"] }, registry);
    const started = process.hrtime.bigint();
    const outcome = await registry.run("victim", { s: `${"a".repeat(32)}!` });
    const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
    expect(outcome.result.success).toBe(false);
    expect(outcome.result.error?.kind).toBe("invalid_args");
    expect(outcome.result.error?.message).toContain('must match pattern "^(a+)+$"');
    // Not a speed measurement: the backtracking engine takes minutes here, anything linear takes milliseconds.
    expect(elapsedMs).toBeLessThan(5_000);
    expect((await registry.run("victim", { s: "a".repeat(33) })).result.success).toBe(true);
  });

  it("runs the same attack through patternProperties", async () => {
    const registry = makeRegistry();
    registerWith({ type: "object", patternProperties: { "^(x+x+)+y$": { type: "number" } } }, registry);
    const outcome = await registry.run("victim", { [`${"x".repeat(40)}`]: "not checked", [`${"x".repeat(5)}y`]: "wrong" });
    expect(outcome.result.error?.kind).toBe("invalid_args");
    expect(outcome.result.error?.message).toContain("xxxxxy: must be of type number");
  });

  it("keeps ordinary patterns' meaning: anchors, classes, Unicode escapes and properties, search anywhere", async () => {
    const registry = makeRegistry();
    registerWith(
      {
        type: "object",
        properties: {
          day: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}$" },
          word: { type: "string", pattern: "^\\p{L}+$" },
          accent: { type: "string", pattern: "^caf\\u00e9$" },
          emoji: { type: "string", pattern: "^\\u{1F600}$" },
          named: { type: "string", pattern: "^(?<major>\\d+)\\.\\d+$" },
          slash: { type: "string", pattern: "^a/b$" },
          inside: { type: "string", pattern: "needle" },
        },
      },
      registry,
    );
    const good = { day: "2026-12-03", word: "héllo", accent: "café", emoji: "😀", named: "1.2", slash: "a/b", inside: "hay needle hay" };
    expect((await registry.run("victim", good)).result.success).toBe(true);
    const bad = { day: "2026-1-03", word: "he11o", accent: "cafe", emoji: "😁", named: "x.2", slash: "ab", inside: "hay" };
    const outcome = await registry.run("victim", bad);
    expect(outcome.result.error?.issues?.map((issue) => issue.path).sort()).toEqual(Object.keys(bad).sort());
  });

  it("refuses at registration a pattern the linear engine cannot run (backreference, lookahead, lookbehind)", () => {
    for (const pattern of ["^(a)\\1$", "^(?=a)a$", "(?<!x)y", "(?!a)b"]) {
      const error = refusal({ type: "object", properties: { s: { type: "string", pattern } } });
      expect(error.message).toContain("cannot run on the linear-time regex engine");
      expect(error.message).toContain("parameters.properties.s.pattern");
    }
  });

  it("refuses a pattern that would take long to compile, and many patterns together", () => {
    // 800 characters that take the engine half a second to compile.
    const slow = "\\w{1000}".repeat(100);
    expect(refusal({ type: "object", properties: { s: { type: "string", pattern: slow } } }).message).toContain("repeats too much");
    const properties: Record<string, unknown> = {};
    for (let i = 0; i < 10; i++) properties[`p${i}`] = { type: "string", pattern: `^[a-z]{999}[0-9]{999}[a-z]{999}${i}$` };
    expect(refusal({ type: "object", properties }).message).toContain("patterns together are too large");
    expect(refusal({ type: "object", properties: { s: { type: "string", pattern: "a".repeat(SCHEMA_LIMITS.maxPatternLength + 1) } } }).message).toContain(
      "characters long",
    );
  });

  it("estimates compile cost from counted repetitions, nested ones multiplied", () => {
    expect(patternCost("^[a-z0-9_-]{1,64}$")).toBe(64 + 10);
    expect(patternCost("((ab){30}){30}")).toBe(2 * 30 * 30 + 10);
    expect(patternCost("\\p{L}{3}\\u{1F600}")).toBe(3 + 1 + 10);
    expect(patternCost("[{]{5}x{2,}")).toBe(5 + 3 + 10);
  });

  it("does not mistake data or property names for patterns", () => {
    const entry = registerWith({
      type: "object",
      properties: {
        pattern: { type: "string", default: "(a)\\1", examples: [{ pattern: "(?=x)" }] },
        enum: { type: "string", enum: ["a"] },
      },
    });
    expect(entry?.name).toBe("victim");
  });
});

describe("schema size limits at registration", () => {
  it("refuses an enum of 200,000 values (164 s for Ajv to compile) and accepts one at the limit", () => {
    const huge = Array.from({ length: 200_000 }, (_, i) => `v${i}`);
    const error = refusal({ type: "object", properties: { a: { enum: huge } } });
    expect(error.message).toContain("the enum at parameters.properties.a.enum has 200000 values; the limit is 1000");
    const fits = Array.from({ length: SCHEMA_LIMITS.maxEnumValues }, (_, i) => `v${i}`);
    expect(registerWith({ type: "object", properties: { a: { enum: fits } } })?.name).toBe("victim");
  });

  it("refuses anyOf nested 20 deep over shared branches (heap exhaustion) before walking the whole tree", () => {
    let shared: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 20; i++) shared = { anyOf: [shared, shared] };
    const started = Date.now();
    const error = refusal({ type: "object", properties: { a: shared } });
    expect(error.message).toContain(`more than ${SCHEMA_LIMITS.maxValues} JSON values`);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("refuses a cyclic schema with where the cycle is", () => {
    const node: Record<string, unknown> = { type: "object", properties: {} };
    (node.properties as Record<string, unknown>).child = node;
    expect(refusal({ type: "object", properties: { root: node } }).message).toContain(
      "its schema is cyclic at parameters.properties.root.properties.child",
    );
  });

  it("refuses a schema 3,000 levels deep", () => {
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 3_000; i++) deep = { type: "array", items: deep };
    expect(refusal({ type: "object", properties: { a: deep } }).message).toContain(`nests more than ${SCHEMA_LIMITS.maxDepth} levels deep`);
  });

  it("refuses a schema of more than a million characters", () => {
    const properties = { a: { type: "string", description: "x".repeat(SCHEMA_LIMITS.maxChars) } };
    expect(refusal({ type: "object", properties }).message).toContain("larger than 1000000 characters");
  });

  it("accepts a large but real-sized schema: 500 object properties, 30 schema levels", () => {
    const properties: Record<string, unknown> = {};
    for (let i = 0; i < 500; i++) {
      properties[`field_${i}`] = { type: "object", description: `field ${i}`, properties: { a: { type: "string" }, b: { type: "array", items: { type: "integer" } } }, required: ["a"] };
    }
    let nested: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 30; i++) nested = { type: "object", properties: { inner: nested } };
    properties.nested = nested;
    expect(registerWith({ type: "object", properties })?.name).toBe("victim");
  });
});
