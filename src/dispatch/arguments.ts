import type { ToolResult } from "../registry/types.js";
import { fail } from "./result.js";

export type ParsedArguments = { ok: true; args: Record<string, unknown> } | { ok: false; result: ToolResult<never> };

/**
 * The model's arguments as an object. A JSON string is parsed (an empty one
 * means no arguments, as some providers send for parameterless tools);
 * anything that is not an object is rejected with a message the model can act on.
 */
export function parseArguments(toolName: string, raw: unknown): ParsedArguments {
  if (raw === undefined || raw === null) return { ok: true, args: {} };
  let value = raw;
  if (typeof raw === "string") {
    if (raw.trim() === "") return { ok: true, args: {} };
    try {
      value = JSON.parse(raw);
    } catch (thrown) {
      return { ok: false, result: fail(`Invalid JSON arguments for ${toolName}: ${(thrown as Error).message}`, "invalid_args") };
    }
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    const got = value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
    return { ok: false, result: fail(`Arguments for ${toolName} must be a JSON object, got ${got}`, "invalid_args") };
  }
  return { ok: true, args: value as Record<string, unknown> };
}
