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

/**
 * What is wrong with one schema object's own keywords, as `[keyword path, problem]`
 * (the path relative to the object, `.type` or `.properties.a`), or `undefined`.
 * Subschemas are not entered: the walk calls this again for each of them.
 */
export function schemaKeywordProblem(schema: Readonly<Record<string, unknown>>): [string, string] | undefined {
  const type = schema.type;
  if (type !== undefined) {
    const types = Array.isArray(type) ? type : [type];
    const bad = types.find((t) => typeof t !== "string" || !JSON_TYPES.has(t));
    if (bad !== undefined || (Array.isArray(type) && type.length === 0)) {
      return [".type", `must be one of the JSON types (${TYPE_LIST}) or a list of them, got ${show(bad ?? type)}`];
    }
  }
  const required = schema.required;
  if (required !== undefined && !(Array.isArray(required) && required.every((name) => typeof name === "string"))) {
    return [".required", `must be an array of property names (strings), got ${show(required)}`];
  }
  for (const keyword of SCHEMA_MAPS) {
    const map = schema[keyword];
    if (map === undefined) continue;
    if (typeof map !== "object" || map === null || Array.isArray(map)) return [`.${keyword}`, `must be an object of schemas, got ${show(map)}`];
    for (const [name, value] of Object.entries(map)) {
      if (!isSchema(value)) return [`.${keyword}.${name}`, `must be a schema (an object or a boolean), got ${show(value)}`];
    }
  }
  const items = schema.items;
  if (items !== undefined && !isSchema(items) && !(Array.isArray(items) && items.every(isSchema))) {
    return [".items", `must be a schema (an object or a boolean), got ${show(items)}`];
  }
  for (const keyword of ONE_SCHEMA) {
    const value = schema[keyword];
    if (value !== undefined && !isSchema(value)) return [`.${keyword}`, `must be a schema (an object or a boolean), got ${show(value)}`];
  }
  for (const keyword of SCHEMA_LISTS) {
    const value = schema[keyword];
    if (value === undefined) continue;
    if (!Array.isArray(value) || value.length === 0) return [`.${keyword}`, `must be a non-empty array of schemas, got ${show(value)}`];
    const index = value.findIndex((item) => !isSchema(item));
    if (index >= 0) return [`.${keyword}[${index}]`, `must be a schema (an object or a boolean), got ${show(value[index])}`];
  }
  if (schema.enum !== undefined && !Array.isArray(schema.enum)) return [".enum", `must be an array of the allowed values, got ${show(schema.enum)}`];
  for (const keyword of NUMBERS) {
    const value = schema[keyword];
    if (value !== undefined && !(typeof value === "number" && Number.isFinite(value))) return [`.${keyword}`, `must be a number, got ${show(value)}`];
  }
  for (const keyword of COUNTS) {
    const value = schema[keyword];
    if (value !== undefined && !(Number.isInteger(value) && (value as number) >= 0)) {
      return [`.${keyword}`, `must be a non-negative integer, got ${show(value)}`];
    }
  }
  const multipleOf = schema.multipleOf;
  if (multipleOf !== undefined && !(typeof multipleOf === "number" && Number.isFinite(multipleOf) && multipleOf > 0)) {
    return [".multipleOf", `must be a number greater than 0, got ${show(multipleOf)}`];
  }
  if (schema.pattern !== undefined && typeof schema.pattern !== "string") return [".pattern", `must be a string, got ${show(schema.pattern)}`];
  return undefined;
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
