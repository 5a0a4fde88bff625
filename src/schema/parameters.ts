import type { JsonSchema, ToolParameter } from "../registry/types.js";
import { ToolDefinitionError } from "../registry/errors.js";

const PARAMETER_TYPES = new Set(["string", "number", "integer", "boolean", "object", "array", "null"]);

/**
 * Turns the second design document's list of typed parameters into the JSON
 * Schema the model sees. A parameter is required unless it says otherwise or
 * carries a default, matching the document's "validates required parameters".
 */
export function parametersToJsonSchema(toolName: string, parameters: readonly ToolParameter[]): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [index, parameter] of parameters.entries()) {
    if (parameter === null || typeof parameter !== "object" || typeof parameter.name !== "string" || parameter.name === "") {
      throw new ToolDefinitionError(toolName, `parameter #${index} needs a non-empty string name`);
    }
    if (!PARAMETER_TYPES.has(parameter.type)) {
      throw new ToolDefinitionError(
        toolName,
        `parameter "${parameter.name}" has type ${JSON.stringify(parameter.type)}; expected one of ${[...PARAMETER_TYPES].join(", ")}`,
      );
    }
    if (parameter.name in properties) {
      throw new ToolDefinitionError(toolName, `parameter "${parameter.name}" is declared twice`);
    }
    const property: JsonSchema = { type: parameter.type };
    if (parameter.description !== undefined) property.description = parameter.description;
    if (parameter.enum !== undefined) property.enum = [...parameter.enum];
    if (parameter.default !== undefined) property.default = parameter.default;
    if (parameter.items !== undefined) property.items = parameter.items;
    if (parameter.properties !== undefined) property.properties = parameter.properties;
    properties[parameter.name] = property;
    if (parameter.required ?? parameter.default === undefined) required.push(parameter.name);
  }
  return { type: "object", properties, required };
}
