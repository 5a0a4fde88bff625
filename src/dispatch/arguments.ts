import type { ToolResult } from "../registry/types.js";
import { fail } from "./result.js";

/**
 * The model's arguments as an object. A JSON string is parsed (an empty one
 * means no arguments, as some providers send for parameterless tools);
 * anything that is not an object is rejected with a message the model can act on.
 */
export function parseArguments(toolName: string, raw: unknown): Record<string, unknown> | ToolResult<never> {
  if (raw === undefined || raw === null) return {};
  let value = raw;
  if (typeof raw === "string") {
    if (raw.trim() === "") return {};
    try {
      value = JSON.parse(raw);
    } catch (thrown) {
      return fail(`Invalid JSON arguments for ${toolName}: ${(thrown as Error).message}`, "invalid_args");
    }
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    const got = value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
    return fail(`Arguments for ${toolName} must be a JSON object, got ${got}`, "invalid_args");
  }
  return value as Record<string, unknown>;
}
