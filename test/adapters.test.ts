import { describe, it, expect } from "vitest";
import { Ajv } from "ajv";
import {
  EXPORT_FORMATS,
  exportTools,
  isExportFormat,
  toAnthropic,
  toGemini,
  toOpenAI,
  toOpenAIStrict,
  toRaw,
  toResponses,
  type ExportableTool,
  type ExportFormat,
} from "../src/adapters/index.js";
import { resolveLocalRef } from "../src/adapters/refs.js";
import type { FunctionSchema, JsonSchema } from "../src/registry/types.js";

type Node = Record<string, any>;

function fn(parameters: JsonSchema, name = "tool", description = "Does a thing."): FunctionSchema {
  return { name, description, parameters };
}

/** Deep-freezes a value so any write by an adapter throws in strict-mode ESM. */
function freeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const v of Object.values(value)) freeze(v);
    Object.freeze(value);
  }
  return value;
}

/** Every key used anywhere in a JSON value, for "this keyword never appears" checks. */
function allKeys(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) value.forEach((v) => allKeys(v, into));
  else if (typeof value === "object" && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      into.add(k);
      allKeys(v, into);
    }
  }
  return into;
}

/** Every schema node of a converted schema that describes an object. */
function objectNodes(value: unknown, into: Node[] = []): Node[] {
  if (Array.isArray(value)) value.forEach((v) => objectNodes(v, into));
  else if (typeof value === "object" && value !== null) {
    const node = value as Node;
    const type = node.type;
    if (type === "object" || (Array.isArray(type) && type.includes("object"))) into.push(node);
    for (const [k, v] of Object.entries(node)) {
      // Property maps are not schemas themselves; their values are.
      if (k === "properties" || k === "$defs" || k === "definitions") Object.values(v as Node).forEach((s) => objectNodes(s, into));
      else objectNodes(v, into);
    }
  }
  return into;
}

const addressSchema: JsonSchema = {
  type: "object",
  description: "Where to send it.",
  properties: {
    street: { type: "string" },
    geo: { $ref: "#/$defs/Geo" },
  },
  required: ["street"],
};

const shippingParams: JsonSchema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  additionalProperties: false,
  properties: {
    name: { type: "string", minLength: 1, maxLength: 10, pattern: "^a+$" },
    nickname: { type: ["string", "null"], description: "Optional nickname." },
    count: { type: "integer", exclusiveMinimum: 0, multipleOf: 5, default: 10 },
    mode: { const: "fast" },
    level: { type: "integer", enum: [1, 2, 3] },
    site: { type: "string", format: "uri" },
    when: { type: "string", format: "date-time" },
    tags: { type: "array", items: { type: "string" }, uniqueItems: true, maxItems: 3 },
    address: { $ref: "#/$defs/Address" },
    legacy: { $ref: "#/definitions/Legacy" },
    choice: { oneOf: [{ type: "string" }, { type: "integer" }] },
    maybe: { anyOf: [{ type: "number" }, { type: "null" }] },
    meta: { type: "object", additionalProperties: { type: "string" } },
    loose: { type: "array" },
  },
  required: ["name", "count"],
  $defs: {
    Address: addressSchema,
    Geo: { type: "object", properties: { lat: { type: "number" }, lng: { type: "number" } }, required: ["lat", "lng"] },
  },
  definitions: {
    Legacy: { type: "string", description: "Old style." },
  },
};

const treeParams: JsonSchema = {
  type: "object",
  properties: { root: { $ref: "#/$defs/Node" } },
  required: ["root"],
  $defs: {
    Node: {
      type: "object",
      description: "A tree node.",
      properties: {
        value: { type: "string" },
        children: { type: "array", items: { $ref: "#/$defs/Node" } },
      },
      required: ["value"],
    },
  },
};

describe("openai (chat completions)", () => {
  it("wraps the schema in the function envelope", () => {
    const out = toOpenAI(fn({ type: "object", properties: { q: { type: "string" } }, required: ["q"] }));
    expect(out).toEqual({
      type: "function",
      function: {
        name: "tool",
        description: "Does a thing.",
        parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
      },
    });
  });

  it("turns missing or empty parameters into an empty object schema", () => {
    expect(toOpenAI(fn({})).function.parameters).toEqual({ type: "object", properties: {} });
    expect(toOpenAI({ name: "t", description: "d" } as FunctionSchema).function.parameters).toEqual({
      type: "object",
      properties: {},
    });
    expect(toOpenAI(fn({ properties: { a: { type: "string" } } })).function.parameters).toEqual({
      type: "object",
      properties: { a: { type: "string" } },
    });
  });

  it("returns a copy detached from the registry's schema", () => {
    const schema = fn({ type: "object", properties: { q: { type: "string" } } });
    const out = toOpenAI(schema);
    (out.function.parameters.properties as Node).q.type = "number";
    expect((schema.parameters.properties as Node).q.type).toBe("string");
  });
});

describe("responses", () => {
  it("flattens the function fields and opts out of strict normalisation", () => {
    const out = toResponses(fn({ type: "object", properties: { q: { type: "string" } } }));
    expect(out).toEqual({
      type: "function",
      name: "tool",
      description: "Does a thing.",
      parameters: { type: "object", properties: { q: { type: "string" } } },
      strict: false,
    });
  });
});

describe("anthropic", () => {
  it("uses input_schema and keeps JSON Schema features Claude accepts", () => {
    const out = toAnthropic(fn(shippingParams));
    expect(Object.keys(out)).toEqual(["name", "description", "input_schema"]);
    expect(out.input_schema.type).toBe("object");
    expect(out.input_schema.$defs).toEqual(shippingParams.$defs);
    expect(out.input_schema.properties).toEqual(shippingParams.properties);
  });

  it("defaults an empty schema to an object with no properties", () => {
    expect(toAnthropic(fn({})).input_schema).toEqual({ type: "object", properties: {} });
  });
});

describe("raw", () => {
  it("carries the registry labels and the schema as registered", () => {
    const tool: ExportableTool = { schema: fn(treeParams, "walk"), category: "files", toolset: "fs" };
    const out = toRaw(tool);
    expect(out).toEqual({
      name: "walk",
      description: "Does a thing.",
      category: "files",
      toolset: "fs",
      parameters: treeParams,
    });
    expect(JSON.parse(JSON.stringify(out))).toEqual(out);
    expect(out.parameters).not.toBe(treeParams);
  });

  it("drops values JSON cannot carry", () => {
    const out = toRaw({
      schema: fn({ type: "object", properties: { a: { type: "string", description: undefined } } }),
      category: "c",
      toolset: "t",
    });
    expect(out.parameters).toEqual({ type: "object", properties: { a: { type: "string" } } });
  });
});

describe("gemini", () => {
  const decl = toGemini(fn(freeze(structuredClone(shippingParams))));
  const params = decl.parameters as Node;
  const props = params.properties as Node;

  it("produces a function declaration", () => {
    expect(decl.name).toBe("tool");
    expect(decl.description).toBe("Does a thing.");
    expect(params.type).toBe("object");
    expect(params.required).toEqual(["name", "count"]);
  });

  it("inlines $defs and definitions refs, including refs nested inside a definition", () => {
    expect(props.address).toEqual({
      type: "object",
      description: "Where to send it.",
      properties: {
        street: { type: "string" },
        geo: {
          type: "object",
          properties: { lat: { type: "number" }, lng: { type: "number" } },
          required: ["lat", "lng"],
        },
      },
      required: ["street"],
    });
    expect(props.legacy).toEqual({ type: "string", description: "Old style." });
  });

  it("leaves no keyword Gemini rejects anywhere in the output", () => {
    const keys = allKeys(params);
    for (const banned of [
      "$ref",
      "$defs",
      "definitions",
      "$schema",
      "additionalProperties",
      "const",
      "oneOf",
      "exclusiveMinimum",
      "multipleOf",
      "uniqueItems",
      "default",
    ]) {
      expect(keys.has(banned), banned).toBe(false);
    }
    for (const node of objectNodes(params)) expect(typeof node.type).toBe("string");
  });

  it("converts type arrays and null alternatives into nullable", () => {
    expect(props.nickname).toEqual({ type: "string", nullable: true, description: "Optional nickname." });
    expect(props.maybe).toEqual({ type: "number", nullable: true });
  });

  it("turns oneOf into anyOf and const strings into single-value enums", () => {
    expect(props.choice).toEqual({ anyOf: [{ type: "string" }, { type: "integer" }] });
    expect(props.mode).toEqual({ type: "string", enum: ["fast"] });
  });

  it("keeps the constraints Gemini supports as keywords", () => {
    expect(props.name).toEqual({ type: "string", minLength: 1, maxLength: 10, pattern: "^a+$" });
    expect(props.when).toEqual({ type: "string", format: "date-time" });
  });

  it("restates dropped constraints in the description of their node", () => {
    expect(props.count.type).toBe("integer");
    expect(props.count.description).toBe("(greater than 0; a multiple of 5; default: 10)");
    expect(props.level).toEqual({ type: "integer", description: "(one of: 1, 2, 3)" });
    expect(props.site).toEqual({ type: "string", description: "(format: uri)" });
    expect(props.tags).toEqual({
      type: "array",
      items: { type: "string" },
      maxItems: 3,
      description: "(no duplicate items)",
    });
    expect(props.meta).toEqual({ type: "object", description: '(other properties: {"type":"string"})' });
  });

  it("gives arrays without items an item schema, which Gemini requires", () => {
    expect(props.loose).toEqual({ type: "array", items: { type: "string" } });
  });

  it("cuts recursive refs after a small depth, with a note saying so", () => {
    const out = toGemini(fn(treeParams)).parameters as Node;
    const level1 = out.properties.root;
    expect(level1.description).toBe("A tree node.");
    const level2 = level1.properties.children.items;
    expect(level2.type).toBe("object");
    expect(level2.properties.value).toEqual({ type: "string" });
    const level3 = level2.properties.children.items;
    expect(level3.type).toBe("object");
    expect(level3.properties).toBeUndefined();
    expect(level3.description).toMatch(/^A tree node\. \(a nested Node; the structure repeats recursively/);
    expect(allKeys(out).has("$ref")).toBe(false);
  });

  it("handles a self-reference to the root", () => {
    const out = toGemini(
      fn({ type: "object", properties: { name: { type: "string" }, next: { $ref: "#" } } }),
    ).parameters as Node;
    expect(out.properties.next.properties.name).toEqual({ type: "string" });
    expect(out.properties.next.properties.next.properties.next).toMatchObject({ type: "object" });
    expect(allKeys(out).has("$ref")).toBe(false);
  });

  it("merges a simple allOf into one object", () => {
    const out = toGemini(
      fn({
        type: "object",
        properties: {
          pet: {
            allOf: [
              { $ref: "#/$defs/Base" },
              { type: "object", properties: { lives: { type: "integer" } }, required: ["lives"] },
            ],
          },
        },
        $defs: { Base: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } },
      }),
    ).parameters as Node;
    expect(out.properties.pet).toEqual({
      type: "object",
      properties: { name: { type: "string" }, lives: { type: "integer" } },
      required: ["name", "lives"],
    });
  });

  it("describes what an allOf cannot merge", () => {
    const out = toGemini(
      fn({ type: "object", properties: { x: { allOf: [{ type: "string" }, { type: "integer" }] } } }),
    ).parameters as Node;
    expect(out.properties.x).toEqual({ type: "string", description: '(must also match {"type":"integer"})' });
  });

  it("splits multi-type unions into anyOf branches", () => {
    const out = toGemini(
      fn({ type: "object", properties: { v: { type: ["string", "integer", "null"], minimum: 1, maxLength: 4 } } }),
    ).parameters as Node;
    expect(out.properties.v).toEqual({
      anyOf: [
        { type: "string", maxLength: 4 },
        { type: "integer", minimum: 1 },
      ],
      nullable: true,
    });
  });

  it("says so when a ref points outside the schema, and keeps draft-04 exclusive bounds", () => {
    const out = toGemini(
      fn({
        type: "object",
        properties: {
          remote: { $ref: "https://example.com/thing.json", description: "A thing." },
          n: { type: "number", minimum: 2, exclusiveMinimum: true },
        },
      }),
    ).parameters as Node;
    expect(out.properties.remote).toEqual({
      type: "string",
      description: "A thing. (refers to https://example.com/thing.json, which is not part of this schema)",
    });
    expect(out.properties.n).toEqual({ type: "number", minimum: 2, description: "(greater than 2)" });
  });

  it("omits parameters for a tool that takes none", () => {
    expect(toGemini(fn({}))).toEqual({ name: "tool", description: "Does a thing." });
    expect("parameters" in toGemini(fn({ type: "object", properties: {} }))).toBe(false);
  });

  it("never mutates its input", () => {
    const input = structuredClone(shippingParams);
    toGemini(fn(input));
    toGemini(fn(structuredClone(treeParams)));
    expect(input).toEqual(shippingParams);
  });
});

describe("strict", () => {
  const def = toOpenAIStrict(fn(freeze(structuredClone(shippingParams))));
  const params = def.function.parameters as Node;
  const props = params.properties as Node;

  it("produces a strict function definition", () => {
    expect(def.type).toBe("function");
    expect(def.function.strict).toBe(true);
    expect(def.function.name).toBe("tool");
  });

  it("makes every object closed and every property required, recursively", () => {
    const objects = objectNodes(params);
    // top level, the free-form map, both $defs, and the inlined ones
    expect(objects.length).toBeGreaterThanOrEqual(4);
    for (const node of objects) {
      expect(node.additionalProperties).toBe(false);
      expect(node.required).toEqual(Object.keys(node.properties));
    }
    expect(params.required).toEqual(Object.keys(shippingParams.properties as Node));
  });

  it("keeps required properties as they were and makes optional ones nullable", () => {
    expect(props.name.type).toBe("string");
    expect(props.count.type).toBe("integer");
    expect(props.nickname.type).toEqual(["string", "null"]);
    expect(props.site.type).toEqual(["string", "null"]);
    expect(props.level).toMatchObject({ type: ["integer", "null"], enum: [1, 2, 3, null] });
    expect(props.mode).toEqual({ type: ["string", "null"], enum: ["fast", null] });
    expect(props.choice).toEqual({ anyOf: [{ type: "string" }, { type: "integer" }, { type: "null" }] });
    expect(props.maybe).toEqual({ anyOf: [{ type: "number" }, { type: "null" }] });
    expect(props.address).toEqual({ anyOf: [{ $ref: "#/$defs/Address" }, { type: "null" }] });
  });

  it("applies the rules inside $defs, nested objects and array items", () => {
    const address = params.$defs.Address;
    expect(address.required).toEqual(["street", "geo"]);
    expect(address.additionalProperties).toBe(false);
    expect(address.properties.geo).toEqual({ anyOf: [{ $ref: "#/$defs/Geo" }, { type: "null" }] });
    expect(params.$defs.Geo.required).toEqual(["lat", "lng"]);

    const out = toOpenAIStrict(
      fn({
        type: "object",
        properties: {
          items: {
            type: "array",
            items: {
              type: "object",
              properties: { id: { type: "string" }, note: { type: "string" }, inner: { type: "object", properties: { z: { type: "boolean" } } } },
              required: ["id"],
            },
          },
        },
        required: ["items"],
      }),
    ).function.parameters as Node;
    const item = out.properties.items.items;
    expect(item.additionalProperties).toBe(false);
    expect(item.required).toEqual(["id", "note", "inner"]);
    expect(item.properties.id.type).toBe("string");
    expect(item.properties.note.type).toEqual(["string", "null"]);
    expect(item.properties.inner).toMatchObject({
      type: ["object", "null"],
      required: ["z"],
      additionalProperties: false,
      properties: { z: { type: ["boolean", "null"] } },
    });
  });

  it("drops unsupported keywords and keeps their meaning in the description", () => {
    expect(props.name).toEqual({ type: "string", pattern: "^a+$", description: "(at least 1 character; at most 10 characters)" });
    expect(props.count).toEqual({
      type: "integer",
      exclusiveMinimum: 0,
      multipleOf: 5,
      description: "(default: 10)",
    });
    expect(props.site.description).toBe("(format: uri)");
    expect(props.site.format).toBeUndefined();
    expect(props.when.format).toBe("date-time");
    expect(props.tags).toMatchObject({ maxItems: 3, description: "(no duplicate items)" });
    expect(props.tags.uniqueItems).toBeUndefined();
    expect(props.meta).toEqual({
      type: ["object", "null"],
      properties: {},
      required: [],
      additionalProperties: false,
      description: "(no properties beyond those listed can be given here)",
    });
    const keys = allKeys(params);
    for (const banned of ["$schema", "minLength", "maxLength", "default", "oneOf", "uniqueItems"]) {
      expect(keys.has(banned), banned).toBe(false);
    }
  });

  it("inlines a $ref that has sibling keywords, but keeps recursive refs as refs", () => {
    const out = toOpenAIStrict(
      fn({
        type: "object",
        properties: {
          home: { $ref: "#/$defs/Place", description: "Home." },
          tree: { $ref: "#/$defs/Node" },
        },
        required: ["home", "tree"],
        $defs: {
          Place: { type: "object", properties: { city: { type: "string" } } },
          Node: {
            type: "object",
            properties: { kids: { type: "array", items: { $ref: "#/$defs/Node", description: "A child." } } },
          },
        },
      }),
    ).function.parameters as Node;
    expect(out.properties.home).toEqual({
      type: "object",
      description: "Home.",
      properties: { city: { type: ["string", "null"] } },
      required: ["city"],
      additionalProperties: false,
    });
    expect(out.properties.tree).toEqual({ $ref: "#/$defs/Node" });
    // The recursive child ref is inlined once (it had a description), then stays a plain ref.
    const kids = out.$defs.Node.properties.kids;
    expect(kids.type).toEqual(["array", "null"]);
    expect(kids.items.description).toBe("A child.");
    expect(kids.items.additionalProperties).toBe(false);
    expect(kids.items.properties.kids.items).toEqual({ $ref: "#/$defs/Node" });
  });

  it("merges allOf and converts draft-04 exclusive bounds", () => {
    const out = toOpenAIStrict(
      fn({
        type: "object",
        properties: {
          pet: { allOf: [{ properties: { a: { type: "string" } }, required: ["a"] }, { properties: { b: { type: "number", minimum: 2, exclusiveMinimum: true } } }] },
        },
        required: ["pet"],
      }),
    ).function.parameters as Node;
    expect(out.properties.pet).toEqual({
      type: "object",
      properties: { a: { type: "string" }, b: { type: ["number", "null"], exclusiveMinimum: 2 } },
      required: ["a", "b"],
      additionalProperties: false,
    });
  });

  it("accepts null for a formerly optional argument and still rejects unknown keys", () => {
    const ajv = new Ajv({ strict: false });
    const validate = ajv.compile(toOpenAIStrict(fn(treeParams)).function.parameters);
    expect(validate({ root: { value: "a", children: [{ value: "b", children: null }] } })).toBe(true);
    expect(validate({ root: { value: "a", children: null, extra: 1 } })).toBe(false);
    expect(validate({ root: { value: "a" } })).toBe(false);
  });

  it("never mutates its input", () => {
    const input = structuredClone(shippingParams);
    toOpenAIStrict(fn(input));
    expect(input).toEqual(shippingParams);
  });
});

describe("self-referencing and hostile schemas", () => {
  // Tool schemas come from third parties (MCP servers, plugins): every converter
  // must finish on any JSON, with the recursion cut and a note saying so.

  /** Every value nested anywhere in a JSON value, without recursion (the inputs here are too deep for it). */
  function* walkJson(value: unknown): Generator<[unknown, number]> {
    const pending: [unknown, number][] = [[value, 0]];
    while (pending.length > 0) {
      const [v, depth] = pending.pop() as [unknown, number];
      yield [v, depth];
      if (typeof v === "object" && v !== null) for (const child of Object.values(v)) pending.push([child, depth + 1]);
    }
  }

  function refsIn(value: unknown): string[] {
    const refs: string[] = [];
    for (const [v] of walkJson(value)) if (typeof v === "object" && v !== null && typeof (v as Node).$ref === "string") refs.push((v as Node).$ref);
    return refs;
  }

  function nesting(value: unknown): number {
    let max = 0;
    for (const [, depth] of walkJson(value)) max = Math.max(max, depth);
    return max;
  }

  function descriptions(value: unknown): string[] {
    const out: string[] = [];
    for (const [v] of walkJson(value)) if (typeof v === "object" && v !== null && typeof (v as Node).description === "string") out.push((v as Node).description);
    return out;
  }

  /** `levels` schemas, each the only property of the one above (built in a loop: too deep for a literal). */
  function nested(levels: number, wrap: (inner: JsonSchema) => JsonSchema): JsonSchema {
    let schema: JsonSchema = { type: "string", description: "The bottom." };
    for (let i = 0; i < levels; i++) schema = wrap(schema);
    return schema;
  }

  // Frozen copies, to catch writes to the input; the deep inputs are too deep for `structuredClone` and `freeze`.
  const strictParams = (schema: JsonSchema, copy = true): Node =>
    toOpenAIStrict(fn(copy ? freeze(structuredClone(schema)) : schema)).function.parameters as Node;
  const geminiParams = (schema: JsonSchema, copy = true): Node => toGemini(fn(copy ? freeze(structuredClone(schema)) : schema)).parameters as Node;

  const backToRoot: JsonSchema = {
    type: "object",
    properties: { x: { $ref: "#/$defs/A" } },
    $defs: { A: { type: "object", properties: { back: { $ref: "#", description: "d" } } } },
  };

  const shapes: Record<string, JsonSchema> = {
    "a definition referring back to the root, with siblings": backToRoot,
    "a root property referring to the root, with siblings": {
      type: "object",
      properties: { name: { type: "string" }, again: { $ref: "#", description: "The same again." } },
      required: ["name", "again"],
      $defs: { Up: { type: "object", properties: { top: { $ref: "#", title: "Top" } } } },
    },
    "mutual recursion A -> B -> A, with siblings": {
      type: "object",
      properties: { start: { $ref: "#/$defs/A", description: "Start here." } },
      required: ["start"],
      $defs: {
        A: { type: "object", properties: { b: { $ref: "#/$defs/B", description: "To B." } } },
        B: { type: "object", properties: { a: { $ref: "#/$defs/A", description: "To A." } } },
      },
    },
    "a definition referring to itself, with siblings": {
      type: "object",
      properties: { head: { $ref: "#/definitions/Link" } },
      required: ["head"],
      definitions: {
        Link: { type: "object", properties: { value: { type: "integer" }, next: { $ref: "#/definitions/Link", description: "The rest." } } },
      },
    },
    "refs to targets that do not exist": {
      type: "object",
      properties: {
        gone: { $ref: "#/$defs/Nope", description: "Gone." },
        bare: { $ref: "#/$defs/Nope" },
        remote: { $ref: "https://example.com/thing.json" },
        notSchema: { $ref: "#/required/0" },
        malformed: { $ref: "#/$defs/%zz" },
      },
      required: ["gone", "bare", "remote", "notSchema", "malformed"],
    },
    "refs that lead only to each other": {
      type: "object",
      properties: { x: { $ref: "#/$defs/A" }, y: { $ref: "#/properties/y", description: "Me." } },
      required: ["x", "y"],
      $defs: { A: { $ref: "#/$defs/B" }, B: { $ref: "#/$defs/A", description: "B." } },
    },
    "refs into places an export rewrites (allOf, oneOf, not, tuples)": {
      type: "object",
      properties: {
        a: { $ref: "#/allOf/0" },
        b: { $ref: "#/properties/c/oneOf/0" },
        c: { oneOf: [{ type: "object", properties: { deeper: { $ref: "#/properties/c/oneOf/0" } } }, { type: "string" }] },
        d: { $ref: "#/properties/e/not" },
        e: { type: "string", not: { const: "no" } },
        f: { $ref: "#/$defs/Via" },
        g: { $ref: "#/properties/h/prefixItems/1" },
        h: { type: "array", prefixItems: [{ type: "string" }, { type: "integer", minimum: 3 }] },
      },
      required: ["a", "b", "c", "d", "e", "f", "g", "h"],
      allOf: [{ properties: { z: { type: "integer" } } }],
      $defs: { Via: { $ref: "#/$defs/Gone", description: "Via." } },
    },
    "a ref inside allOf back to the root": {
      type: "object",
      properties: { deeper: { allOf: [{ $ref: "#" }, { properties: { more: { type: "string" } } }] } },
      $defs: { D: { allOf: [{ $ref: "#" }], description: "d" } },
    },
  };

  for (const [name, schema] of Object.entries(shapes)) {
    it(`strict: ${name} converts, with every kept ref resolving and every object closed`, () => {
      const params = strictParams(schema);
      expect(JSON.parse(JSON.stringify(params))).toEqual(params);
      for (const ref of refsIn(params)) expect(resolveLocalRef(params, ref), ref).toBeDefined();
      for (const node of objectNodes(params)) {
        expect(node.additionalProperties).toBe(false);
        expect(node.required).toEqual(Object.keys(node.properties));
      }
      // A strict-mode consumer can compile it.
      expect(() => new Ajv({ strict: false }).compile(params)).not.toThrow();
    });

    it(`gemini: ${name} converts, with no $ref left`, () => {
      const params = geminiParams(schema);
      expect(JSON.parse(JSON.stringify(params))).toEqual(params);
      expect(allKeys(params).has("$ref")).toBe(false);
      for (const node of objectNodes(params)) expect(typeof node.type).toBe("string");
    });
  }

  it("strict: a $ref to the root beside siblings inside $defs is inlined once, without re-emitting $defs", () => {
    const params = strictParams(backToRoot);
    expect(Object.keys(params.$defs)).toEqual(["A"]);
    expect(params.properties.x).toEqual({ anyOf: [{ $ref: "#/$defs/A" }, { type: "null" }] });
    expect(params.$defs.A.properties.back).toEqual({
      type: ["object", "null"],
      description: "d",
      properties: { x: { anyOf: [{ $ref: "#/$defs/A" }, { type: "null" }] } },
      required: ["x"],
      additionalProperties: false,
    });
    const validate = new Ajv({ strict: false }).compile(params);
    expect(validate({ x: { back: { x: { back: { x: null } } } } })).toBe(true);
    expect(validate({ x: { back: { x: null, y: 1 } } })).toBe(false);
  });

  it("gemini: a $ref to the root inside $defs is expanded twice, then cut with a note", () => {
    const params = geminiParams(backToRoot);
    const back = params.properties.x.properties.back;
    expect(back.description).toBe("d");
    const cut = back.properties.x.properties.back.properties.x;
    expect(cut.properties).toBeUndefined();
    expect(cut).toEqual({ type: "object", description: "(a nested A; the structure repeats recursively and is not spelled out at this depth)" });
  });

  it("strict: a root property referring to the root keeps its siblings once, then becomes a plain ref", () => {
    const params = strictParams(shapes["a root property referring to the root, with siblings"] as JsonSchema);
    const again = params.properties.again;
    expect(again.description).toBe("The same again.");
    expect(again.properties.name).toEqual({ type: "string" });
    expect(again.properties.again).toEqual({ $ref: "#" });
    expect(again.$defs).toBeUndefined();
    expect(params.$defs.Up.properties.top).toMatchObject({ title: "Top", type: ["object", "null"] });
  });

  it("strict: mutual recursion with siblings inlines each ref once per path, then keeps the ref", () => {
    const params = strictParams(shapes["mutual recursion A -> B -> A, with siblings"] as JsonSchema);
    const b = params.properties.start.properties.b;
    expect(params.properties.start.description).toBe("Start here.");
    expect(b.description).toBe("To B.");
    expect(b.properties.a).toEqual({ anyOf: [{ $ref: "#/$defs/A" }, { type: "null" }] });
    // A definition inlines the other one once, then refers back to itself.
    expect(params.$defs.B.properties.a.properties.b.properties.a).toEqual({ anyOf: [{ $ref: "#/$defs/A" }, { type: "null" }] });
  });

  it("gemini: mutual recursion with siblings is cut after two rounds, keeping the descriptions", () => {
    const params = geminiParams(shapes["mutual recursion A -> B -> A, with siblings"] as JsonSchema);
    let node = params.properties.start;
    expect(node.description).toBe("Start here.");
    const seen: string[] = [];
    for (let i = 0; i < 10 && node.properties; i++) {
      node = node.properties.b ?? node.properties.a;
      seen.push(node.description);
    }
    expect(seen.slice(0, 3)).toEqual(["To B.", "To A.", "To B."]);
    expect(node.properties).toBeUndefined();
    expect(node.description).toMatch(/\(a nested [AB]; the structure repeats recursively/);
  });

  it("strict and gemini: a definition referring to itself with siblings ends in a ref or a note", () => {
    const shape = shapes["a definition referring to itself, with siblings"] as JsonSchema;
    const strict = strictParams(shape);
    expect(strict.definitions.Link.properties.next.description).toBe("The rest.");
    expect(strict.definitions.Link.properties.next.properties.next).toEqual({ anyOf: [{ $ref: "#/definitions/Link" }, { type: "null" }] });
    const gemini = geminiParams(shape);
    expect(descriptions(gemini).some((d) => d.includes("a nested Link; the structure repeats recursively"))).toBe(true);
  });

  it("strict: a $ref that cannot be resolved keeps its siblings and says so, instead of a dangling ref", () => {
    const params = strictParams(shapes["refs to targets that do not exist"] as JsonSchema);
    expect(params.properties).toEqual({
      gone: { type: "string", description: "Gone. (refers to #/$defs/Nope, which is not part of this schema)" },
      bare: { type: "string", description: "(refers to #/$defs/Nope, which is not part of this schema)" },
      remote: { type: "string", description: "(refers to https://example.com/thing.json, which is not part of this schema)" },
      notSchema: { type: "string", description: "(refers to #/required/0, which is not part of this schema)" },
      malformed: { type: "string", description: "(refers to #/$defs/%zz, which is not part of this schema)" },
    });
  });

  it("gemini: a $ref that cannot be resolved keeps its siblings and says so", () => {
    const params = geminiParams(shapes["refs to targets that do not exist"] as JsonSchema);
    expect(params.properties.gone).toEqual({ type: "string", description: "Gone. (refers to #/$defs/Nope, which is not part of this schema)" });
    expect(params.properties.bare).toEqual({ type: "string", description: "(refers to #/$defs/Nope, which is not part of this schema)" });
  });

  it("strict: a ref into a place the export rewrites is inlined, since it would dangle in the output", () => {
    const shape = shapes["refs into places an export rewrites (allOf, oneOf, not, tuples)"] as JsonSchema;
    const params = strictParams(shape);
    expect(params.properties.a).toMatchObject({ type: "object", properties: { z: { type: ["integer", "null"] } } });
    // Inlined once; its ref to itself cannot stay a ref either, so recursion ends in a placeholder.
    expect(params.properties.b.properties.deeper).toEqual({
      type: ["object", "null"],
      properties: {},
      required: [],
      additionalProperties: false,
      description: "(a nested oneOf/0; the structure repeats recursively and is not spelled out at this depth)",
    });
    expect(params.properties.d).toEqual({ type: "string", const: "no" });
    expect(params.properties.g).toEqual({ type: "integer", minimum: 3 });
    // A definition that is itself a ref to nothing stays a ref to that definition, which says what is missing.
    expect(params.properties.f).toEqual({ $ref: "#/$defs/Via" });
    expect(params.$defs.Via).toEqual({ type: "string", description: "Via. (refers to #/$defs/Gone, which is not part of this schema)" });
    expect(geminiParams(shape).properties.f).toEqual(params.$defs.Via);
  });

  it("strict and gemini: refs that only lead to each other are described, not followed", () => {
    const shape = shapes["refs that lead only to each other"] as JsonSchema;
    const strict = strictParams(shape);
    expect(refsIn(strict)).toEqual([]);
    expect(strict.properties.x).toEqual({ type: "string", description: "(refers to #/$defs/A, which only leads back to itself)" });
    expect(strict.properties.y).toEqual({ type: "string", description: "Me. (refers to #/properties/y, which only leads back to itself)" });
    const gemini = geminiParams(shape);
    expect(gemini.properties.x).toEqual(strict.properties.x);
    expect(gemini.properties.y).toEqual(strict.properties.y);
  });

  const deepShapes: Record<string, JsonSchema> = {
    "objects in objects": nested(5_000, (inner) => ({ type: "object", properties: { a: inner }, required: ["a"] })),
    "arrays of arrays": { type: "object", properties: { a: nested(5_000, (inner) => ({ type: "array", items: inner })) } },
    "anyOf in anyOf": { type: "object", properties: { a: nested(5_000, (inner) => ({ anyOf: [inner, { type: "null" }] })) } },
    "allOf in allOf": { type: "object", properties: { a: nested(5_000, (inner) => ({ allOf: [inner, { description: "x" }] })) } },
    "a deep schema under not": { type: "object", properties: { n: { type: "string", not: nested(5_000, (inner) => ({ not: inner })) } } },
    "a deep value under keywords kept as they are": {
      type: "object",
      properties: {
        e: { enum: [nested(5_000, (inner) => ({ k: inner })), "x"], title: nested(5_000, (inner) => ({ t: inner })) },
        x: { type: "string", example: nested(5_000, (inner) => ({ k: inner })) },
      },
    },
  };

  for (const [name, schema] of Object.entries(deepShapes)) {
    it(`strict and gemini: 5,000 levels of ${name} convert without a RangeError, cut with a note`, () => {
      for (const params of [strictParams(schema, false), geminiParams(schema, false)]) {
        expect(params.type).toBe("object");
        const text = JSON.stringify(params);
        expect(JSON.parse(text)).toEqual(params);
        if (name.startsWith("a deep")) continue; // quoted in a description, not walked
        expect(nesting(params)).toBeLessThan(1_000);
        expect(descriptions(params).some((d) => /nested more than \d+ levels deep; not spelled out/.test(d))).toBe(true);
      }
    });
  }

  it("strict: a deep object is spelled out down to the cut, then closed and empty", () => {
    const params = strictParams(deepShapes["objects in objects"] as JsonSchema, false);
    let node = params;
    let levels = 0;
    while (node.properties.a?.properties?.a) {
      node = node.properties.a;
      levels++;
    }
    expect(levels).toBeGreaterThanOrEqual(50);
    expect(node.properties.a).toEqual({
      type: "object",
      properties: {},
      required: [],
      additionalProperties: false,
      description: expect.stringMatching(/^\(nested more than \d+ levels deep; not spelled out\)$/),
    });
  });

  it("every format exports a 5,000-level schema without throwing", () => {
    const tools: ExportableTool[] = [{ schema: fn(deepShapes["objects in objects"] as JsonSchema), category: "c", toolset: "t" }];
    for (const format of EXPORT_FORMATS) expect(() => exportTools(tools, format), format).not.toThrow();
    // The pass-through formats keep the schema whole.
    const raw = exportTools(tools, "raw")[0] as { parameters: Node };
    expect(nesting(raw.parameters)).toBeGreaterThan(10_000);
  });

  /** Each definition refers twice to the next: fully inlined, 2^n copies of the last. */
  function doubling(n: number): JsonSchema {
    const defs: Record<string, JsonSchema> = {};
    for (let i = 0; i < n; i++) {
      const next = i + 1 < n ? { $ref: `#/$defs/L${i + 1}` } : { type: "string" };
      defs[`L${i}`] = {
        type: "object",
        description: `Level ${i}.`,
        properties: { left: { ...next, description: "Left." }, right: { ...next, description: "Right." } },
      };
    }
    return { type: "object", properties: { tree: { $ref: "#/$defs/L0", description: "The tree." } }, $defs: defs };
  }

  it("strict and gemini: refs that double at every level stop expanding at a size limit", () => {
    const schema = doubling(40);
    const strict = strictParams(schema);
    expect(JSON.stringify(strict).length).toBeLessThan(20_000_000);
    for (const ref of refsIn(strict)) expect(resolveLocalRef(strict, ref), ref).toBeDefined();
    const gemini = geminiParams(schema);
    expect(JSON.stringify(gemini).length).toBeLessThan(20_000_000);
    expect(allKeys(gemini).has("$ref")).toBe(false);
    expect(descriptions(gemini).some((d) => d.includes("not spelled out, because the schema grows too large"))).toBe(true);
  });

  it("gemini: a type listed many times is split once per distinct type", () => {
    const schema = nested(30, (inner) => ({ type: ["object", "object", "object", "null"], properties: { a: inner } }));
    const params = geminiParams({ type: "object", properties: { root: schema } });
    expect(JSON.stringify(params).length).toBeLessThan(100_000);
    expect(params.properties.root).toMatchObject({ type: "object", nullable: true });
  });
});

describe("exportTools", () => {
  const tools: ExportableTool[] = [
    { schema: fn({ type: "object", properties: { q: { type: "string" } } }, "search"), category: "web", toolset: "web" },
    { schema: fn({}, "now"), category: "time", toolset: "util" },
  ];

  it("lists the six formats", () => {
    expect([...EXPORT_FORMATS]).toEqual(["openai", "responses", "anthropic", "gemini", "strict", "raw"]);
    expect(isExportFormat("gemini")).toBe(true);
    expect(isExportFormat("GEMINI")).toBe(false);
  });

  it("converts every tool with the per-format function", () => {
    expect(exportTools(tools, "openai")).toEqual(tools.map((t) => toOpenAI(t.schema)));
    expect(exportTools(tools, "responses")).toEqual(tools.map((t) => toResponses(t.schema)));
    expect(exportTools(tools, "anthropic")).toEqual(tools.map((t) => toAnthropic(t.schema)));
    expect(exportTools(tools, "gemini")).toEqual(tools.map((t) => toGemini(t.schema)));
    expect(exportTools(tools, "strict")).toEqual(tools.map((t) => toOpenAIStrict(t.schema)));
    expect(exportTools(tools, "raw")).toEqual(tools.map((t) => toRaw(t)));
    for (const format of EXPORT_FORMATS) {
      const out = exportTools(tools, format);
      expect(out).toHaveLength(2);
      expect(JSON.parse(JSON.stringify(out))).toEqual(out);
    }
  });

  it("rejects an unknown format with a TypeError naming the valid ones", () => {
    expect(() => exportTools(tools, "claude" as ExportFormat)).toThrow(TypeError);
    expect(() => exportTools(tools, "claude" as ExportFormat)).toThrow(
      'Unknown export format "claude"; expected one of: openai, responses, anthropic, gemini, strict, raw',
    );
  });

  it("returns an empty list for no tools", () => {
    expect(exportTools([], "gemini")).toEqual([]);
  });
});
