/**
 * Provider export: one registry, many wire formats. Each format lives in its
 * own module; this one only names them and dispatches, so the CLI can take a
 * format straight from the command line.
 */
import type { ExportableTool } from "./types.js";
import type { OpenAIToolDefinition } from "../registry/types.js";
import type { ResponsesToolDefinition } from "./responses.js";
import type { AnthropicToolDefinition } from "./anthropic.js";
import type { GeminiFunctionDeclaration } from "./gemini.js";
import type { OpenAIStrictToolDefinition } from "./strict.js";
import type { RawToolSchema } from "./raw.js";
import { toOpenAI } from "./openai.js";
import { toResponses } from "./responses.js";
import { toAnthropic } from "./anthropic.js";
import { toGemini } from "./gemini.js";
import { toOpenAIStrict } from "./strict.js";
import { toRaw } from "./raw.js";

export type { ExportableTool } from "./types.js";
export type { ResponsesToolDefinition } from "./responses.js";
export type { AnthropicToolDefinition } from "./anthropic.js";
export type { GeminiFunctionDeclaration } from "./gemini.js";
export type { OpenAIStrictToolDefinition } from "./strict.js";
export type { RawToolSchema } from "./raw.js";
export { toOpenAI, toResponses, toAnthropic, toGemini, toOpenAIStrict, toRaw };

export type ExportFormat = "openai" | "responses" | "anthropic" | "gemini" | "strict" | "raw";

/**
 * What one tool becomes in each format, so `exportTools(tools, "anthropic")` and
 * `getToolDefinitions({ format: "anthropic" })` are typed for the SDK the caller passes them to.
 * A format only known at run time (`ExportFormat`) gives the union.
 */
export interface ExportFormatDefinitions {
  openai: OpenAIToolDefinition;
  responses: ResponsesToolDefinition;
  anthropic: AnthropicToolDefinition;
  gemini: GeminiFunctionDeclaration;
  strict: OpenAIStrictToolDefinition;
  raw: RawToolSchema;
}

/** One exported tool definition in `format`. */
export type ToolDefinitionFor<F extends ExportFormat> = ExportFormatDefinitions[F];

export const EXPORT_FORMATS: readonly ExportFormat[] = Object.freeze([
  "openai",
  "responses",
  "anthropic",
  "gemini",
  "strict",
  "raw",
] as const);

export function isExportFormat(value: unknown): value is ExportFormat {
  return typeof value === "string" && (EXPORT_FORMATS as readonly string[]).includes(value);
}

/** Converts every tool to `format`. Throws a `TypeError` for a format name it does not know (the CLI passes user input). */
export function exportTools<F extends ExportFormat>(tools: readonly ExportableTool[], format: F): ToolDefinitionFor<F>[];
export function exportTools(tools: readonly ExportableTool[], format: ExportFormat): ToolDefinitionFor<ExportFormat>[] {
  switch (format) {
    case "openai":
      return tools.map((t) => toOpenAI(t.schema));
    case "responses":
      return tools.map((t) => toResponses(t.schema));
    case "anthropic":
      return tools.map((t) => toAnthropic(t.schema));
    case "gemini":
      return tools.map((t) => toGemini(t.schema));
    case "strict":
      return tools.map((t) => toOpenAIStrict(t.schema));
    case "raw":
      return tools.map((t) => toRaw(t));
    default:
      throw new TypeError(
        `Unknown export format ${JSON.stringify(format as unknown)}; expected one of: ${EXPORT_FORMATS.join(", ")}`,
      );
  }
}
