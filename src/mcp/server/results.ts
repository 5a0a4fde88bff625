/**
 * A call's outcome as an MCP `CallToolResult`. The text is always the string the model would get
 * from `handleFunctionCall` (redacted, capped, errors as `{"error": ...}`), so an MCP client's model
 * sees what ours would. On top of it:
 * - a failure is `isError: true` with that same text (never a JSON-RPC error: the model must read it);
 * - a multimodal result's images and audio go out as MCP `image`/`audio` blocks in their order (the
 *   text parts as they are, unless rendering changed them: then the rendered text comes first);
 * - a success whose text is a JSON object also goes out as `structuredContent`, parsed from that
 *   rendered text and never from the raw data, so what redaction removed stays removed.
 */
import type { FunctionCallOutcome } from "../../dispatch/handle-function-call.js";
import { isMultimodalResult, multimodalText, type MultimodalPart } from "../../dispatch/multimodal.js";

type Block = { type: "text"; text: string } | { type: "image" | "audio"; data: string; mimeType: string };

export interface McpCallResult {
  content: Block[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

/** Longest text parsed for `structuredContent`; a bigger result is text only. */
const MAX_STRUCTURED_CHARS = 1_000_000;

export function toMcpResult(outcome: FunctionCallOutcome): McpCallResult {
  const text: Block = { type: "text", text: outcome.content };
  if (outcome.isError) return { content: [text], isError: true };
  const data = outcome.result.data;
  if (isMultimodalResult(data)) {
    const media = data.parts.filter((p): p is Extract<MultimodalPart, { data: string }> => p.type !== "text");
    // Rendering redacted or cut the text: send the rendered text, then the media.
    if (outcome.content !== multimodalText(data)) return { content: [text, ...media.map(mediaBlock)] };
    return { content: data.parts.map((p) => (p.type === "text" ? { type: "text", text: p.text } : mediaBlock(p))) };
  }
  const result: McpCallResult = { content: [text] };
  const structured = structuredFrom(outcome.content);
  if (structured !== undefined) result.structuredContent = structured;
  return result;
}

function mediaBlock(part: { type: "image" | "audio"; data: string; mimeType: string }): Block {
  return { type: part.type, data: part.data, mimeType: part.mimeType };
}

function structuredFrom(text: string): Record<string, unknown> | undefined {
  if (text.length > MAX_STRUCTURED_CHARS || text.charCodeAt(0) !== 123 /* { */) return undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
