/**
 * An MCP `CallToolResult` as a mibyan `ToolResult` (spec 1.1 "Result conversion").
 *
 * What the model sees, by what the server sent:
 * - text blocks only → the texts joined by newlines, as a plain string: rendered verbatim, as a
 *   built-in tool's string result is. hermes wraps it as `{"result": "…"}`; the wrapper costs tokens
 *   and escapes every newline and quote in the text, and says nothing the model needs.
 * - text and `structuredContent` → `{"result": text, "structuredContent": sc}`: both, since a server
 *   may put different things in each (hermes #5874 / #7043; a later hermes drops sc, #115430).
 * - `structuredContent` only → the structured value itself (rendered as JSON).
 * - images / audio → a `MultimodalResult` (src/dispatch/multimodal.ts): `invoke()` callers get the
 *   parts, string callers get the text and `[image: image/png, N bytes]` placeholders. Nothing is
 *   written to disk (hermes caches to files and hands out `MEDIA:` paths).
 * - `resource_link` → a line naming the server's `read_resource` tool to fetch it.
 * - an embedded text resource → its text; an embedded blob → a placeholder with size and type.
 * - `isError` → a failed result (kind `failed`) with the text, secrets redacted.
 *
 * The result comes from another program, so it is checked as it is read: huge base64, unknown block
 * types, non-string text and missing fields never throw. A block that cannot be used is dropped and a
 * note says so in the text, so the model knows something was left out.
 */
import type { ToolResult } from "../../registry/types.js";
import { redactTextOrJson } from "../../redaction/json.js";
import { base64ByteLength, type MultimodalPart, type MultimodalResult } from "../../dispatch/multimodal.js";

export interface ConvertCallToolResultContext {
  /** The server's name as configured. */
  server: string;
  /** The tool's raw MCP name. */
  tool: string;
  /** Registry name of the server's `read_resource` utility, when registered; resource links name it. */
  readResourceTool?: string;
}

/** Longest base64 one image or audio block may have (about 15 MB decoded); longer is replaced by a placeholder. */
export const MAX_MEDIA_BASE64_CHARS = 20 * 1024 * 1024;
/** Base64 kept across all media blocks of one result. */
export const MAX_TOTAL_MEDIA_BASE64_CHARS = 50 * 1024 * 1024;
/** Longest text kept from one text block or embedded resource (the registry truncates further for the model). */
export const MAX_TEXT_BLOCK_CHARS = 10 * 1024 * 1024;
/** Blocks read from one result; the rest are counted and dropped. */
export const MAX_CONTENT_BLOCKS = 1_000;

const BASE64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;

type Block = Record<string, unknown>;

const isRecord = (value: unknown): value is Block => value !== null && typeof value === "object" && !Array.isArray(value);

/** The `ToolResult` for an MCP tool call's result (see the module comment). Never throws. */
export function convertCallToolResult(result: unknown, context: ConvertCallToolResultContext): ToolResult {
  const metadata = { mcp: { server: context.server, tool: context.tool } };
  if (!isRecord(result)) {
    return failure(`MCP server '${context.server}' returned a malformed result for tool '${context.tool}' (${describe(result)})`, metadata);
  }
  // Protocol 2024-10-07 servers answer `{toolResult}` instead of content.
  if (result.content === undefined && "toolResult" in result) {
    return { success: true, data: jsonSafe(result.toolResult) ?? "(the tool returned no content)", metadata };
  }

  const reader = new ContentReader(context);
  const content = Array.isArray(result.content) ? result.content : [];
  if (result.content !== undefined && !Array.isArray(result.content)) reader.note(`content was ${describe(result.content)}, not a list`);
  content.slice(0, MAX_CONTENT_BLOCKS).forEach((block) => reader.read(block));
  if (content.length > MAX_CONTENT_BLOCKS) reader.note(`${content.length - MAX_CONTENT_BLOCKS} content blocks past the first ${MAX_CONTENT_BLOCKS} dropped`);
  const parts = reader.finish();
  const text = parts.filter((p): p is { type: "text"; text: string } => p.type === "text").map((p) => p.text).join("\n");
  const structured = "structuredContent" in result && result.structuredContent !== undefined ? jsonSafe(result.structuredContent) : undefined;

  if (result.isError === true) {
    const message = text !== "" ? text : structured !== undefined ? safeStringify(structured) : "MCP tool returned an error";
    return failure(redactTextOrJson(message), metadata);
  }
  if (parts.some((p) => p.type !== "text")) {
    const multimodal: MultimodalResult = { type: "multimodal", parts };
    if (structured !== undefined) multimodal.parts.push({ type: "text", text: safeStringify({ structuredContent: structured }) });
    return { success: true, data: multimodal, metadata };
  }
  if (structured !== undefined) {
    return { success: true, data: text === "" ? structured : { result: text, structuredContent: structured }, metadata };
  }
  return { success: true, data: text === "" && parts.length === 0 ? "(the tool returned no content)" : text, metadata };
}

function failure(message: string, metadata: Record<string, unknown>): ToolResult {
  return { success: false, error: { kind: "failed", message }, metadata };
}

/** Reads content blocks into parts, keeping order, collecting notes about what it dropped. */
class ContentReader {
  private readonly parts: MultimodalPart[] = [];
  private readonly notes: string[] = [];
  private mediaChars = 0;

  constructor(private readonly context: ConvertCallToolResultContext) {}

  note(text: string): void {
    if (this.notes.length < 20) this.notes.push(text);
  }

  private text(text: string): void {
    this.parts.push({ type: "text", text: text.length > MAX_TEXT_BLOCK_CHARS ? `${text.slice(0, MAX_TEXT_BLOCK_CHARS)}\n[… ${text.length - MAX_TEXT_BLOCK_CHARS} characters dropped]` : text });
  }

  read(block: unknown): void {
    if (!isRecord(block)) return this.note(`a content block was ${describe(block)}`);
    switch (block.type) {
      case "text":
        return this.readText(block);
      case "image":
      case "audio":
        return this.readMedia(block, block.type);
      case "resource_link":
        return this.readLink(block);
      case "resource":
        return this.readResource(block.resource);
      default:
        return this.note(`a content block of unsupported type ${describe(block.type)} was dropped`);
    }
  }

  private readText(block: Block): void {
    const value = block.text;
    if (typeof value === "string") return this.text(value);
    if (typeof value === "number" || typeof value === "boolean") return this.text(String(value));
    const json = value === undefined ? undefined : safeStringify(value);
    if (json !== undefined && json !== "") return this.text(json);
    this.note("a text block without text was dropped");
  }

  private readMedia(block: Block, type: "image" | "audio"): void {
    const { data, mimeType } = block;
    const mime = typeof mimeType === "string" && mimeType.trim() !== "" ? clip(mimeType, 100) : `${type}/unknown`;
    if (typeof data !== "string" || data === "") return this.note(`an ${type} block (${mime}) without data was dropped`);
    if (data.length > MAX_MEDIA_BASE64_CHARS || this.mediaChars + data.length > MAX_TOTAL_MEDIA_BASE64_CHARS) {
      return this.text(`[${type}: ${mime}, ${base64ByteLength(data)} bytes — omitted, over the ${MAX_MEDIA_BASE64_CHARS / 1024 / 1024} MiB limit]`);
    }
    if (!BASE64.test(data)) return this.note(`an ${type} block (${mime}) whose data is not base64 was dropped`);
    this.mediaChars += data.length;
    this.parts.push({ type, data, mimeType: mime });
  }

  private readLink(block: Block): void {
    const uri = typeof block.uri === "string" ? block.uri : undefined;
    if (uri === undefined) return this.note("a resource link without a uri was dropped");
    const fields = [`uri=${clip(uri, 2_000)}`];
    if (typeof block.name === "string") fields.push(`name=${clip(block.name, 200)}`);
    if (typeof block.mimeType === "string") fields.push(`mimeType=${clip(block.mimeType, 100)}`);
    if (typeof block.size === "number" && Number.isFinite(block.size)) fields.push(`size=${block.size}`);
    const hint = this.context.readResourceTool !== undefined ? ` — fetch it with ${this.context.readResourceTool}` : "";
    this.text(`[MCP resource link: ${fields.join(", ")}${hint}]`);
  }

  private readResource(resource: unknown): void {
    if (!isRecord(resource)) return this.note("an embedded resource without contents was dropped");
    if (typeof resource.text === "string") return this.text(resource.text);
    const uri = typeof resource.uri === "string" ? clip(resource.uri, 2_000) : "(no uri)";
    const mime = typeof resource.mimeType === "string" ? clip(resource.mimeType, 100) : "application/octet-stream";
    if (typeof resource.blob === "string") {
      const hint = this.context.readResourceTool !== undefined ? ` — read it with ${this.context.readResourceTool}` : "";
      return this.text(`[MCP embedded resource ${uri}: ${mime}, ${base64ByteLength(resource.blob)} bytes of binary data, not shown${hint}]`);
    }
    this.note(`the embedded resource ${uri} had neither text nor blob and was dropped`);
  }

  /** The parts, with one closing text part listing what was dropped. */
  finish(): MultimodalPart[] {
    if (this.notes.length > 0) this.parts.push({ type: "text", text: `[mibyan: ${this.notes.join("; ")}]` });
    return this.parts;
  }
}

function clip(text: string, max: number): string {
  const flat = text.replace(/[\r\n]+/g, " ");
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "string") return JSON.stringify(clip(value, 40));
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return "";
  }
}

/** `value` when JSON can write it (it came from JSON, so it can unless a caller built it), else its text. */
function jsonSafe(value: unknown): unknown {
  if (value === undefined) return undefined;
  try {
    return JSON.stringify(value) === undefined ? undefined : value;
  } catch {
    return "[structured content that cannot be written as JSON]";
  }
}
