// MCP input schemas normalised for the registry and every export format (spec 1.1 "Schema
// normalisation", 1.5 item 6): real schemas from an SDK server built with zod 4 and pydantic-style
// schemas go through normalisation, registration, export to each format and argument validation.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { describe, expect, it } from "vitest";
import * as z from "zod";

import { EXPORT_FORMATS } from "../src/adapters/index.js";
import { getToolDefinitions } from "../src/definitions/get-tool-definitions.js";
import { ToolDefinitionError } from "../src/registry/errors.js";
import { ToolRegistry } from "../src/registry/tool-registry.js";
import type { JsonSchema } from "../src/registry/types.js";
import { normalizeMcpInputSchema } from "../src/mcp/client/schema.js";
import { createMemoryLogger } from "../src/util/logger.js";

function registryWith(tools: Record<string, JsonSchema>) {
  const logger = createMemoryLogger();
  const registry = new ToolRegistry({ logger });
  for (const [name, parameters] of Object.entries(tools)) {
    registry.register({ name, toolset: "mcp-fx", schema: { description: `MCP tool ${name}`, parameters }, handler: (args) => JSON.stringify(args) });
  }
  return { registry, logger };
}

/** Every format exports every tool, with no tool left out and nothing logged. */
function expectExportsEverywhere(registry: ToolRegistry, logger: ReturnType<typeof createMemoryLogger>, count: number) {
  for (const format of EXPORT_FORMATS) {
    const definitions = getToolDefinitions({ registry, format, quiet: true });
    expect(definitions, format).toHaveLength(count);
    expect(JSON.stringify(definitions)).not.toContain('"nullable":true,"anyOf"');
  }
  expect(logger.messages.filter((m) => m.level !== "debug")).toEqual([]);
}

describe("normalizeMcpInputSchema: spec 1.5 item 6", () => {
  it("an empty or missing schema → {type: object, properties: {}}", () => {
    for (const input of [undefined, null, {}, "x", 3, [], true]) expect(normalizeMcpInputSchema(input)).toEqual({ type: "object", properties: {} });
  });

  it("definitions → $defs with refs rewritten; a property named definitions is preserved", () => {
    const out = normalizeMcpInputSchema({
      type: "object",
      properties: {
        definitions: { type: "array", items: { $ref: "#/definitions/Term" } },
        owner: { $ref: "#/properties/definitions" },
      },
      required: ["definitions"],
      definitions: { Term: { type: "object", properties: { word: { type: "string" } }, required: ["word", "gone"] } },
    });
    expect(out).toEqual({
      type: "object",
      properties: {
        definitions: { type: "array", items: { $ref: "#/$defs/Term" } },
        owner: { $ref: "#/properties/definitions" },
      },
      required: ["definitions"],
      $defs: { Term: { type: "object", properties: { word: { type: "string" } }, required: ["word"] } },
    });
  });

  it("a node with both definitions and $defs keeps both, and its refs", () => {
    const schema = { type: "object", properties: { a: { $ref: "#/definitions/A" }, b: { $ref: "#/$defs/B" } }, definitions: { A: { type: "string" } }, $defs: { B: { type: "number" } } };
    expect(normalizeMcpInputSchema(schema)).toEqual(schema);
  });

  it("dangling required names are pruned, and the key goes when nothing is left", () => {
    expect(normalizeMcpInputSchema({ type: "object", properties: { a: { type: "string" } }, required: ["a", "b", 3, "a"] })).toEqual({
      type: "object",
      properties: { a: { type: "string" } },
      required: ["a"],
    });
    expect(normalizeMcpInputSchema({ type: "object", properties: { a: { type: "string" } }, required: ["zz"] })).toEqual({ type: "object", properties: { a: { type: "string" } } });
    // additionalProperties admits other names: a required one without a properties entry is legitimate.
    expect(normalizeMcpInputSchema({ type: "object", additionalProperties: { type: "string" }, required: ["k"] })).toEqual({
      type: "object",
      additionalProperties: { type: "string" },
      required: ["k"],
      properties: {},
    });
  });

  it("anyOf [string, null] → type [string, null] (not OpenAPI nullable: see the module comment)", () => {
    const out = normalizeMcpInputSchema({
      type: "object",
      properties: {
        limit: { anyOf: [{ type: "integer", minimum: 1 }, { type: "null" }], default: null, title: "Limit", description: "How many" },
        mode: { anyOf: [{ type: "null" }, { type: "string", enum: ["a", "b"] }] },
        either: { anyOf: [{ type: "string" }, { type: "integer" }, { type: "null" }] },
        ref: { anyOf: [{ $ref: "#/$defs/X" }, { type: "null" }] },
      },
      $defs: { X: { type: "string" } },
    });
    expect(out.properties).toEqual({
      limit: { type: ["integer", "null"], minimum: 1, default: null, title: "Limit", description: "How many" },
      mode: { type: ["string", "null"], enum: ["a", "b", null] },
      either: { anyOf: [{ type: "string" }, { type: "integer" }, { type: "null" }] },
      ref: { anyOf: [{ $ref: "#/$defs/X" }, { type: "null" }] },
    });
  });

  it("an OpenAPI nullable from the server becomes a type list, and is dropped where Ajv would refuse it", () => {
    const out = normalizeMcpInputSchema({
      type: "object",
      properties: { a: { type: "string", nullable: true }, b: { nullable: true, anyOf: [{ type: "string" }] }, c: { nullable: true } },
    });
    expect(out.properties).toEqual({ a: { type: ["string", "null"] }, b: { type: ["string", "null"] }, c: {} });
  });

  it("properties or required without a type → type object; objects get properties {}", () => {
    expect(normalizeMcpInputSchema({ properties: { x: { properties: { y: { type: "string" } } }, z: { type: "object" } } })).toEqual({
      type: "object",
      properties: { x: { type: "object", properties: { y: { type: "string" } } }, z: { type: "object", properties: {} } },
    });
  });

  it("a pattern the linear-time engine cannot run is dropped and restated, so the tool still registers", () => {
    const out = normalizeMcpInputSchema({ type: "object", properties: { email: { type: "string", pattern: "^(?!\\.)[^@]+@x\\.com$", description: "Email" }, code: { type: "string", pattern: "^[A-Z]{3}$" } } });
    expect(out.properties).toEqual({
      email: { type: "string", description: 'Email Must match the regular expression "^(?!\\\\.)[^@]+@x\\\\.com$" (not checked before the call: not supported by the linear-time regex engine).' },
      code: { type: "string", pattern: "^[A-Z]{3}$" },
    });
  });

  it("does not change its input", () => {
    const input = { properties: { a: { anyOf: [{ type: "string" }, { type: "null" }] } }, required: ["a", "b"], definitions: { D: {} } };
    const copy = structuredClone(input);
    normalizeMcpInputSchema(input);
    expect(input).toEqual(copy);
  });
});

describe("normalised schemas register, export to every format and validate", () => {
  it("a real SDK server's zod 4 schemas (listed over the MCP protocol)", async () => {
    const server = new McpServer({ name: "fx", version: "1.0.0" });
    const noop = async () => ({ content: [{ type: "text" as const, text: "ok" }] });
    server.registerTool("create_issue", {
      description: "Create an issue",
      inputSchema: {
        title: z.string().min(1),
        body: z.string().optional(),
        labels: z.array(z.string()).max(10).optional(),
        assignee: z.string().email().nullable(),
        priority: z.enum(["low", "high"]).default("low"),
        due: z.string().datetime().optional(),
        meta: z.object({ source: z.string(), weight: z.number().int().nullable() }).partial().optional(),
        tags: z.record(z.string(), z.string()).optional(),
      },
    }, noop);
    server.registerTool("ping", { description: "No arguments" }, noop);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "test", version: "1.0.0" });
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
    const { tools } = await client.listTools();
    await client.close();
    const schemas = Object.fromEntries(tools.map((t) => [`mcp__fx__${t.name}`, normalizeMcpInputSchema(t.inputSchema)]));

    const { registry, logger } = registryWith(schemas);
    expectExportsEverywhere(registry, logger, 2);

    const good = await registry.invoke({ name: "mcp__fx__create_issue", arguments: { title: "t", assignee: null, meta: { weight: null } } });
    expect(good.success, JSON.stringify(good)).toBe(true);
    const good2 = await registry.invoke({ name: "mcp__fx__create_issue", arguments: { title: "t", assignee: "a@b.co", priority: "high" } });
    expect(good2.success, JSON.stringify(good2)).toBe(true);
    const bad = await registry.invoke({ name: "mcp__fx__create_issue", arguments: { title: "", assignee: 3, priority: "urgent" } });
    expect(bad.success).toBe(false);
    expect(bad.error?.kind).toBe("invalid_args");
    expect(bad.error?.issues?.map((i) => i.path).sort()).toEqual(["assignee", "priority", "title"]);
    const missing = await registry.invoke({ name: "mcp__fx__create_issue", arguments: { title: "t" } });
    expect(missing.error?.issues?.map((i) => i.path)).toEqual(["assignee"]);
    expect((await registry.invoke({ name: "mcp__fx__ping", arguments: {} })).success).toBe(true);
  });

  it("pydantic (FastMCP) and draft-07 generator shapes, with refs through renamed definitions", async () => {
    const pydantic = {
      $defs: { Mode: { enum: ["fast", "slow"], title: "Mode", type: "string" } },
      properties: {
        path: { title: "Path", type: "string" },
        limit: { anyOf: [{ type: "integer" }, { type: "null" }], default: null, title: "Limit" },
        mode: { $ref: "#/$defs/Mode", default: "fast" },
        opt_mode: { anyOf: [{ $ref: "#/$defs/Mode" }, { type: "null" }], default: null },
      },
      required: ["path"],
      title: "read_fileArguments",
      type: "object",
    };
    const draft07 = {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { filter: { $ref: "#/definitions/Filter" }, definitions: { type: "string" } },
      required: ["filter", "definitions", "ghost"],
      additionalProperties: false,
      definitions: { Filter: { type: "object", properties: { field: { type: "string" }, op: { type: "string", enum: ["eq", "ne"] } }, required: ["field", "op"], additionalProperties: false } },
    };
    const { registry, logger } = registryWith({ read_file_x: normalizeMcpInputSchema(pydantic), query_x: normalizeMcpInputSchema(draft07) });
    expectExportsEverywhere(registry, logger, 2);
    // The type list reaches Gemini as its own `nullable`, and OpenAI/Anthropic as standard JSON Schema.
    const gemini = getToolDefinitions({ registry, format: "gemini", quiet: true }).find((d) => d.name === "read_file_x")!;
    expect((gemini.parameters!.properties as Record<string, unknown>).limit).toMatchObject({ type: "integer", nullable: true });
    const anthropic = getToolDefinitions({ registry, format: "anthropic", quiet: true }).find((d) => d.name === "read_file_x")!;
    expect((anthropic.input_schema.properties as Record<string, unknown>).limit).toMatchObject({ type: ["integer", "null"] });
    expect((await registry.invoke({ name: "read_file_x", arguments: { path: "/a", limit: null, opt_mode: "slow" } })).success).toBe(true);
    expect((await registry.invoke({ name: "read_file_x", arguments: { path: "/a", mode: "medium" } })).error?.kind).toBe("invalid_args");
    expect((await registry.invoke({ name: "query_x", arguments: { filter: { field: "a", op: "eq" }, definitions: "d" } })).success).toBe(true);
    const bad = await registry.invoke({ name: "query_x", arguments: { filter: { field: "a", op: "like" }, definitions: "d" } });
    expect(bad.error?.issues?.map((i) => i.path)).toEqual(["filter.op"]);
  });

  it("without normalisation the same draft-07 schema's dangling required breaks a call (the test can fail)", async () => {
    const raw = { type: "object", properties: { a: { type: "string" } }, required: ["a", "ghost"] };
    const { registry } = registryWith({ raw_x: raw, normalised_x: normalizeMcpInputSchema(raw) });
    expect((await registry.invoke({ name: "raw_x", arguments: { a: "1" } })).success).toBe(false);
    expect((await registry.invoke({ name: "normalised_x", arguments: { a: "1" } })).success).toBe(true);
  });
});

describe("hostile schemas never throw", () => {
  it("deep nesting: normalised without a stack overflow, then refused by registration with a clear error", () => {
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 100_000; i++) deep = { type: "object", properties: { a: deep } };
    const out = normalizeMcpInputSchema(deep);
    expect(() => registryWith({ deep_x: out })).toThrow(ToolDefinitionError);
  });

  it("huge schemas: 50,000 properties and a 200,000-value enum", () => {
    const properties: Record<string, unknown> = {};
    for (let i = 0; i < 50_000; i++) properties[`p${i}`] = { anyOf: [{ type: "string" }, { type: "null" }] };
    const started = performance.now();
    const out = normalizeMcpInputSchema({ type: "object", properties, required: Object.keys(properties) });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(Object.keys(out.properties as object)).toHaveLength(50_000);
    expect(() => normalizeMcpInputSchema({ type: "object", properties: { e: { enum: Array.from({ length: 200_000 }, (_, i) => i) } } })).not.toThrow();
  });

  it("a hand-built cycle, an exponential DAG, junk values and a __proto__ property", () => {
    const cyclic: Record<string, unknown> = { type: "object", properties: {} };
    (cyclic.properties as Record<string, unknown>).self = cyclic;
    expect(() => normalizeMcpInputSchema(cyclic)).not.toThrow();

    let dag: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 60; i++) dag = { anyOf: [dag, dag] };
    const started = performance.now();
    expect(() => normalizeMcpInputSchema({ type: "object", properties: { d: dag } })).not.toThrow();
    expect(performance.now() - started).toBeLessThan(5_000);

    const junk = normalizeMcpInputSchema({ type: "object", properties: { a: null, b: 3, c: [1] }, required: "a", anyOf: "x", items: [null] });
    expect(junk.required).toBeUndefined();

    const proto = normalizeMcpInputSchema(JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}},"required":["__proto__"]}'));
    expect(Object.keys(proto.properties as object)).toEqual(["__proto__"]);
    expect(proto.required).toEqual(["__proto__"]);
    expect(Object.getPrototypeOf(proto.properties)).toBe(Object.prototype);
  });

  it("a throwing getter (only hand-built input can have one) falls back to the empty schema", () => {
    const evil = { type: "object", get properties() { throw new Error("boom"); } };
    expect(normalizeMcpInputSchema(evil)).toEqual({ type: "object", properties: {} });
  });
});
