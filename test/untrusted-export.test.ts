/**
 * One tool's schema must never take the tool list down, and no schema may
 * lose a property on the way to a provider. The schemas here are what a
 * hostile MCP server or plugin would send (or a schema patcher return).
 */
import { describe, expect, it } from "vitest";
import { EXPORT_FORMATS, ToolRegistry, createMemoryLogger, getToolDefinitions } from "../src/index.js";

const FORMATS = EXPORT_FORMATS;

function makeRegistry() {
  const logger = createMemoryLogger();
  const registry = new ToolRegistry({ logger });
  registry.register({ name: "good", toolset: "t", description: "a good tool", parameters: [{ name: "q", type: "string" }], handler: () => "ok" });
  return { registry, logger };
}

/** What a provider receives: the definitions as JSON text, read back. */
function wire(format: string, registry: ToolRegistry): unknown[] {
  return JSON.parse(JSON.stringify(getToolDefinitions({ registry, format } as never))) as unknown[];
}

describe("a property named __proto__", () => {
  // JSON.parse makes "__proto__" an own property, as any server's JSON would.
  const parameters = JSON.parse(
    '{"type":"object","properties":{"__proto__":{"type":"string","description":"kept"},"x":{"$ref":"#/$defs/__proto__"},' +
      '"y":{"allOf":[{"properties":{"__proto__":{"type":"integer"}}}]},"z":{"$ref":"#/constructor"}},' +
      '"required":["__proto__"],"$defs":{"__proto__":{"type":"object","properties":{"a":{"type":"string"}}}}}',
  );

  it("survives every format, with required naming a property that exists and no dangling $ref", () => {
    const { registry } = makeRegistry();
    registry.register({ name: "proto", toolset: "t", description: "d", parameters, handler: () => "ok" });
    for (const format of FORMATS) {
      const all = wire(format, registry);
      expect(all, format).toHaveLength(2);
      const text = JSON.stringify(all.find((d) => JSON.stringify(d).includes('"proto"')));
      const parsed = JSON.parse(text) as Record<string, unknown>;
      const fn = (parsed.function ?? parsed) as Record<string, unknown>;
      const schema = (fn.parameters ?? fn.input_schema) as { properties: Record<string, unknown>; required?: string[]; $defs?: Record<string, unknown> };
      expect(Object.hasOwn(schema.properties, "__proto__"), `${format}: ${text}`).toBe(true);
      expect(schema.required, format).toContain("__proto__");
      for (const ref of text.match(/"\$ref":"[^"]*"/g) ?? []) {
        if (ref.includes("constructor")) continue; // anthropic/raw/openai pass the schema through untouched
        expect(Object.hasOwn(schema.$defs ?? {}, "__proto__"), `${format}: ${ref} dangles in ${text}`).toBe(true);
      }
      if (format === "gemini") {
        // Gemini has no $ref: the target is inlined, and the allOf member's __proto__ merged in.
        expect(schema.properties.x).toMatchObject({ type: "object", properties: { a: { type: "string" } } });
        expect(schema.properties.y).toMatchObject({ properties: { __proto__: { type: "integer" } } });
        // `#/constructor` must not resolve to Object.prototype's constructor.
        expect(JSON.stringify(schema.properties.z)).toContain("not part of this schema");
      }
    }
  });
});

describe("one bad tool is left out with a logged reason, never the whole list", () => {
  function cyclic(): Record<string, unknown> {
    const node: Record<string, unknown> = { type: "object", properties: {} };
    (node.properties as Record<string, unknown>).self = node;
    return { type: "object", properties: { root: node } };
  }
  function deep(levels: number): Record<string, unknown> {
    let node: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < levels; i++) node = { type: "object", properties: { a: node } };
    return { type: "object", properties: { a: node } };
  }
  const throwingToJson = { type: "object", properties: {}, toJSON: () => { throw new Error("no JSON for you"); } };

  for (const [label, parameters, reason] of [
    ["cyclic", cyclic(), "cyclic"],
    ["3,000 levels deep", deep(3_000), "nests more than"],
    ["unserialisable", throwingToJson, "no JSON for you"],
  ] as const) {
    it(`a patched schema that is ${label}`, () => {
      const { registry, logger } = makeRegistry();
      registry.register({
        name: "bad",
        toolset: "t",
        description: "patches its schema",
        parameters: [{ name: "q", type: "string" }],
        patchSchema: (schema) => ({ ...schema, parameters: parameters as never }),
        handler: () => "ok",
      });
      for (const format of FORMATS) {
        const names = wire(format, registry).map((d) => JSON.stringify(d).match(/"name":"(\w+)"/)?.[1]);
        expect(names, format).toEqual(["good"]);
      }
      const logged = logger.messages.map((e) => e.message).join("\n");
      expect(logged).toContain("bad");
      expect(logged).toContain(reason);
      // `quiet` silences unknown-toolset warnings only: a tool left out is always logged.
      const before = logger.messages.length;
      expect(getToolDefinitions({ registry, format: "gemini", quiet: true })).toHaveLength(1);
      expect(logger.messages.slice(before).map((e) => e.message).join("\n")).toContain(reason);
    });
  }
});
