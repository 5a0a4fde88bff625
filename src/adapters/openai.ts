/**
 * OpenAI Chat Completions `tools[]` entries. The schema is passed through
 * untouched apart from the object-at-the-top normalisation: without `strict`
 * OpenAI accepts any JSON Schema and treats unsupported keywords as hints.
 */
import type { FunctionSchema, OpenAIToolDefinition } from "../registry/types.js";
import { objectParameters } from "./parameters.js";

export function toOpenAI(schema: FunctionSchema): OpenAIToolDefinition {
  return {
    type: "function",
    function: { name: schema.name, description: schema.description, parameters: objectParameters(schema.parameters) },
  };
}
