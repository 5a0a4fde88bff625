/**
 * Every adapter hands its output to code we do not control (SDKs, the CLI's
 * JSON printer, user code that patches definitions). A JSON round trip both
 * detaches the output from the registry's own schema objects and guarantees
 * the result is JSON-serialisable, which `structuredClone` would not
 * (it keeps `undefined`, Dates, Maps...).
 */
export function cloneJson<T>(value: T): T {
  if (value === undefined) return value;
  return JSON.parse(JSON.stringify(value)) as T;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
