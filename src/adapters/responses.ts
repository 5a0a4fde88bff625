/**
 * OpenAI Responses API `tools[]` entries: the function fields sit at the top
 * level instead of under `function`. `strict: false` is spelled out because
 * the Responses API, unlike Chat Completions, normalises a schema into strict
 * mode when `strict` is omitted, which would silently make optional
 * parameters mandatory. Use the "strict" format for a schema prepared for it.
 */
import type { FunctionSchema, JsonSchema } from "../registry/types.js";
import { objectParameters } from "./parameters.js";

export interface ResponsesToolDefinition {
  type: "function";
  name: string;
  description: string;
  parameters: JsonSchema;
  strict: false;
}

export function toResponses(schema: FunctionSchema): ResponsesToolDefinition {
  return {
    type: "function",
    name: schema.name,
    description: schema.description,
    parameters: objectParameters(schema.parameters),
    strict: false,
  };
}
