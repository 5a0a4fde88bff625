import type { JsonSchema } from "../registry/types.js";

/**
 * Models often quote scalars: `{"timeout": "30"}`, `{"background": "true"}`.
 * When a call fails validation, dispatch retries once with the top-level
 * string values of `number`, `integer` and `boolean` parameters converted
 * (the Python original's `coerce_tool_args`, applied to every tool). A call
 * that validates as sent is never touched.
 *
 * Deliberately narrower than Ajv's `coerceTypes`: only strings are converted,
 * only to a number, an integer or a boolean, only at the top level, and only
 * when the parameter does not also accept a string. A string that is not
 * exactly such a value ("abc", "30.5" for an integer, "0x10", "yes") stays a
 * string, and validation rejects it with its usual message.
 *
 * Returns the converted arguments, or `undefined` when nothing was converted.
 */
export function withScalarStringsCoerced(parameters: JsonSchema, args: Record<string, unknown>): Record<string, unknown> | undefined {
  const properties = parameters.properties;
  if (properties === null || typeof properties !== "object" || Array.isArray(properties)) return undefined;
  let coerced: Record<string, unknown> | undefined;
  for (const key of Object.keys(args)) {
    const value = args[key];
    if (typeof value !== "string" || !Object.hasOwn(properties, key)) continue;
    const types = declaredTypes((properties as Record<string, unknown>)[key]);
    if (types === undefined || types.has("string")) continue;
    const converted = convert(value, types);
    if (converted === undefined) continue;
    coerced ??= { ...args };
    coerced[key] = converted;
  }
  return coerced;
}

/** Longest numeric string converted: far more digits than any double holds. */
const MAX_NUMERIC_CHARS = 64;
/** Decimal notation only (no hex, octal, binary, `Infinity` or `_` separators), with an optional exponent. */
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

function convert(text: string, types: ReadonlySet<string>): number | boolean | undefined {
  const trimmed = text.trim();
  if (types.has("number") || types.has("integer")) {
    const number = parseDecimal(trimmed);
    if (number !== undefined) {
      if (types.has("number")) return number;
      // An integer parameter takes "30", "30.0" and "1e3", never "30.5"; beyond 2^53 the digits would silently change.
      if (Number.isSafeInteger(number)) return number;
    }
  }
  if (types.has("boolean")) {
    const lower = trimmed.toLowerCase();
    if (lower === "true") return true;
    if (lower === "false") return false;
  }
  return undefined;
}

/** The finite number a decimal string spells, or `undefined`. */
function parseDecimal(trimmed: string): number | undefined {
  if (trimmed.length === 0 || trimmed.length > MAX_NUMERIC_CHARS || !DECIMAL.test(trimmed)) return undefined;
  const number = Number(trimmed);
  return Number.isFinite(number) ? number : undefined;
}

/**
 * The JSON types a parameter schema admits, from `type` (a name or a list),
 * or from `anyOf`/`oneOf` when every branch names its type (zod's
 * `.nullable()` produces `anyOf: [{type: "integer"}, {type: "null"}]`).
 * `undefined` when the schema does not say plainly.
 */
function declaredTypes(schema: unknown): Set<string> | undefined {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return undefined;
  const { type, anyOf, oneOf } = schema as { type?: unknown; anyOf?: unknown; oneOf?: unknown };
  if (typeof type === "string") return new Set([type]);
  if (Array.isArray(type)) return type.every((t) => typeof t === "string") ? new Set(type as string[]) : undefined;
  const branches = Array.isArray(anyOf) ? anyOf : Array.isArray(oneOf) ? oneOf : undefined;
  if (branches === undefined || branches.length === 0) return undefined;
  const union = new Set<string>();
  for (const branch of branches) {
    const types = declaredTypes(branch);
    if (types === undefined) return undefined;
    for (const t of types) union.add(t);
  }
  return union;
}
