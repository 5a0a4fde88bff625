/**
 * OpenAI strict mode (Structured Outputs for function calls). The model's
 * arguments are then guaranteed to match the schema, but only for a subset of
 * JSON Schema: every object must set `additionalProperties: false` and list
 * every property in `required` (optional ones are expressed as nullable), and
 * keywords outside the subset make the request fail. `$ref`/`$defs` and
 * recursion are supported, so references are kept rather than inlined.
 * Unsupported keywords are dropped and restated in the description, as for
 * Gemini (see docs/providers.md for the sources).
 */
import type { FunctionSchema } from "../registry/types.js";
import type { SchemaNode } from "./types.js";
import { isPlainObject } from "./clone.js";
import { objectParameters } from "./parameters.js";
import { resolveLocalRef, refName } from "./refs.js";
import { mergeAllOf } from "./allOf.js";
import { noteFor, render, withNotes } from "./notes.js";
import { declaredTypes, inferType, isNullSchema, tupleItems } from "./shape.js";

export interface OpenAIStrictToolDefinition {
  type: "function";
  function: FunctionSchema & { strict: true };
}

/** String formats strict mode accepts; any other `format` fails the request. */
const STRICT_FORMATS: readonly string[] = [
  "date-time",
  "time",
  "date",
  "duration",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "uuid",
];

/** Keywords copied as they are: inside the strict subset and needing no rewrite. */
const KEPT = [
  "title",
  "enum",
  "const",
  "pattern",
  "minimum",
  "maximum",
  "multipleOf",
  "minItems",
  "maxItems",
] as const;

/**
 * Unsupported keywords whose meaning is restated in the description. Object
 * size and property-name rules are left out: once every object is closed and
 * lists all its properties they no longer constrain anything.
 */
const DESCRIBED = [
  "minLength",
  "maxLength",
  "default",
  "examples",
  "not",
  "if",
  "dependentRequired",
  "dependentSchemas",
  "uniqueItems",
  "contains",
  "deprecated",
] as const;

interface Context {
  readonly root: SchemaNode;
  /** Refs inlined on the current path; only refs with sibling keywords are inlined. */
  readonly stack: readonly string[];
}

export function toOpenAIStrict(schema: FunctionSchema): OpenAIStrictToolDefinition {
  const root = objectParameters(schema.parameters);
  const parameters = strictify(root, { root, stack: [] });
  return {
    type: "function",
    function: { name: schema.name, description: schema.description, parameters, strict: true },
  };
}

function strictify(input: unknown, ctx: Context): SchemaNode {
  // Strict mode rejects a schema without a type; a string is always a valid instance of "any".
  if (input === true || input === undefined) return { type: "string" };
  if (!isPlainObject(input)) return { type: "string", description: "(no value is accepted)" };
  if (typeof input.$ref === "string") return strictifyRef(input, input.$ref, ctx);
  if (Array.isArray(input.allOf)) return strictifyAllOf(input, input.allOf, ctx);
  return strictifyResolved(input, ctx);
}

function strictifyRef(node: SchemaNode, ref: string, ctx: Context): SchemaNode {
  const { $ref: _ref, ...siblings } = node;
  const keys = Object.keys(siblings);
  if (keys.length === 0) return { $ref: ref };
  const target = resolveLocalRef(ctx.root, ref);
  // Strict mode refuses keywords beside a $ref, so the target is inlined under them.
  // When that would recurse (or cannot be resolved) only the bare ref survives.
  if (!target || ctx.stack.includes(ref)) return { $ref: ref };
  return strictify({ ...target, ...siblings }, { ...ctx, stack: [...ctx.stack, ref] });
}

function strictifyAllOf(node: SchemaNode, allOf: unknown[], ctx: Context): SchemaNode {
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
    if (!target || stack.includes(ref)) {
      notes.push(`must also match ${refName(ref)}`);
      continue;
    }
    stack = [...stack, ref];
    members.push({ ...target, ...siblings });
  }
  const { merged, conflicts } = mergeAllOf(base, members);
  for (const conflict of conflicts) notes.push(`must also match ${render(conflict)}`);
  const out = strictify(merged, { ...ctx, stack });
  const description = withNotes(out.description, notes);
  if (description !== undefined) out.description = description;
  return out;
}

function strictifyResolved(node: SchemaNode, ctx: Context): SchemaNode {
  const out: SchemaNode = {};
  const notes: string[] = [];

  let type: unknown = node.type;
  if (type === undefined) type = inferType(node);
  if (type !== undefined) out.type = type;

  for (const key of KEPT) if (node[key] !== undefined) out[key] = node[key];

  // Strict mode has no boolean-exclusive bounds (draft-04); the numeric form says the same.
  for (const [bound, exclusive] of [
    ["minimum", "exclusiveMinimum"],
    ["maximum", "exclusiveMaximum"],
  ] as const) {
    const flag = node[exclusive];
    if (typeof flag === "number") out[exclusive] = flag;
    else if (flag === true && typeof node[bound] === "number") {
      out[exclusive] = node[bound];
      delete out[bound];
    }
  }

  if (typeof node.format === "string") {
    if (STRICT_FORMATS.includes(node.format)) out.format = node.format;
    else notes.push(`format: ${node.format}`);
  }

  const union = Array.isArray(node.anyOf) ? node.anyOf : Array.isArray(node.oneOf) ? node.oneOf : undefined;
  if (union) out.anyOf = union.map((m) => strictify(m, ctx));
  // "Exactly one of" has no strict spelling; "any of" is the closest and usually equivalent for arguments.
  if (Array.isArray(node.anyOf) && Array.isArray(node.oneOf)) notes.push(`must also match exactly one of ${render(node.oneOf)}`);

  const types = declaredTypes(out) ?? [];
  if (types.includes("object") || isPlainObject(node.properties)) strictifyObject(node, out, notes, ctx);
  if (types.includes("array") || node.items !== undefined) strictifyArray(node, out, notes, ctx);

  for (const defs of ["$defs", "definitions"] as const) {
    const table = node[defs];
    if (!isPlainObject(table)) continue;
    const converted: Record<string, SchemaNode> = {};
    for (const [name, schema] of Object.entries(table)) converted[name] = strictify(schema, { ...ctx, stack: [] });
    out[defs] = converted;
  }

  for (const key of DESCRIBED) {
    if (node[key] === undefined) continue;
    const note = noteFor(key, node);
    if (note) notes.push(note);
  }

  const typed = out.type !== undefined || out.anyOf !== undefined || out.enum !== undefined || out.const !== undefined;
  if (!typed) out.type = "string";

  const description = withNotes(node.description, notes);
  if (description !== undefined) out.description = description;
  return out;
}

function strictifyObject(node: SchemaNode, out: SchemaNode, notes: string[], ctx: Context): void {
  out.type ??= "object";
  const source = isPlainObject(node.properties) ? node.properties : {};
  const required = new Set(Array.isArray(node.required) ? node.required : []);
  const properties: Record<string, SchemaNode> = {};
  for (const [name, schema] of Object.entries(source)) {
    const converted = strictify(schema, ctx);
    properties[name] = required.has(name) ? converted : nullable(converted);
  }
  out.properties = properties;
  out.required = Object.keys(properties);
  out.additionalProperties = false;
  // A free-form map cannot be expressed in strict mode. Saying so keeps the
  // model from trying, and tells whoever reads the export what was lost.
  const extra = node.additionalProperties ?? node.patternProperties;
  if (extra !== undefined && extra !== false) notes.push("no properties beyond those listed can be given here");
}

function strictifyArray(node: SchemaNode, out: SchemaNode, notes: string[], ctx: Context): void {
  out.type ??= "array";
  const tuple = tupleItems(node);
  if (isPlainObject(node.items) || typeof node.items === "boolean") {
    out.items = strictify(node.items, ctx);
  } else if (tuple && tuple.length > 0) {
    const branches = tuple.map((s) => strictify(s, ctx));
    out.items = branches.length === 1 ? (branches[0] as SchemaNode) : { anyOf: branches };
    notes.push(`items in order: ${tuple.map(render).join(", ")}`);
  } else {
    out.items = { type: "string" };
  }
}

/**
 * Turns a converted schema into "this or null", the strict spelling of an
 * optional property. Keeps the node flat where possible because a flat
 * `type: [T, "null"]` reads better to the model than a wrapper.
 */
function nullable(schema: SchemaNode): SchemaNode {
  if (isNullSchema(schema)) return schema;
  if (typeof schema.$ref === "string") return wrapNullable(schema);

  let changed = false;
  if (typeof schema.type === "string" || Array.isArray(schema.type)) {
    const types = declaredTypes(schema) ?? [];
    if (!types.includes("null")) schema.type = [...types, "null"];
    changed = true;
  }
  if (Array.isArray(schema.anyOf)) {
    if (!schema.anyOf.some(isNullSchema)) schema.anyOf = [...schema.anyOf, { type: "null" }];
    changed = true;
  }
  if (Array.isArray(schema.enum)) {
    if (!schema.enum.includes(null)) schema.enum = [...schema.enum, null];
    changed = true;
  }
  if ("const" in schema) {
    schema.enum = [schema.const, null];
    delete schema.const;
    changed = true;
  }
  return changed ? schema : wrapNullable(schema);
}

function wrapNullable(schema: SchemaNode): SchemaNode {
  const { description, title, ...inner } = schema;
  const out: SchemaNode = { anyOf: [inner, { type: "null" }] };
  if (description !== undefined) out.description = description;
  if (title !== undefined) out.title = title;
  return out;
}
