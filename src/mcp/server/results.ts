/**
 * A call's outcome as an MCP `CallToolResult`. The text is always the string the model would get
 * from `handleFunctionCall` (redacted, capped, errors as `{"error": ...}`), so an MCP client's model
 * sees what ours would. On top of it:
 * - a failure is `isError: true` with that same text (never a JSON-RPC error: the model must read it);
 * - a multimodal result's images and audio go out as MCP `image`/`audio` blocks in their order (the
 *   text parts as they are, unless rendering changed them: then the rendered text comes first);
 * - a success whose text is a JSON object also goes out as `structuredContent`, parsed from that
 *   rendered text and never from the raw data, so what redaction removed stays removed;
 * - for a tool with an `outputSchema` (which the list advertises) a success must be such an object and
 *   match the schema, as MCP requires and the SDK's client checks: one that does not is sent as an
 *   `isError` result with the text and what is wrong, rather than a result the client would throw away.
 */
import type { FunctionCallOutcome } from "../../dispatch/handle-function-call.js";
import { isMultimodalResult, multimodalText, type MultimodalPart } from "../../dispatch/multimodal.js";
import type { JsonSchema } from "../../registry/types.js";
import { compileJsonSchemaValidator, type ArgumentValidator } from "../../schema/validator.js";

type Block = { type: "text"; text: string } | { type: "image" | "audio"; data: string; mimeType: string };

export interface McpCallResult {
  content: Block[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

/** Longest text parsed for `structuredContent`; a bigger result is text only. */
const MAX_STRUCTURED_CHARS = 1_000_000;

export function toMcpResult(outcome: FunctionCallOutcome, outputSchema?: JsonSchema): McpCallResult {
  const text: Block = { type: "text", text: outcome.content };
  if (outcome.isError) return { content: [text], isError: true };
  if (outputSchema !== undefined) return checkedStructured(text, outputSchema);
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

/** Compiled output schemas, one per schema object (an entry's is frozen and lives as long as the entry). */
const outputValidators = new WeakMap<JsonSchema, ArgumentValidator>();

function checkedStructured(text: { type: "text"; text: string }, schema: JsonSchema): McpCallResult {
  const structured = structuredFrom(text.text);
  let problem: string | undefined;
  if (structured === undefined) {
    problem = "it is not a JSON object";
  } else {
    let validate = outputValidators.get(schema);
    if (validate === undefined) {
      validate = compileJsonSchemaValidator(schema);
      outputValidators.set(schema, validate);
    }
    // A JSON Schema validator answers synchronously (only Standard Schema ones may not).
    const issues = validate(structured);
    if (Array.isArray(issues) && issues.length > 0) problem = issues.map((i) => `${i.path === "" ? "(root)" : i.path} ${i.message}`).join("; ");
  }
  if (problem === undefined) return { content: [text], structuredContent: structured };
  return { content: [text, { type: "text", text: `The result does not match the tool's output schema: ${problem}.` }], isError: true };
}
