import type { ToolResult } from "../registry/types.js";
import { fail } from "./result.js";

/**
 * The longest arguments string parsed, in characters. A model's whole output
 * is far shorter (128k tokens is about 500,000 characters); a longer string
 * can only be an attack on the parser's time and memory.
 */
export const MAX_ARGUMENT_CHARS = 2_000_000;

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
    if (raw.length > MAX_ARGUMENT_CHARS) {
      return {
        ok: false,
        result: fail(`Arguments for ${toolName} are ${raw.length} characters of JSON; the limit is ${MAX_ARGUMENT_CHARS}`, "invalid_args"),
      };
    }
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
