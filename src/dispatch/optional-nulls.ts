import type { JsonSchema } from "../registry/types.js";

/**
 * Models in OpenAI strict mode must send every parameter, and send `null` for
 * the ones they mean to leave out. When arguments fail validation, dispatch
 * retries without the top-level `null`s of optional parameters; this returns
 * those arguments, or `undefined` when there is nothing to drop.
 */
export function withoutOptionalNulls(parameters: JsonSchema, args: Record<string, unknown>): Record<string, unknown> | undefined {
  const required = Array.isArray(parameters.required) ? (parameters.required as unknown[]) : [];
  let stripped: Record<string, unknown> | undefined;
  for (const key of Object.keys(args)) {
    if (args[key] !== null || required.includes(key)) continue;
    stripped ??= { ...args };
    delete stripped[key];
  }
  return stripped;
}
