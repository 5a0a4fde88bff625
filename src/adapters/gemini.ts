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
import { isPlainObject, setOwn } from "./clone.js";
import { hasNoProperties } from "./parameters.js";
import { annotate, notesFor, render } from "./notes.js";
import { declaredTypes, inferType, isNullSchema } from "./shape.js";
import { anyValue, fitsDepth, itemsOf, schemaWalker, unionOf, type RefSite, type WalkContext } from "./walk.js";

export interface GeminiFunctionDeclaration {
  name: string;
  description: string;
  /** Omitted for tools without parameters: Gemini rejects an OBJECT with empty `properties`. */
  parameters?: SchemaNode;
}

/** How many times one `$ref` may be expanded along a single path before the recursion is cut (see walk.ts for the other limits). */
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

const walker = schemaWalker({ recursionLimit: RECURSION_LIMIT, ref: convertRef, node: convertResolved });
const convert = walker.convert;

export function toGemini(schema: FunctionSchema): GeminiFunctionDeclaration {
  const parameters = walker.parameters(schema.parameters);
  const declaration: GeminiFunctionDeclaration = { name: schema.name, description: schema.description };
  if (!hasNoProperties(parameters) || parameters.anyOf !== undefined) declaration.parameters = parameters;
  return declaration;
}

/** Gemini has no `$ref`, so every reference is inlined until recursion (or the size limit) forces a cut. */
function convertRef(site: RefSite, ctx: WalkContext): SchemaNode {
  if (site.unresolved !== undefined) return convertResolved(site.siblings, ctx, [site.unresolved]);
  // Where recursion is cut: a typed placeholder that still tells the model what belongs there.
  if (site.limit !== undefined) return site.placeholder();
  return site.inline();
}

function convertResolved(node: SchemaNode, ctx: WalkContext, extraNotes: readonly string[] = []): SchemaNode {
  const notes: string[] = [...extraNotes];
  let nullable = node.nullable === true;

  const union = unionOf(node, notes);
  if (union) {
    const { anyOf: _a, oneOf: _o, ...rest } = node;
    const members = union.filter((m) => !isNullSchema(m));
    if (members.length < union.length) nullable = true;
    // A union that is only "X or null" is Gemini's `nullable` X; hoist X so the node keeps a plain type.
    if (members.length === 1 && declaredTypes(rest) === undefined) {
      const out = convert({ ...(members[0] as SchemaNode), ...rest }, ctx);
      if (nullable) out.nullable = true;
      return annotate(out, out.description, notes);
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
  // Each type once: `["object","object"]` would otherwise split into two copies of the whole object, per level.
  types = types?.filter((t) => t !== "null");
  if (types !== undefined && types.length > 1) types = [...new Set(types)];
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
  if (node.example !== undefined && fitsDepth(node.example)) out.example = node.example;

  if (isPlainObject(node.properties)) convertProperties(node, node.properties, out, ctx);
  convertItems(node, out, notes, ctx);

  notes.push(...notesFor(node, DESCRIBED));

  if (out.type === undefined && out.anyOf === undefined) {
    const fallback = anyValue(node.description, notes);
    if (nullable) fallback.nullable = true;
    return fallback;
  }
  if (nullable) out.nullable = true;
  return annotate(out, node.description, notes);
}

/** `type: ["string","integer"]` has no Gemini spelling; each type becomes an `anyOf` branch with its own keywords. */
function splitTypes(node: SchemaNode, types: readonly string[], nullable: boolean, ctx: WalkContext, notes: string[]): SchemaNode {
  const out: SchemaNode = {};
  out.anyOf = types.map((type) => {
    const branch: SchemaNode = { type };
    for (const key of KEYWORDS_BY_TYPE[type] ?? []) if (node[key] !== undefined) branch[key] = node[key];
    return convert(branch, ctx);
  });
  if (typeof node.title === "string") out.title = node.title;
  if (nullable) out.nullable = true;
  const inBranches = new Set(types.flatMap((t) => KEYWORDS_BY_TYPE[t] ?? []));
  notes.push(...notesFor(node, DESCRIBED.filter((key) => !inBranches.has(key))));
  return annotate(out, node.description, notes);
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

function convertProperties(node: SchemaNode, properties: Record<string, unknown>, out: SchemaNode, ctx: WalkContext): void {
  const converted: Record<string, SchemaNode> = {};
  for (const [name, schema] of Object.entries(properties)) setOwn(converted, name, convert(schema, ctx));
  if (Object.keys(converted).length === 0) return;
  out.type ??= "object";
  out.properties = converted;
  if (Array.isArray(node.required)) {
    // Gemini rejects a required name that has no property schema.
    const required = node.required.filter((n): n is string => typeof n === "string" && Object.hasOwn(converted, n));
    if (required.length > 0) out.required = [...new Set(required)];
  }
  if (Array.isArray(node.propertyOrdering)) {
    const ordering = node.propertyOrdering.filter((n): n is string => typeof n === "string" && Object.hasOwn(converted, n));
    if (ordering.length > 0) out.propertyOrdering = ordering;
  }
}

function convertItems(node: SchemaNode, out: SchemaNode, notes: string[], ctx: WalkContext): void {
  const items = itemsOf(node, notes, (schema) => convert(schema, ctx));
  if (items) out.items = items;
  // Gemini rejects an ARRAY without `items`; any value may be a string, so this narrows without lying.
  else if (out.type === "array") out.items = { type: "string" };
}
