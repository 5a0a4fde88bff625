/**
 * Anthropic Messages API `tools[]` entries. Claude takes ordinary JSON Schema
 * (including `$ref`/`$defs`), so the only requirement enforced here is the
 * documented one: `input_schema` is an object schema.
 */
import type { FunctionSchema, JsonSchema } from "../registry/types.js";
import { objectParameters } from "./parameters.js";

export interface AnthropicToolDefinition {
  name: string;
  description: string;
  input_schema: JsonSchema & { type: "object" };
}

export function toAnthropic(schema: FunctionSchema): AnthropicToolDefinition {
  const inputSchema = objectParameters(schema.parameters);
  return {
    name: schema.name,
    description: schema.description,
    input_schema: { ...inputSchema, type: "object" },
  };
}
