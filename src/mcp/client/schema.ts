/**
 * An MCP tool's `inputSchema` as the registry and every export format take it (hermes
 * `_normalize_mcp_input_schema`, plus what our registration checks need).
 *
 * - Missing, empty or not an object → `{type: "object", properties: {}}`.
 * - `definitions` → `$defs`, and `$ref`s that point through a renamed `definitions` are rewritten.
 *   Only the keyword is renamed: a *property* called `definitions` stays (the ref rewrite walks the
 *   pointer against the schema, so `#/properties/definitions` is left alone too). A node that has
 *   both keeps both.
 * - "X or null" (`anyOf: [X, {type: null}]`, as pydantic writes `Optional[X]`) becomes
 *   `type: [X's type, "null"]` (with `null` added to X's `enum`). hermes writes `nullable: true`;
 *   that is OpenAPI, not JSON Schema: OpenAI and Anthropic ignore it (the model no longer learns
 *   that null is allowed), and Ajv refuses `nullable` without a `type` at compile time. A type list
 *   is standard, validated by Ajv, and our Gemini exporter turns it into Gemini's `nullable` itself.
 *   A union that is not that simple (X has no single type, a `const`, or keywords that clash with
 *   the union's siblings) keeps its `anyOf`, which every exporter handles. An OpenAPI `nullable`
 *   the server sent is turned into the same type list (or dropped where it means nothing).
 * - A node with `properties` or `required` but no `type` gets `type: "object"`; an object without
 *   `properties` gets `properties: {}`; `required` keeps only strings naming existing properties
 *   (unless `additionalProperties` / `patternProperties` admit other names), and goes when empty.
 * - A `pattern` the linear-time regex engine cannot run (lookaround, backreferences; zod 4 writes
 *   lookaheads into its email pattern) or past the registry's pattern limits is dropped and restated
 *   in the node's `description`: the server validates its own input, and refusing the whole tool
 *   over one pattern (what registration would do) helps nobody.
 *
 * Never throws, on any input. Deep or huge input is copied up to a budget and the rest left as it
 * came, so registration's limits (src/schema/limits.ts) refuse it with a message naming the place.
 */
import type { JsonSchema } from "../../registry/types.js";
import { SCHEMA_LIMITS } from "../../schema/limits.js";
import { compileLinearPattern } from "../../schema/linear-regexp.js";
import { patternCost } from "../../schema/pattern-cost.js";

/** Keywords whose value maps names to schemas. */
const MAP_KEYWORDS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);
/** Keywords whose value is a list of schemas. */
const LIST_KEYWORDS = new Set(["allOf", "anyOf", "oneOf", "prefixItems"]);
/** Keywords whose value is one schema (`items` also takes a list, draft-07 tuples). */
const ONE_SCHEMA_KEYWORDS = new Set([
  "items",
  "additionalProperties",
  "additionalItems",
  "not",
  "if",
  "then",
  "else",
  "contains",
  "propertyNames",
  "unevaluatedItems",
  "unevaluatedProperties",
]);
/** Keywords a collapsed "X or null" may carry on both sides; the outer one (pydantic puts them there) wins. */
const ANNOTATIONS = new Set(["title", "description", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly"]);

/** Schema objects deeper than this are left as they came (registration refuses past 64 JSON levels). */
const MAX_DEPTH = 200;
/** Schema objects copied at most; the rest are left as they came (registration refuses past 10,000 JSON values). */
const MAX_NODES = 20_000;

const EMPTY_OBJECT_SCHEMA = (): JsonSchema => ({ type: "object", properties: {} });

type Node = Record<string, unknown>;

const isObject = (value: unknown): value is Node => value !== null && typeof value === "object" && !Array.isArray(value);

interface Walk {
  /** The schema as it came (for resolving `$ref` pointers against its shape). */
  root: Node;
  /** Original nodes whose `definitions` became `$defs`. */
  renamed: WeakSet<object>;
  /** Objects on the current path (a cycle only exists in hand-built input). */
  ancestors: Set<object>;
  /** Schema objects visited by each pass (each stops at MAX_NODES: a DAG can be exponential as a tree). */
  marked: number;
  nodes: number;
  patternCost: number;
}

/** The MCP tool's input schema, normalised (see the module comment). Never throws. */
export function normalizeMcpInputSchema(schema: unknown): JsonSchema {
  if (!isObject(schema) || Object.keys(schema).length === 0) return EMPTY_OBJECT_SCHEMA();
  try {
    const walk: Walk = { root: schema, renamed: new WeakSet(), ancestors: new Set(), marked: 0, nodes: 0, patternCost: 0 };
    markRenames(schema, walk, 0);
    let out = normalizeNode(schema, walk, 0) as Node;
    // The parameters of a tool are an object: a root that says `["object", "null"]` (an optional
    // model from some generators) is one; any other root type is left for registration to refuse.
    if (Array.isArray(out.type) && out.type.includes("object")) out = fixObject({ ...out, type: "object" });
    if (out.type === undefined && out.$ref === undefined && out.anyOf === undefined && out.oneOf === undefined && out.allOf === undefined) {
      return withTypeFirst({ ...out, type: "object", ...(isObject(out.properties) ? {} : { properties: {} }) });
    }
    return out;
  } catch {
    // Only a hostile, hand-built object gets here (JSON cannot make a throwing getter or a proxy).
    return EMPTY_OBJECT_SCHEMA();
  }
}

/** First pass: which nodes rename `definitions`, so refs anywhere (even earlier in the tree) can follow. */
function markRenames(node: unknown, walk: Walk, depth: number): void {
  if (!isObject(node) || depth > MAX_DEPTH || ++walk.marked > MAX_NODES || walk.ancestors.has(node)) return;
  walk.ancestors.add(node);
  try {
    if (isObject(node.definitions) && node.$defs === undefined) walk.renamed.add(node);
    for (const [key, value] of Object.entries(node)) {
      if (MAP_KEYWORDS.has(key) && isObject(value)) for (const child of Object.values(value)) markRenames(child, walk, depth + 1);
      else if ((LIST_KEYWORDS.has(key) || key === "items") && Array.isArray(value)) for (const child of value) markRenames(child, walk, depth + 1);
      else if (ONE_SCHEMA_KEYWORDS.has(key)) markRenames(value, walk, depth + 1);
    }
  } finally {
    walk.ancestors.delete(node);
  }
}

function normalizeNode(node: unknown, walk: Walk, depth: number): unknown {
  if (!isObject(node)) return node; // `true` / `false` schemas, and junk registration will name
  if (depth > MAX_DEPTH || ++walk.nodes > MAX_NODES || walk.ancestors.has(node)) return node;
  walk.ancestors.add(node);
  try {
    let out: Node = {};
    for (const [key, value] of Object.entries(node)) {
      let outKey = key;
      let outValue: unknown = value;
      if (key === "definitions" && walk.renamed.has(node)) outKey = "$defs";
      if (MAP_KEYWORDS.has(key) && isObject(value)) {
        const map: Node = {};
        for (const [name, child] of Object.entries(value)) setOwn(map, name, normalizeNode(child, walk, depth + 1));
        outValue = map;
      } else if ((LIST_KEYWORDS.has(key) || key === "items") && Array.isArray(value)) {
        outValue = value.map((child) => normalizeNode(child, walk, depth + 1));
      } else if (ONE_SCHEMA_KEYWORDS.has(key)) {
        outValue = normalizeNode(value, walk, depth + 1);
      } else if (key === "$ref" && typeof value === "string") {
        outValue = rewriteRef(value, walk);
      }
      setOwn(out, outKey, outValue);
    }
    out = fixPattern(out, walk);
    out = fixNullable(out);
    out = collapseNullUnion(out);
    out = fixObject(out);
    return out;
  } finally {
    walk.ancestors.delete(node);
  }
}

type PointerRole = "schema" | "map" | "list" | "other";

/** `#/definitions/x` → `#/$defs/x` where that `definitions` was renamed; other refs unchanged. */
function rewriteRef(ref: string, walk: Walk): string {
  if (!ref.startsWith("#/") || !ref.includes("definitions")) return ref;
  const segments = ref.slice(2).split("/");
  let node: unknown = walk.root;
  let role = "schema" as PointerRole;
  const out: string[] = [];
  for (const raw of segments) {
    const segment = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    let next: unknown;
    let nextRole: PointerRole = "other";
    if (role === "schema" && isObject(node)) {
      next = node[segment];
      if (segment === "definitions" && walk.renamed.has(node)) {
        out.push("$defs");
        node = next;
        role = "map";
        continue;
      }
      nextRole = MAP_KEYWORDS.has(segment) ? "map" : LIST_KEYWORDS.has(segment) || (segment === "items" && Array.isArray(next)) ? "list" : ONE_SCHEMA_KEYWORDS.has(segment) ? "schema" : "other";
    } else if (role === "map" && isObject(node)) {
      next = node[segment];
      nextRole = "schema";
    } else if (role === "list" && Array.isArray(node)) {
      next = node[Number(segment)];
      nextRole = "schema";
    }
    out.push(raw);
    node = next;
    role = nextRole;
  }
  return `#/${out.join("/")}`;
}

/** A pattern registration would refuse is dropped and restated in the description. */
function fixPattern(node: Node, walk: Walk): Node {
  const pattern = node.pattern;
  if (typeof pattern !== "string") return node;
  let reason: string | undefined;
  if (pattern.length > SCHEMA_LIMITS.maxPatternLength) reason = "too long";
  else {
    const cost = patternCost(pattern);
    if (cost > SCHEMA_LIMITS.maxPatternCost || walk.patternCost + cost > SCHEMA_LIMITS.maxTotalPatternCost) reason = "too large";
    else {
      try {
        compileLinearPattern(pattern);
        walk.patternCost += cost;
      } catch {
        reason = "not supported by the linear-time regex engine";
      }
    }
  }
  if (reason === undefined) return node;
  const { pattern: _dropped, ...rest } = node;
  const shown = pattern.length > 200 ? `${pattern.slice(0, 200)}…` : pattern;
  const note = `Must match the regular expression ${JSON.stringify(shown)} (not checked before the call: ${reason}).`;
  rest.description = typeof rest.description === "string" && rest.description !== "" ? `${rest.description} ${note}` : note;
  return rest;
}

/** OpenAPI `nullable` from the server → a type list (JSON Schema); dropped where it means nothing. */
function fixNullable(node: Node): Node {
  if (!("nullable" in node)) return node;
  const { nullable, ...rest } = node;
  if (nullable !== true) return rest;
  if (typeof rest.type === "string") return withNull(rest, rest.type);
  if (Array.isArray(rest.type)) {
    if (!rest.type.includes("null")) rest.type = [...rest.type, "null"];
    if (Array.isArray(rest.enum) && !rest.enum.includes(null)) rest.enum = [...rest.enum, null];
    return rest;
  }
  if (Array.isArray(rest.anyOf) && !rest.anyOf.some(isNullSchema)) rest.anyOf = [...rest.anyOf, { type: "null" }];
  return rest;
}

/** `{anyOf: [X, {type: "null"}], ...annotations}` → `{...X, type: [X.type, "null"], ...annotations}` when that says the same. */
function collapseNullUnion(node: Node): Node {
  const union = node.anyOf;
  if (!Array.isArray(union) || union.length !== 2) return node;
  const nullIndex = union.findIndex(isNullSchema);
  if (nullIndex < 0 || isNullSchema(union[1 - nullIndex])) return node;
  const member = union[1 - nullIndex];
  if (!isObject(member) || typeof member.type !== "string" || member.type === "null" || "const" in member || "nullable" in member) return node;
  const { anyOf: _union, ...siblings } = node;
  for (const key of Object.keys(siblings)) {
    if (key in member && !ANNOTATIONS.has(key)) return node; // two constraints of one name: keep the union
  }
  return withNull({ ...member, ...siblings }, member.type);
}

function withNull(node: Node, type: string): Node {
  const out: Node = { type: [type, "null"] };
  for (const [key, value] of Object.entries(node)) if (key !== "type") setOwn(out, key, value);
  if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
  return out;
}

function isNullSchema(value: unknown): boolean {
  if (!isObject(value)) return false;
  if (value.type === "null" || value.const === null) return true;
  return Array.isArray(value.enum) && value.enum.length === 1 && value.enum[0] === null;
}

/** `type: object` where properties say so, `properties: {}` on objects, `required` pruned. */
function fixObject(node: Node): Node {
  let out = node;
  if (out.type === undefined && out.$ref === undefined && (isObject(out.properties) || Array.isArray(out.required))) {
    out = withTypeFirst({ ...out, type: "object" });
  }
  if (out.type === "object" && !isObject(out.properties)) out = { ...out, properties: {} };
  if ("required" in out) {
    const required = out.required;
    const { required: _old, ...rest } = out;
    if (!Array.isArray(required)) return rest;
    const properties = isObject(out.properties) ? out.properties : undefined;
    // Names that additionalProperties / patternProperties admit are legitimate without a `properties` entry.
    const openObject = (out.additionalProperties !== undefined && out.additionalProperties !== false) || isObject(out.patternProperties);
    const kept = [...new Set(required.filter((name): name is string => typeof name === "string"))].filter(
      (name) => openObject || (properties !== undefined && Object.prototype.hasOwnProperty.call(properties, name)),
    );
    if (kept.length === 0) return rest;
    return { ...rest, required: kept };
  }
  return out;
}

function withTypeFirst(node: Node): Node {
  const out: Node = { type: node.type };
  for (const [key, value] of Object.entries(node)) if (key !== "type") setOwn(out, key, value);
  return out;
}

/** Own data property, also for a name like `__proto__` (a property a server may well call that). */
function setOwn(target: Node, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
