/**
 * Cheap structural checks of a JSON Schema's keywords, run by the registration
 * walk in limits.ts on every object in a schema position. They catch what
 * makes Ajv refuse to compile the schema ("schema is invalid") on the first
 * call, so that a tool with such a schema is refused when it registers,
 * naming the place, instead of being offered to the model and failing every
 * call. Ajv itself is not loaded here: listing tools must stay fast (it loads
 * on the first call). Only the keywords that matter are checked; anything
 * else a schema says is left to Ajv, which ignores unknown keywords.
 */

const JSON_TYPES = new Set(["string", "number", "integer", "boolean", "object", "array", "null"]);
const TYPE_LIST = [...JSON_TYPES].join(", ");

/** Keywords whose value is one schema (an object or a boolean). */
const ONE_SCHEMA = ["additionalProperties", "additionalItems", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties"];

/** Keywords whose value is a non-empty list of schemas. */
const SCHEMA_LISTS = ["allOf", "anyOf", "oneOf", "prefixItems"];

/** Keywords whose value maps names to schemas. */
const SCHEMA_MAPS = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];

/** Keywords that take any finite number. */
const NUMBERS = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"];

/** Keywords that take a non-negative integer. */
const COUNTS = ["minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains"];

/**
 * The keywords whose values the walk treats as schemas again (and checks):
 * a value under any other keyword is something Ajv ignores, or data.
 */
export const SUBSCHEMA_KEYWORDS: ReadonlySet<string> = new Set([...ONE_SCHEMA, ...SCHEMA_LISTS, ...SCHEMA_MAPS, "items"]);

const isSchema = (value: unknown): boolean => typeof value === "boolean" || (typeof value === "object" && value !== null && !Array.isArray(value));

const show = (value: unknown): string => {
  if (Array.isArray(value)) return "an array";
  if (value === null) return "null";
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === "object") return "an object";
  return typeof value === "number" || typeof value === "boolean" ? String(value) : `a ${typeof value}`;
};

/** What each checked keyword's value must be. */
type Rule = "type" | "required" | "map" | "items" | "schema" | "list" | "enum" | "number" | "count" | "multipleOf" | "pattern";

const RULES = new Map<string, Rule>([
  ["type", "type"],
  ["required", "required"],
  ["items", "items"],
  ["enum", "enum"],
  ["multipleOf", "multipleOf"],
  ["pattern", "pattern"],
  ...SCHEMA_MAPS.map((k) => [k, "map"] as const),
  ...ONE_SCHEMA.map((k) => [k, "schema"] as const),
  ...SCHEMA_LISTS.map((k) => [k, "list"] as const),
  ...NUMBERS.map((k) => [k, "number"] as const),
  ...COUNTS.map((k) => [k, "count"] as const),
]);

const MUST_BE_SCHEMA = "must be a schema (an object or a boolean), got ";

/**
 * What is wrong with one schema object's own keywords, as `[keyword path, problem]`
 * (the path relative to the object, `.type` or `.properties.a`), or `undefined`.
 * Subschemas are not entered: the walk calls this again for each of them.
 * One pass over the keys the object has (registration cost grows with the schema, not the rule list).
 */
export function schemaKeywordProblem(schema: Readonly<Record<string, unknown>>): [string, string] | undefined {
  for (const keyword in schema) {
    const rule = RULES.get(keyword);
    if (rule === undefined || !Object.hasOwn(schema, keyword)) continue;
    const value = schema[keyword];
    if (value === undefined) continue;
    const problem = keywordProblem(rule, value);
    if (problem !== undefined) return [`.${keyword}${problem[0]}`, problem[1]];
  }
  return undefined;
}

function keywordProblem(rule: Rule, value: unknown): [string, string] | undefined {
  switch (rule) {
    case "type": {
      const types = Array.isArray(value) ? value : [value];
      const bad = types.find((t) => typeof t !== "string" || !JSON_TYPES.has(t));
      if (bad !== undefined || types.length === 0) return ["", `must be one of the JSON types (${TYPE_LIST}) or a list of them, got ${show(bad ?? value)}`];
      return undefined;
    }
    case "required":
      return Array.isArray(value) && value.every((name) => typeof name === "string") ? undefined : ["", `must be an array of property names (strings), got ${show(value)}`];
    case "map": {
      if (typeof value !== "object" || value === null || Array.isArray(value)) return ["", `must be an object of schemas, got ${show(value)}`];
      const map = value as Record<string, unknown>;
      for (const name in map) {
        if (Object.hasOwn(map, name) && !isSchema(map[name])) return [`.${name}`, `${MUST_BE_SCHEMA}${show(map[name])}`];
      }
      return undefined;
    }
    case "items":
      return isSchema(value) || (Array.isArray(value) && value.every(isSchema)) ? undefined : ["", `${MUST_BE_SCHEMA}${show(value)}`];
    case "schema":
      return isSchema(value) ? undefined : ["", `${MUST_BE_SCHEMA}${show(value)}`];
    case "list": {
      if (!Array.isArray(value) || value.length === 0) return ["", `must be a non-empty array of schemas, got ${show(value)}`];
      const index = value.findIndex((item) => !isSchema(item));
      return index < 0 ? undefined : [`[${index}]`, `${MUST_BE_SCHEMA}${show(value[index])}`];
    }
    case "enum":
      return Array.isArray(value) ? undefined : ["", `must be an array of the allowed values, got ${show(value)}`];
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? undefined : ["", `must be a number, got ${show(value)}`];
    case "count":
      return Number.isInteger(value) && (value as number) >= 0 ? undefined : ["", `must be a non-negative integer, got ${show(value)}`];
    case "multipleOf":
      return typeof value === "number" && Number.isFinite(value) && value > 0 ? undefined : ["", `must be a number greater than 0, got ${show(value)}`];
    case "pattern":
      return typeof value === "string" ? undefined : ["", `must be a string, got ${show(value)}`];
  }
}

/** Whether `pattern` is an ECMA-262 regular expression at all (with or without the `u` flag Ajv uses). */
export function isEcmaPattern(pattern: string): boolean {
  for (const flags of ["u", ""]) {
    try {
      new RegExp(pattern, flags);
      return true;
    } catch {
      // try the other flags
    }
  }
  return false;
}
