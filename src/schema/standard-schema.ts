import type { JsonSchema, StandardSchemaLike } from "../registry/types.js";
import { ToolDefinitionError } from "../registry/errors.js";
import { withoutSafeIntegerBounds } from "./safe-integer-bounds.js";

/** True for zod 4, valibot, arktype and any other Standard Schema implementation. */
export function isStandardSchema(value: unknown): value is StandardSchemaLike {
  if (value === null || (typeof value !== "object" && typeof value !== "function")) return false;
  const standard = (value as { "~standard"?: { validate?: unknown } })["~standard"];
  return typeof standard === "object" && standard !== null && typeof standard.validate === "function";
}

/**
 * The model-facing JSON Schema of a Standard Schema, through the Standard JSON
 * Schema extension (zod >= 4.2 implements it), so no schema library is a
 * dependency of ours.
 */
export function standardSchemaToJsonSchema(toolName: string, schema: StandardSchemaLike): JsonSchema {
  const jsonSchema = schema["~standard"].jsonSchema;
  if (jsonSchema === undefined || typeof jsonSchema.input !== "function") {
    throw new ToolDefinitionError(
      toolName,
      `its ${schema["~standard"].vendor} schema cannot produce JSON Schema (no "~standard.jsonSchema"); pass a JSON Schema instead or upgrade the library (zod >= 4.2)`,
    );
  }
  const produced = withoutSafeIntegerBounds(jsonSchema.input({ target: "draft-07" }));
  delete produced.$schema;
  if (produced.type !== "object") {
    throw new ToolDefinitionError(toolName, `its parameters schema must describe an object (got type ${JSON.stringify(produced.type)})`);
  }
  return produced;
}
