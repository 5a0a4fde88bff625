/**
 * What the export adapters consume: a tool's model-facing schema plus the two
 * registry labels the raw format carries. Kept apart from the registry's
 * `ToolEntry` so that exporting needs no live registry (the CLI can export
 * from a manifest).
 */
import type { FunctionSchema, JsonSchema } from "../registry/types.js";

export interface ExportableTool {
  schema: FunctionSchema;
  category: string;
  toolset: string;
}

/** A schema node as the converters see it: a plain JSON object. */
export type SchemaNode = JsonSchema;
