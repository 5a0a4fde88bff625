/**
 * The provider-neutral export (the second design document's
 * `export_schemas()`): the schema exactly as registered, plus the registry
 * labels, for callers that do their own conversion or just want to inspect.
 */
import type { JsonSchema } from "../registry/types.js";
import type { ExportableTool } from "./types.js";
import { cloneJson, isPlainObject } from "./clone.js";

export interface RawToolSchema {
  name: string;
  description: string;
  category: string;
  toolset: string;
  parameters: JsonSchema;
}

export function toRaw(tool: ExportableTool): RawToolSchema {
  const { schema } = tool;
  return {
    name: schema.name,
    description: schema.description,
    category: tool.category,
    toolset: tool.toolset,
    // Raw means raw: no object normalisation, only a detached JSON copy.
    parameters: isPlainObject(schema.parameters) ? cloneJson(schema.parameters) : {},
  };
}
