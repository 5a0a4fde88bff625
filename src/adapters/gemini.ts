/**
 * Gemini function declarations. Gemini's `Schema` is a select subset of the
 * OpenAPI 3.0 schema object, not JSON Schema: no `$ref`, no `const`, no
 * `additionalProperties`, no type arrays (`nullable` instead), string `enum`
 * only, and for strings the Developer API accepts only the `enum` and
 * `date-time` formats. Everything outside the subset is rewritten into an
 * equivalent supported shape or, when there is none, restated in the node's
 * description (see docs/providers.md for the sources).
 */
import type { FunctionSchema } from "../registry/types.js";
import type { SchemaNode } from "./types.js";
import { isPlainObject } from "./clone.js";
import { objectParameters, hasNoProperties } from "./parameters.js";
import { depthOf, refName, resolveLocalRef } from "./refs.js";
import { mergeAllOf } from "./allOf.js";
import { noteFor, render, withNotes } from "./notes.js";
import { declaredTypes, inferType, isNullSchema, tupleItems } from "./shape.js";

export interface GeminiFunctionDeclaration {
  name: string;
  description: string;
  /** Omitted for tools without parameters: Gemini rejects an OBJECT with empty `properties`. */
  parameters?: SchemaNode;
}

/** How many times one `$ref` may be expanded along a single path before the recursion is cut. */
const RECURSION_LIMIT = 2;

const FORMATS_BY_TYPE: Readonly<Record<string, readonly string[]>> = {
  string: ["enum", "date-time"],
  number: ["float", "double"],
  integer: ["int32", "int64"],
};

/** Gemini `Schema` fields copied verbatim when their value has the right JSON type. */
const NUMERIC_PASSTHROUGH = [
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
] as const;

/** Keywords Gemini has no field for; their meaning goes into the description. */
const DESCRIBED = [
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "uniqueItems",
  "default",
  "examples",
  "not",
  "if",
  "additionalProperties",
  "unevaluatedProperties",
  "patternProperties",
  "propertyNames",
  "dependentRequired",
  "dependentSchemas",
  "contains",
  "deprecated",
] as const;

/** Which keywords belong to which type, for splitting `type: ["string","integer"]` into `anyOf` branches. */
const KEYWORDS_BY_TYPE: Readonly<Record<string, readonly string[]>> = {
  string: ["minLength", "maxLength", "pattern", "format", "enum", "const"],
  number: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "format", "enum", "const"],
  integer: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "format", "enum", "const"],
  array: ["items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains"],
  object: [
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "dependentRequired",
    "dependentSchemas",
    "propertyOrdering",
  ],
  boolean: ["enum", "const"],
};

interface Context {
  readonly root: SchemaNode;
  /** Refs being expanded on the current path, outermost first. */
  readonly stack: readonly string[];
}

export function toGemini(schema: FunctionSchema): GeminiFunctionDeclaration {
  const root = objectParameters(schema.parameters);
  const parameters = convert(root, { root, stack: [] });
  const declaration: GeminiFunctionDeclaration = { name: schema.name, description: schema.description };
  if (!hasNoProperties(parameters) || parameters.anyOf !== undefined) declaration.parameters = parameters;
  return declaration;
}

function convert(input: unknown, ctx: Context): SchemaNode {
  // `true` and a missing schema both mean "any value".
  if (input === true || input === undefined) return anyValue(undefined, []);
  if (!isPlainObject(input)) return anyValue(undefined, ["no value is accepted"]);
  if (typeof input.$ref === "string") return convertRef(input, input.$ref, ctx);
  if (Array.isArray(input.allOf)) return convertAllOf(input, input.allOf, ctx);
  return convertResolved(input, ctx);
}

function convertRef(node: SchemaNode, ref: string, ctx: Context): SchemaNode {
  const { $ref: _ref, ...siblings } = node;
  const target = resolveLocalRef(ctx.root, ref);
  if (!target) {
    return convertResolved(siblings, ctx, [`refers to ${ref}, which is not part of this schema`]);
  }
  if (depthOf(ctx.stack, ref) >= RECURSION_LIMIT) return truncated(target, siblings, ref);
  // Siblings of a $ref refine the target (draft 2019+), so they win on conflict.
  return convert({ ...target, ...siblings }, { ...ctx, stack: [...ctx.stack, ref] });
}

/** Where recursion is cut: a typed placeholder that still tells the model what belongs there. */
function truncated(target: SchemaNode, siblings: SchemaNode, ref: string): SchemaNode {
  const type = typeof target.type === "string" && target.type !== "null" ? target.type : "object";
  const out: SchemaNode = { type };
  if (type === "array") out.items = { type: "string" };
  const description = withNotes(siblings.description ?? target.description, [
    `a nested ${refName(ref)}; the structure repeats recursively and is not spelled out at this depth`,
  ]);
  if (description) out.description = description;
  return out;
}

function convertAllOf(node: SchemaNode, allOf: unknown[], ctx: Context): SchemaNode {
  const { allOf: _allOf, ...base } = node;
  const members: SchemaNode[] = [];
  const notes: string[] = [];
  let stack = ctx.stack;
  for (const member of allOf) {
    if (!isPlainObject(member)) continue;
    if (typeof member.$ref !== "string") {
      members.push(member);
      continue;
    }
    const { $ref: ref, ...siblings } = member;
    const target = resolveLocalRef(ctx.root, ref);
    if (!target || depthOf(stack, ref) >= RECURSION_LIMIT) {
      notes.push(`must also match ${refName(ref)}`);
      continue;
    }
    stack = [...stack, ref];
    members.push({ ...target, ...siblings });
  }
  const { merged, conflicts } = mergeAllOf(base, members);
  for (const conflict of conflicts) notes.push(`must also match ${render(conflict)}`);
  const out = convert(merged, { ...ctx, stack });
  return appendNotes(out, notes);
}

function appendNotes(out: SchemaNode, notes: readonly string[]): SchemaNode {
  const description = withNotes(out.description, notes);
  if (description !== undefined) out.description = description;
  return out;
}

/** A schema with no type of its own. Gemini needs a type; a string is always a valid instance of "any". */
function anyValue(description: unknown, notes: readonly string[]): SchemaNode {
  const out: SchemaNode = { type: "string" };
  const text = withNotes(description, notes);
  if (text !== undefined) out.description = text;
  return out;
}

function convertResolved(node: SchemaNode, ctx: Context, extraNotes: readonly string[] = []): SchemaNode {
  const notes: string[] = [...extraNotes];
  let nullable = node.nullable === true;

  const union = Array.isArray(node.anyOf) ? node.anyOf : Array.isArray(node.oneOf) ? node.oneOf : undefined;
  if (union) {
    const { anyOf: _a, oneOf: _o, ...rest } = node;
    const members = union.filter((m) => !isNullSchema(m));
    if (members.length < union.length) nullable = true;
    if (Array.isArray(node.anyOf) && Array.isArray(node.oneOf)) {
      notes.push(`must also match exactly one of ${render(node.oneOf)}`);
    }
    // A union that is only "X or null" is Gemini's `nullable` X; hoist X so the node keeps a plain type.
    if (members.length === 1 && declaredTypes(rest) === undefined) {
      const out = convert({ ...(members[0] as SchemaNode), ...rest }, ctx);
      if (nullable) out.nullable = true;
      return appendNotes(out, notes);
    }
    if (members.length > 0) {
      const out = convertResolved(rest, ctx, notes);
      if (declaredTypes(rest) === undefined && inferType(rest) === undefined) delete out.type;
      out.anyOf = members.map((m) => convert(m, ctx));
      if (nullable) out.nullable = true;
      return out;
    }
  }

  let types = declaredTypes(node);
  if (types?.includes("null")) nullable = true;
  types = types?.filter((t) => t !== "null");
  if (types === undefined || types.length === 0) {
    const inferred = inferType(node);
    if (inferred) types = [inferred];
    else if (types !== undefined) {
      // Declared as only `null`: Gemini has no null type, so say it.
      notes.push("must be null");
      types = [];
    }
  }

  if (types !== undefined && types.length > 1) return splitTypes(node, types, nullable, ctx, notes);

  const type = types?.[0];
  const out: SchemaNode = {};
  if (type) out.type = type;
  if (typeof node.title === "string") out.title = node.title;

  convertValues(node, out, notes, () => (nullable = true));
  convertFormat(node, out, notes);

  for (const key of NUMERIC_PASSTHROUGH) {
    if (typeof node[key] === "number") out[key] = node[key];
  }
  if (typeof node.pattern === "string") out.pattern = node.pattern;
  if (node.example !== undefined) out.example = node.example;

  if (isPlainObject(node.properties)) convertProperties(node, node.properties, out, ctx);
  convertItems(node, out, notes, ctx);

  for (const key of DESCRIBED) {
    if (node[key] === undefined) continue;
    const note = noteFor(key, node);
    if (note) notes.push(note);
  }

  if (out.type === undefined && out.anyOf === undefined) {
    const fallback = anyValue(node.description, notes);
    if (nullable) fallback.nullable = true;
    return fallback;
  }
  if (nullable) out.nullable = true;
  const description = withNotes(node.description, notes);
  if (description !== undefined) out.description = description;
  return out;
}

/** `type: ["string","integer"]` has no Gemini spelling; each type becomes an `anyOf` branch with its own keywords. */
function splitTypes(node: SchemaNode, types: readonly string[], nullable: boolean, ctx: Context, notes: string[]): SchemaNode {
  const out: SchemaNode = {};
  out.anyOf = types.map((type) => {
    const branch: SchemaNode = { type };
    for (const key of KEYWORDS_BY_TYPE[type] ?? []) if (node[key] !== undefined) branch[key] = node[key];
    return convert(branch, ctx);
  });
  if (typeof node.title === "string") out.title = node.title;
  if (nullable) out.nullable = true;
  const inBranches = new Set(types.flatMap((t) => KEYWORDS_BY_TYPE[t] ?? []));
  for (const key of DESCRIBED) {
    if (node[key] === undefined || inBranches.has(key)) continue;
    const note = noteFor(key, node);
    if (note) notes.push(note);
  }
  const description = withNotes(node.description, notes);
  if (description !== undefined) out.description = description;
  return out;
}

/** `enum` and `const`: Gemini's `enum` holds strings only, and `null` is spelled `nullable`. */
function convertValues(node: SchemaNode, out: SchemaNode, notes: string[], markNullable: () => void): void {
  const values = Array.isArray(node.enum) ? node.enum : "const" in node ? [node.const] : undefined;
  if (values === undefined) return;
  if (values.includes(null)) markNullable();
  const present = values.filter((v) => v !== null);
  if (present.length === 0) return;
  if (present.every((v) => typeof v === "string") && (out.type === undefined || out.type === "string")) {
    out.type = "string";
    out.enum = present;
    return;
  }
  // Stringifying numbers into `enum` would make the model send strings; describe the choice instead.
  notes.push(present.length === 1 ? `must be ${render(present[0])}` : `one of: ${present.map(render).join(", ")}`);
}

function convertFormat(node: SchemaNode, out: SchemaNode, notes: string[]): void {
  if (typeof node.format !== "string") return;
  const allowed = typeof out.type === "string" ? FORMATS_BY_TYPE[out.type] : undefined;
  if (allowed?.includes(node.format)) out.format = node.format;
  else notes.push(`format: ${node.format}`);
}

function convertProperties(node: SchemaNode, properties: Record<string, unknown>, out: SchemaNode, ctx: Context): void {
  const converted: Record<string, SchemaNode> = {};
  for (const [name, schema] of Object.entries(properties)) converted[name] = convert(schema, ctx);
  if (Object.keys(converted).length === 0) return;
  out.type ??= "object";
  out.properties = converted;
  if (Array.isArray(node.required)) {
    // Gemini rejects a required name that has no property schema.
    const required = node.required.filter((n): n is string => typeof n === "string" && n in converted);
    if (required.length > 0) out.required = [...new Set(required)];
  }
  if (Array.isArray(node.propertyOrdering)) {
    const ordering = node.propertyOrdering.filter((n): n is string => typeof n === "string" && n in converted);
    if (ordering.length > 0) out.propertyOrdering = ordering;
  }
}

function convertItems(node: SchemaNode, out: SchemaNode, notes: string[], ctx: Context): void {
  const tuple = tupleItems(node);
  if (isPlainObject(node.items) || typeof node.items === "boolean") {
    out.items = convert(node.items, ctx);
  } else if (tuple && tuple.length > 0) {
    const branches = tuple.map((s) => convert(s, ctx));
    out.items = branches.length === 1 ? (branches[0] as SchemaNode) : { anyOf: branches };
    notes.push(`items in order: ${tuple.map(render).join(", ")}`);
  }
  // Gemini rejects an ARRAY without `items`; any value may be a string, so this narrows without lying.
  if (out.type === "array" && out.items === undefined) out.items = { type: "string" };
}
