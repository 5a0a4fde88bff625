/**
 * Size limits on a tool's parameters schema, checked when the tool registers.
 * Schemas come from MCP servers and plugins, so they are untrusted: an enum of
 * 200,000 values took Ajv 164 s to compile, `anyOf` nested 20 deep over shared
 * branches exhausted the heap, a cyclic schema breaks every exporter. Each
 * limit leaves room for any real tool schema (OpenAI's strict mode, for one,
 * allows 5,000 properties, 10 levels of nesting and 1,000 enum values in all),
 * and a schema past one is refused with a `ToolDefinitionError` naming where.
 *
 * The walk treats the schema as the tree JSON would write: a branch shared by
 * two parents counts twice (that is what Ajv and the exporters do with it), and
 * the walk stops at the first limit, so a schema of exponential tree size costs
 * no more than the limit to refuse.
 */
import { ToolDefinitionError } from "../registry/errors.js";
import { compileLinearPattern } from "./linear-regexp.js";
import { patternCost } from "./pattern-cost.js";
import { isEcmaPattern, schemaKeywordProblem, SUBSCHEMA_KEYWORDS } from "./structure.js";

export const SCHEMA_LIMITS = Object.freeze({
  /** JSON nesting levels (objects and arrays); one level of schema is about two (`properties` → name). */
  maxDepth: 64,
  /** JSON values in all: objects, arrays, strings, numbers, booleans, nulls. */
  maxValues: 10_000,
  /** Characters of JSON, roughly (keys and strings; scalars count their digits). */
  maxChars: 1_000_000,
  /** Members of one `enum` (Ajv's compile time grows with the square of it). */
  maxEnumValues: 1_000,
  /** Characters of one pattern. */
  maxPatternLength: 2_000,
  /** Compile cost of one pattern (see pattern-cost.ts; about 11 µs of compiling each). */
  maxPatternCost: 5_000,
  /** Compile cost of all patterns of one schema together. */
  maxTotalPatternCost: 10_000,
});

/** Keywords whose values are data, not schemas: a `pattern` key inside them is not a pattern. */
const DATA_KEYWORDS = new Set(["enum", "const", "default", "examples", "example"]);

/** Keywords whose value maps names to schemas: its keys are names, even `enum` or `pattern`. */
const MAP_KEYWORDS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);

/** What a value is: a schema (or a list of them), a name → schema map, or data. */
type Role = "schema" | "map" | "data";

interface Pending {
  readonly value: unknown;
  readonly path: string;
  readonly depth: number;
  readonly role: Role;
  /** Reached through keywords that hold schemas (not the value of a keyword Ajv ignores): its keywords are checked. */
  readonly checked: boolean;
}

/**
 * Throws `ToolDefinitionError` when `schema` is cyclic, not JSON, or past a
 * limit, has a keyword Ajv would refuse (structure.ts), or has a pattern that
 * is invalid or that the linear-time engine cannot run. Compiles each
 * pattern once, which also warms the cache the validator uses.
 */
export function checkSchemaLimits(toolName: string, schema: unknown, options: { patterns?: boolean } = {}): void {
  const patterns = options.patterns ?? true;
  const refuse = (detail: string): never => {
    throw new ToolDefinitionError(toolName, detail);
  };
  const at = (path: string) => (path === "" ? "the parameters" : `parameters${path}`);
  const ancestors = new Set<object>();
  const pending: (Pending | { readonly leave: object })[] = [{ value: schema, path: "", depth: 0, role: "schema", checked: true }];
  let values = 0;
  let chars = 0;
  let patternTotal = 0;

  const checkPattern = (pattern: string, path: string): void => {
    if (pattern.length > SCHEMA_LIMITS.maxPatternLength) {
      refuse(`the pattern at ${at(path)} is ${pattern.length} characters long; the limit is ${SCHEMA_LIMITS.maxPatternLength}`);
    }
    const cost = patternCost(pattern);
    if (cost > SCHEMA_LIMITS.maxPatternCost) {
      refuse(`the pattern at ${at(path)} repeats too much (cost ${cost}, limit ${SCHEMA_LIMITS.maxPatternCost}); write smaller counted repetitions`);
    }
    patternTotal += cost;
    if (patternTotal > SCHEMA_LIMITS.maxTotalPatternCost) {
      refuse(`its patterns together are too large to compile (cost over ${SCHEMA_LIMITS.maxTotalPatternCost})`);
    }
    try {
      compileLinearPattern(pattern);
    } catch (thrown) {
      const reason = (thrown as Error).message.replace(/^error parsing regexp: /, "");
      if (!isEcmaPattern(pattern)) {
        refuse(`the pattern ${JSON.stringify(pattern.slice(0, 100))} at ${at(path)} is not a valid regular expression: ${reason}`);
      }
      refuse(
        `the pattern ${JSON.stringify(pattern.slice(0, 100))} at ${at(path)} cannot run on the linear-time regex engine ` +
          `(it has no backreferences or lookaround, and no repetition count over 1000): ${(thrown as Error).message}`,
      );
    }
  };

  while (pending.length > 0) {
    const task = pending.pop() as Pending | { leave: object };
    if ("leave" in task) {
      ancestors.delete(task.leave);
      continue;
    }
    const { value, path, depth, role, checked } = task;
    if (++values > SCHEMA_LIMITS.maxValues) refuse(`its schema has more than ${SCHEMA_LIMITS.maxValues} JSON values`);
    if (typeof value === "string") chars += value.length + 2;
    else if (typeof value === "bigint") refuse(`${at(path)} holds a BigInt, which has no JSON form`);
    else if (typeof value !== "object" || value === null) chars += 5;
    else {
      if (ancestors.has(value)) refuse(`its schema is cyclic at ${at(path)} (a schema must be JSON; use $ref for recursion)`);
      if (depth >= SCHEMA_LIMITS.maxDepth) refuse(`its schema nests more than ${SCHEMA_LIMITS.maxDepth} levels deep at ${at(path)}`);
      ancestors.add(value);
      pending.push({ leave: value });
      const isArray = Array.isArray(value);
      const record = value as Record<string, unknown>;
      if (!isArray && role === "schema") {
        const problem = checked ? schemaKeywordProblem(record) : undefined;
        if (problem !== undefined) refuse(`${at(`${path}${problem[0]}`)} ${problem[1]}`);
        if (Array.isArray(record.enum) && record.enum.length > SCHEMA_LIMITS.maxEnumValues) {
          refuse(`the enum at ${at(`${path}.enum`)} has ${record.enum.length} values; the limit is ${SCHEMA_LIMITS.maxEnumValues}`);
        }
        if (!patterns) {
          // A Standard Schema validates with its own library: its patterns are code the tool's author wrote, not data.
        } else if (typeof record.pattern === "string") checkPattern(record.pattern, `${path}.pattern`);
        const patternProperties = record.patternProperties;
        if (patterns && typeof patternProperties === "object" && patternProperties !== null && !Array.isArray(patternProperties)) {
          for (const key of Object.keys(patternProperties)) checkPattern(key, `${path}.patternProperties`);
        }
      }
      const keys = Object.keys(value);
      if (values + keys.length > SCHEMA_LIMITS.maxValues) refuse(`its schema has more than ${SCHEMA_LIMITS.maxValues} JSON values`);
      chars += 2;
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i] as string;
        if (!isArray) chars += key.length + 3;
        pending.push({
          value: record[key],
          path: isArray ? `${path}[${key}]` : `${path}.${key}`,
          depth: depth + 1,
          role: childRole(role, isArray, key),
          checked: checked && (role === "map" || (role === "schema" && (isArray || SUBSCHEMA_KEYWORDS.has(key)))),
        });
      }
    }
    if (chars > SCHEMA_LIMITS.maxChars) refuse(`its schema is larger than ${SCHEMA_LIMITS.maxChars} characters of JSON`);
  }
}

function childRole(parent: Role, isArray: boolean, key: string): Role {
  if (parent === "data") return "data";
  if (parent === "map" || isArray) return "schema";
  if (DATA_KEYWORDS.has(key)) return "data";
  return MAP_KEYWORDS.has(key) ? "map" : "schema";
}
