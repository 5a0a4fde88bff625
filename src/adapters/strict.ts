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
import { isPlainObject, setOwn } from "./clone.js";
import { annotate, notesFor } from "./notes.js";
import { declaredTypes, inferType, isNullSchema } from "./shape.js";
import { pointerPath } from "./refs.js";
import { fitsDepth, itemsOf, MAX_DEPTH, schemaWalker, unionOf, type RefSite, type WalkContext } from "./walk.js";

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

// Strict mode follows recursive refs itself; a ref is only inlined to carry its sibling keywords, and never into itself.
const walker = schemaWalker({ recursionLimit: 1, ref: strictifyRef, node: strictifyResolved });
const strictify = walker.convert;

export function toOpenAIStrict(schema: FunctionSchema): OpenAIStrictToolDefinition {
  const parameters = walker.parameters(schema.parameters);
  return {
    type: "function",
    function: { name: schema.name, description: schema.description, parameters, strict: true },
  };
}

function strictifyRef(site: RefSite, ctx: WalkContext): SchemaNode {
  // A ref that leads nowhere (or round in a loop of refs) would make OpenAI refuse the
  // whole request, so it becomes what its siblings say, plus a note, as for Gemini.
  if (site.unresolved !== undefined) return strictifyResolved(site.siblings, ctx, [site.unresolved]);
  // A ref into a place this export rewrites (`allOf`, `oneOf`, `not`, a tuple...) would point
  // nowhere in the output, so its target is inlined, or replaced by a placeholder at a limit.
  if (!keptInOutput(ctx.root, site.ref)) return site.limit === undefined ? site.inline() : site.placeholder();
  // Strict mode refuses keywords beside a $ref, so the target is inlined under them.
  // When that would recurse (or pass the size limit) only the bare ref survives: strict mode follows it itself.
  if (Object.keys(site.siblings).length === 0 || site.limit !== undefined) return { $ref: site.ref };
  return site.inline();
}

/**
 * Whether the node `ref` points at is still at that pointer in the output:
 * true when the way there only passes through what this export keeps in
 * place (`properties`, `$defs`, `definitions`, `anyOf`, an `items` schema).
 */
function keptInOutput(root: SchemaNode, ref: string): boolean {
  const path = pointerPath(ref);
  // Past the depth limit the walk leaves a placeholder, so a long path may not survive.
  if (path === undefined || path.length > MAX_DEPTH) return false;
  let node: unknown = root;
  for (let i = 0; i < path.length; i++) {
    if (!isPlainObject(node)) return false;
    const keyword = path[i] as string;
    const member = path[i + 1];
    if (keyword === "items" && isPlainObject(node.items)) node = node.items;
    else if ((keyword === "properties" || keyword === "$defs" || keyword === "definitions") && member !== undefined) {
      const table = node[keyword];
      node = isPlainObject(table) && Object.hasOwn(table, member) ? table[member] : undefined;
      i++;
    } else if (keyword === "anyOf" && Array.isArray(node.anyOf) && member !== undefined && /^\d+$/.test(member)) {
      node = node.anyOf[Number(member)];
      i++;
    } else return false;
  }
  return isPlainObject(node);
}

function strictifyResolved(node: SchemaNode, ctx: WalkContext, extraNotes: readonly string[] = []): SchemaNode {
  const out: SchemaNode = {};
  const notes: string[] = [...extraNotes];

  // A `type` that is neither a name nor a list of names is no type at all.
  let type: unknown = declaredTypes(node) === undefined ? undefined : node.type;
  if (Array.isArray(type) && type.some((t) => typeof t !== "string")) type = undefined;
  if (type === undefined) type = inferType(node);
  if (type !== undefined) out.type = type;

  for (const key of KEPT) {
    if (node[key] === undefined) continue;
    // A value nested too deep to serialise (say an enum of 5,000-level objects) is described instead.
    if (fitsDepth(node[key])) out[key] = node[key];
    else notes.push(...notesFor(node, [key]));
  }

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

  const union = unionOf(node, notes);
  if (union) out.anyOf = union.map((m) => strictify(m, ctx));

  const types = declaredTypes(out) ?? [];
  if (types.includes("object") || isPlainObject(node.properties)) strictifyObject(node, out, notes, ctx);
  if (types.includes("array") || node.items !== undefined) strictifyArray(node, out, notes, ctx);

  // Definitions are converted on the current path, not afresh: starting a
  // definition with an empty stack let a `$ref: "#"` beside siblings inside it
  // inline the root, whose definitions then inlined the root again, without end.
  for (const defs of ["$defs", "definitions"] as const) {
    const table = node[defs];
    if (!isPlainObject(table)) continue;
    const converted: Record<string, SchemaNode> = {};
    for (const [name, schema] of Object.entries(table)) setOwn(converted, name, strictify(schema, ctx));
    out[defs] = converted;
  }

  notes.push(...notesFor(node, DESCRIBED));

  const typed = out.type !== undefined || out.anyOf !== undefined || out.enum !== undefined || out.const !== undefined;
  if (!typed) out.type = "string";

  return annotate(out, node.description, notes);
}

function strictifyObject(node: SchemaNode, out: SchemaNode, notes: string[], ctx: WalkContext): void {
  out.type ??= "object";
  const source = isPlainObject(node.properties) ? node.properties : {};
  const required = new Set(Array.isArray(node.required) ? node.required : []);
  const properties: Record<string, SchemaNode> = {};
  for (const [name, schema] of Object.entries(source)) {
    const converted = strictify(schema, ctx);
    setOwn(properties, name, required.has(name) ? converted : nullable(converted));
  }
  out.properties = properties;
  out.required = Object.keys(properties);
  out.additionalProperties = false;
  // A free-form map cannot be expressed in strict mode. Saying so keeps the
  // model from trying, and tells whoever reads the export what was lost.
  const extra = node.additionalProperties ?? node.patternProperties;
  if (extra !== undefined && extra !== false) notes.push("no properties beyond those listed can be given here");
}

function strictifyArray(node: SchemaNode, out: SchemaNode, notes: string[], ctx: WalkContext): void {
  out.type ??= "array";
  out.items = itemsOf(node, notes, (schema) => strictify(schema, ctx)) ?? { type: "string" };
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
