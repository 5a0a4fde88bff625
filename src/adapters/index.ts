/**
 * Provider export: one registry, many wire formats. Each format lives in its
 * own module; this one only names them and dispatches, so the CLI can take a
 * format straight from the command line.
 */
import type { ExportableTool } from "./types.js";
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
export function exportTools(tools: readonly ExportableTool[], format: ExportFormat): unknown[] {
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
