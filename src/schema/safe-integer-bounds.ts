import type { JsonSchema } from "../registry/types.js";

/**
 * zod's `.int()` (and `z.int()`, `.safe()`) writes `minimum: -9007199254740991,
 * maximum: 9007199254740991` into the JSON Schema it produces: bounds that
 * only restate JavaScript's safe-integer range. They say nothing to a model
 * and cost tokens on every request, so they are dropped here; any other bound
 * (`.min(0)`, `z.int32()`, a `.max(10)`) is the user's and stays.
 */
export function withoutSafeIntegerBounds(schema: JsonSchema): JsonSchema {
  return strip(schema, 0) as JsonSchema;
}

/** Keywords whose values are data, not schemas: a `minimum` key inside them is never a bound. */
const DATA_KEYWORDS = new Set(["default", "const", "enum", "examples"]);
/** Keywords whose values map names to schemas (a property may be called "default" or "minimum"). */
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "definitions", "$defs", "dependentSchemas"]);
/** zod's output is finite (recursion goes through `$ref`); this only keeps a pathological one off the call-stack limit. */
const MAX_DEPTH = 500;

/** A schema, or an array of schemas (`anyOf`, `prefixItems`, ...). */
function strip(node: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH || node === null || typeof node !== "object") return node;
  if (Array.isArray(node)) return node.map((item) => strip(item, depth + 1));
  // Entries, not assignments: a key "__proto__" must stay a key.
  const out: [string, unknown][] = [];
  for (const [key, value] of Object.entries(node)) {
    if (key === "minimum" && value === -Number.MAX_SAFE_INTEGER) continue;
    if (key === "maximum" && value === Number.MAX_SAFE_INTEGER) continue;
    if (DATA_KEYWORDS.has(key)) out.push([key, value]);
    else if (SCHEMA_MAPS.has(key) && value !== null && typeof value === "object" && !Array.isArray(value)) {
      out.push([key, Object.fromEntries(Object.entries(value).map(([name, schema]) => [name, strip(schema, depth + 1)]))]);
    } else out.push([key, strip(value, depth + 1)]);
  }
  return Object.fromEntries(out);
}
