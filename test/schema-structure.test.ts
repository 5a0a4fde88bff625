// Schemas Ajv would refuse to compile are refused at registration, naming the place,
// by cheap structural checks (no Ajv load); every case is checked against Ajv itself.
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { z } from "zod";

import { ToolDefinitionError, ToolRegistry, createMemoryLogger } from "../src/index.js";
import { compileJsonSchemaValidator } from "../src/schema/validator.js";

function register(parameters: Record<string, unknown>) {
  const registry = new ToolRegistry({ logger: createMemoryLogger() });
  return registry.register({ name: "t", description: "t", parameters, handler: () => "ok" });
}

function refusal(parameters: Record<string, unknown>): string {
  try {
    register(parameters);
  } catch (thrown) {
    expect(thrown).toBeInstanceOf(ToolDefinitionError);
    return (thrown as Error).message;
  }
  throw new Error("registered");
}

const object = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: "object", properties, ...extra });

const INVALID: [string, Record<string, unknown>, string][] = [
  ["a misspelt type", object({ a: { type: "strng" } }), 'parameters.properties.a.type must be one of the JSON types (string, number, integer, boolean, object, array, null) or a list of them, got "strng"'],
  ["a type list with a bad member", object({ a: { type: ["string", "nul"] } }), 'parameters.properties.a.type must be one of the JSON types'],
  ["a numeric type", object({ a: { type: 3 } }), "parameters.properties.a.type must be one of the JSON types"],
  ["required as a string", object({ a: { type: "string" } }, { required: "a" }), 'parameters.required must be an array of property names'],
  ["required with a number", object({ a: { type: "string" } }, { required: ["a", 1] }), "parameters.required must be an array of property names"],
  ["a property that is a string", object({ a: "string" }), 'parameters.properties.a must be a schema (an object or a boolean), got "string"'],
  ["properties as an array", { type: "object", properties: [{ type: "string" }] }, "parameters.properties must be an object of schemas, got an array"],
  ["items as a string", object({ a: { type: "array", items: "string" } }), 'parameters.properties.a.items must be a schema (an object or a boolean), got "string"'],
  ["additionalProperties as a string", object({}, { additionalProperties: "no" }), "parameters.additionalProperties must be a schema"],
  ["enum as a string", object({ a: { enum: "x" } }), 'parameters.properties.a.enum must be an array of the allowed values, got "x"'],
  ["minimum as a string", object({ a: { type: "number", minimum: "1" } }), 'parameters.properties.a.minimum must be a number, got "1"'],
  ["maxLength negative", object({ a: { type: "string", maxLength: -1 } }), "parameters.properties.a.maxLength must be a non-negative integer, got -1"],
  ["maxItems fractional", object({ a: { type: "array", maxItems: 1.5 } }), "parameters.properties.a.maxItems must be a non-negative integer, got 1.5"],
  ["multipleOf zero", object({ a: { type: "number", multipleOf: 0 } }), "parameters.properties.a.multipleOf must be a number greater than 0, got 0"],
  ["anyOf empty", object({ a: { anyOf: [] } }), "parameters.properties.a.anyOf must be a non-empty array of schemas, got an array"],
  ["anyOf with a string", object({ a: { anyOf: [{ type: "string" }, "null"] } }), 'parameters.properties.a.anyOf[1] must be a schema (an object or a boolean), got "null"'],
  ["a bad type deep in $defs", object({ r: { $ref: "#/$defs/d" } }, { $defs: { d: { type: "object", properties: { x: { items: { type: "str" } } } } } }), "parameters.$defs.d.properties.x.items.type must be one of the JSON types"],
  ["a bad type in a patternProperties schema", object({}, { patternProperties: { "^x": { type: "text" } } }), "parameters.patternProperties.^x.type must be one of the JSON types"],
  ["a non-string pattern", object({ a: { type: "string", pattern: 3 } }), "parameters.properties.a.pattern must be a string, got 3"],
  ["exclusiveMinimum in the draft-04 boolean form", object({ a: { type: "number", minimum: 0, exclusiveMinimum: true } }), "parameters.properties.a.exclusiveMinimum must be a number, got true"],
];

const VALID: [string, Record<string, unknown>][] = [
  ["type lists, boolean schemas and tuples", object({ a: { type: ["string", "null"] }, b: true, c: { type: "array", items: [{ type: "string" }, false] } }, { additionalProperties: false })],
  ["$defs and $ref", object({ a: { $ref: "#/$defs/n" } }, { $defs: { n: { type: "integer", minimum: 0, maximum: 9, multipleOf: 1 } } })],
  ["combinators", object({ a: { anyOf: [{ type: "string", minLength: 1 }, { type: "null" }] }, b: { not: { const: 3 } } }, { required: ["a"] })],
  // Ajv ignores unknown keywords (strict: false): what they hold is nobody's schema.
  ["unknown keywords holding schema-like values", object({ a: { type: "string", "x-ui": { type: "dropdown", required: "yes", properties: 3 } } })],
  ["a property named like a keyword", object({ type: { type: "string" }, required: { type: "boolean" }, enum: { type: "array", items: { type: "string" } } })],
  ["data keywords holding anything", object({ a: { type: "object", default: { type: 3 }, examples: [{ items: "x" }], enum: [{ type: "nope" }] } })],
];

// First in the file: later tests compile with Ajv, which loads it into this process.
describe("registration stays cheap", () => {
  it("checks keywords without loading Ajv", () => {
    const ajvPath = createRequire(import.meta.url).resolve("ajv");
    const loaded = () => Object.keys(createRequire(import.meta.url).cache).includes(ajvPath);
    expect(loaded()).toBe(false);
    expect(refusal(object({ a: { type: "strng" } }))).toContain("must be one of the JSON types");
    for (const [, parameters] of VALID) register(parameters);
    expect(loaded()).toBe(false);
    // The probe sees Ajv once something does load it.
    compileJsonSchemaValidator(object({ a: { type: "string" } }));
    expect(loaded()).toBe(true);
  });
});

describe("invalid JSON Schemas are refused at registration", () => {
  for (const [label, parameters, message] of INVALID) {
    it(label, () => {
      expect(refusal(parameters)).toContain(message);
      // The check is never stricter than Ajv: Ajv refuses the same schema.
      expect(() => compileJsonSchemaValidator(parameters)).toThrow();
    });
  }

  for (const [label, parameters] of VALID) {
    it(`accepts ${label}`, async () => {
      expect(register(parameters)).toBeDefined();
      expect(() => compileJsonSchemaValidator(parameters)).not.toThrow();
    });
  }

  it("the refused schema is not offered: the registry stays without the tool", () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    expect(() => registry.register({ name: "bad", description: "b", parameters: object({ a: { type: "strng" } }), handler: () => "" })).toThrow(ToolDefinitionError);
    expect(registry.has("bad")).toBe(false);
  });

  it("a zod schema still registers", () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    const schema = z.object({ a: z.string().regex(/^a+$/).optional(), b: z.array(z.number().int().min(0)).max(3), c: z.union([z.string(), z.null()]) });
    expect(registry.register({ name: "z", description: "z", parameters: schema, handler: () => "" })).toBeDefined();
  });
});

describe("pattern messages", () => {
  it("an invalid regular expression is called invalid", () => {
    const message = refusal(object({ a: { type: "string", pattern: "([" } }));
    expect(message).toContain('the pattern "([" at parameters.properties.a.pattern is not a valid regular expression: missing closing ]');
    expect(message).not.toContain("linear-time");
  });

  it("an invalid patternProperties key too", () => {
    expect(refusal(object({}, { patternProperties: { "a(": { type: "string" } } }))).toContain("is not a valid regular expression");
  });

  it("a valid pattern the linear engine cannot run keeps the linear-engine wording", () => {
    const message = refusal(object({ a: { type: "string", pattern: "^(a)\\1$" } }));
    expect(message).toContain("cannot run on the linear-time regex engine");
    expect(message).not.toContain("not a valid regular expression");
    expect(refusal(object({ a: { type: "string", pattern: "^(?=a)" } }))).toContain("cannot run on the linear-time regex engine");
  });
});
