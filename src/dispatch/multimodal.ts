/**
 * A tool result that carries media: text parts and base64 images or audio, in order. MCP tools
 * return them (screenshots, charts, generated speech); the same shape serves any tool.
 *
 * `invoke()` callers receive it as `result.data` and pass the parts to a model that takes images.
 * A caller that only takes strings (`run()`, `handleFunctionCall`, the agent loop) gets
 * `multimodalText`: the text parts, and a placeholder such as `[image: image/png, 5120 bytes]` for
 * each media part. Base64 is never put into text: 1 MB of it is 350,000 useless tokens.
 *
 * Kept apart from result.ts and from the MCP client so both can import it without a cycle.
 */

export interface MultimodalTextPart {
  type: "text";
  text: string;
}

export interface MultimodalMediaPart {
  type: "image" | "audio";
  /** Base64 of the bytes (no `data:` prefix). */
  data: string;
  /** e.g. `image/png`, `audio/wav`. */
  mimeType: string;
}

export type MultimodalPart = MultimodalTextPart | MultimodalMediaPart;

export interface MultimodalResult {
  type: "multimodal";
  parts: MultimodalPart[];
}

/**
 * True for a well-formed multimodal result: every part a text with a string `text`, or an image
 * or audio with string `data` and `mimeType`, and nothing that JSON could not write. A value that
 * only looks similar is ordinary data.
 */
export function isMultimodalResult(value: unknown): value is MultimodalResult {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const candidate = value as { type?: unknown; parts?: unknown };
  if (candidate.type !== "multimodal" || !Array.isArray(candidate.parts)) return false;
  return candidate.parts.every(isPart);
}

function isPart(part: unknown): boolean {
  if (part === null || typeof part !== "object" || Array.isArray(part)) return false;
  const p = part as Record<string, unknown>;
  if (p.type === "text") return typeof p.text === "string";
  return (p.type === "image" || p.type === "audio") && typeof p.data === "string" && typeof p.mimeType === "string";
}

/** Bytes encoded by a base64 string (whitespace ignored). */
export function base64ByteLength(data: string): number {
  let length = data.length;
  if (/\s/.test(data)) length = data.replace(/\s+/g, "").length;
  let padding = 0;
  if (data.endsWith("==")) padding = 2;
  else if (data.endsWith("=")) padding = 1;
  return Math.max(0, Math.floor((length * 3) / 4) - padding);
}

/** `[image: image/png, 5120 bytes]` */
export function mediaPlaceholder(part: MultimodalMediaPart): string {
  const mime = part.mimeType.replace(/[\r\n\]]/g, "").slice(0, 100);
  return `[${part.type}: ${mime}, ${base64ByteLength(part.data)} bytes]`;
}

/** The result as text for a caller that only takes strings: text parts, media as placeholders, one per line. */
export function multimodalText(result: MultimodalResult): string {
  return result.parts.map((part) => (part.type === "text" ? part.text : mediaPlaceholder(part))).join("\n");
}
