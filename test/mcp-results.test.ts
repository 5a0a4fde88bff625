// MCP tool results become mibyan results (spec 1.1 "Result conversion", 1.5 item 7). The results come
// from a real SDK server over the MCP protocol (in-memory transport), are converted, and are then
// rendered by the registry: string callers get text with media placeholders, invoke() callers get parts.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { isMultimodalResult, multimodalText, type MultimodalResult } from "../src/dispatch/multimodal.js";
import { convertCallToolResult, MAX_MEDIA_BASE64_CHARS } from "../src/mcp/client/results.js";
import { ToolRegistry } from "../src/registry/tool-registry.js";
import type { ToolResult } from "../src/registry/types.js";
import { createMemoryLogger } from "../src/util/logger.js";

// A real 1x1 PNG.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const PNG_BYTES = Buffer.from(PNG, "base64").length;

const canned: Record<string, CallToolResult> = {
  two_texts: { content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] },
  text_and_sc: { content: [{ type: "text", text: "3 items" }], structuredContent: { count: 3, items: ["x", "y", "z"] } },
  sc_only: { content: [], structuredContent: { temperature: 21.5, unit: "C" } },
  image: { content: [{ type: "text", text: "Here is the chart:" }, { type: "image", data: PNG, mimeType: "image/png" }] },
  audio: { content: [{ type: "audio", data: "UklGRiQAAABXQVZFZm10IBAAAAABAAEA", mimeType: "audio/wav" }] },
  link: { content: [{ type: "resource_link", uri: "file:///logs/app.log", name: "app.log", mimeType: "text/plain" }] },
  embedded_text: { content: [{ type: "resource", resource: { uri: "file:///r.txt", mimeType: "text/plain", text: "resource body" } }] },
  embedded_blob: { content: [{ type: "resource", resource: { uri: "file:///r.bin", mimeType: "application/zip", blob: Buffer.alloc(3000, 7).toString("base64") } }] },
  error_token: { isError: true, content: [{ type: "text", text: "upstream refused: token=abc123secret" }] },
  error_empty: { isError: true, content: [] },
};

let results: Record<string, unknown> = {};
let client: Client;

beforeAll(async () => {
  const server = new McpServer({ name: "fx", version: "1.0.0" });
  for (const [name, result] of Object.entries(canned)) server.registerTool(name, { description: name }, async () => result);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  client = new Client({ name: "test", version: "1.0.0" });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  results = {};
  for (const name of Object.keys(canned)) results[name] = await client.callTool({ name, arguments: {} });
});
afterAll(async () => {
  await client?.close();
});

const context = { server: "fx", tool: "t", readResourceTool: "mcp__fx__read_resource" };
const convert = (name: string) => convertCallToolResult(results[name], context);

/** The registry's two views of a result: the string a model gets and the typed result. */
async function throughRegistry(result: ToolResult): Promise<{ content: string; typed: ToolResult }> {
  const registry = new ToolRegistry({ logger: createMemoryLogger() });
  registry.register({ name: "mcp__fx__t", toolset: "mcp-fx", source: { kind: "mcp", server: "fx" }, schema: { description: "t", parameters: { type: "object", properties: {} } }, handler: () => result });
  const outcome = await registry.run("mcp__fx__t", {});
  const typed = await registry.invoke({ name: "mcp__fx__t", arguments: {} });
  return { content: outcome.content, typed };
}

describe("convertCallToolResult: spec 1.5 item 7", () => {
  it("two text blocks → the text 'a\\nb', rendered verbatim", async () => {
    const result = convert("two_texts");
    expect(result).toMatchObject({ success: true, data: "a\nb" });
    expect((await throughRegistry(result)).content).toBe("a\nb");
  });

  it("text + structuredContent → both keys", async () => {
    const result = convert("text_and_sc");
    expect(result.data).toEqual({ result: "3 items", structuredContent: { count: 3, items: ["x", "y", "z"] } });
    expect(JSON.parse((await throughRegistry(result)).content)).toEqual(result.data);
  });

  it("structuredContent only → the structured value", () => {
    expect(convert("sc_only")).toMatchObject({ success: true, data: { temperature: 21.5, unit: "C" } });
  });

  it("an image → a multimodal result: parts for invoke(), text with a placeholder for string callers, no base64 in text", async () => {
    const result = convert("image");
    expect(isMultimodalResult(result.data)).toBe(true);
    expect((result.data as MultimodalResult).parts).toEqual([
      { type: "text", text: "Here is the chart:" },
      { type: "image", data: PNG, mimeType: "image/png" },
    ]);
    const { content, typed } = await throughRegistry(result);
    expect(content).toBe(`Here is the chart:\n[image: image/png, ${PNG_BYTES} bytes]`);
    expect(content).not.toContain(PNG.slice(0, 20));
    expect(typed.data).toEqual(result.data);
  });

  it("audio → an audio part", () => {
    const data = convert("audio").data as MultimodalResult;
    expect(data.parts).toEqual([{ type: "audio", data: "UklGRiQAAABXQVZFZm10IBAAAAABAAEA", mimeType: "audio/wav" }]);
    expect(multimodalText(data)).toBe("[audio: audio/wav, 24 bytes]");
  });

  it("resource_link → the hint line naming mcp__fx__read_resource", () => {
    expect(convert("link").data).toBe("[MCP resource link: uri=file:///logs/app.log, name=app.log, mimeType=text/plain — fetch it with mcp__fx__read_resource]");
    expect(convertCallToolResult(results.link, { server: "fx", tool: "t" }).data).toBe("[MCP resource link: uri=file:///logs/app.log, name=app.log, mimeType=text/plain]");
  });

  it("an embedded text resource → its text; a blob → a placeholder with size and type, no file written", () => {
    expect(convert("embedded_text").data).toBe("resource body");
    expect(convert("embedded_blob").data).toBe("[MCP embedded resource file:///r.bin: application/zip, 3000 bytes of binary data, not shown — read it with mcp__fx__read_resource]");
  });

  it("isError with token=abc → a failed result with the secret redacted, as the model sees it too", async () => {
    const result = convert("error_token");
    expect(result.success).toBe(false);
    expect(result.error).toEqual({ kind: "failed", message: "upstream refused: token=[REDACTED]" });
    const { content } = await throughRegistry(result);
    expect(JSON.parse(content)).toEqual({ error: "upstream refused: token=[REDACTED]" });
    expect(convert("error_empty").error?.message).toBe("MCP tool returned an error");
  });

  it("inputs validated by the SDK's own CallToolResultSchema convert the same as the wire results", () => {
    for (const [name, result] of Object.entries(canned)) {
      expect(convertCallToolResult(CallToolResultSchema.parse(result), context), name).toEqual(convert(name));
    }
  });
});

describe("hostile results never throw", () => {
  it("not an object, content not a list, junk blocks", () => {
    for (const junk of [null, undefined, 3, "x", [1]]) {
      const result = convertCallToolResult(junk, context);
      expect(result.success).toBe(false);
      expect(result.error?.message).toMatch(/^MCP server 'fx' returned a malformed result for tool 't'/);
    }
    expect(convertCallToolResult({ content: "hello" }, context).data).toBe("[mibyan: content was \"hello\", not a list]");
    const mixed = convertCallToolResult(
      {
        content: [
          null,
          { type: "text", text: 42 },
          { type: "text", text: { nested: true } },
          { type: "text" },
          { type: "video", url: "x" },
          { type: "image", mimeType: "image/png" },
          { type: "image", data: "not base64 at all!", mimeType: "image/png" },
          { type: "resource_link" },
          { type: "resource", resource: { uri: "u" } },
          { type: "resource" },
        ],
      },
      context,
    );
    expect(mixed.success).toBe(true);
    expect(mixed.data).toBe(
      '42\n{"nested":true}\n[mibyan: a content block was null; a text block without text was dropped; a content block of unsupported type "video" was dropped; ' +
        "an image block (image/png) without data was dropped; an image block (image/png) whose data is not base64 was dropped; a resource link without a uri was dropped; " +
        "the embedded resource u had neither text nor blob and was dropped; an embedded resource without contents was dropped]",
    );
  });

  it("huge base64 is replaced by a placeholder, not kept", async () => {
    const huge = "A".repeat(MAX_MEDIA_BASE64_CHARS + 4);
    const result = convertCallToolResult({ content: [{ type: "image", data: huge, mimeType: "image/png" }] }, context);
    expect(result.data).toBe(`[image: image/png, ${((MAX_MEDIA_BASE64_CHARS + 4) / 4) * 3} bytes — omitted, over the 20 MiB limit]`);
    const many = convertCallToolResult({ content: Array.from({ length: 5_000 }, () => ({ type: "text", text: "x" })) }, context);
    expect(String(many.data)).toMatch(/4000 content blocks past the first 1000 dropped\]$/);
  });

  it("an empty result, an old-protocol toolResult, and an isError whose only content is structured", () => {
    expect(convertCallToolResult({ content: [] }, context).data).toBe("(the tool returned no content)");
    expect(convertCallToolResult({ toolResult: { ok: 1 } }, context).data).toEqual({ ok: 1 });
    expect(convertCallToolResult({ isError: true, content: [], structuredContent: { password: "hunter2" } }, context).error?.message).toBe('{"password":"[REDACTED]"}');
  });

  it("a multimodal result with structured content keeps both", () => {
    const result = convertCallToolResult({ content: [{ type: "image", data: PNG, mimeType: "image/png" }], structuredContent: { w: 1 } }, context);
    expect(multimodalText(result.data as MultimodalResult)).toBe(`[image: image/png, ${PNG_BYTES} bytes]\n{"structuredContent":{"w":1}}`);
  });
});

describe("multimodal rendering in dispatch", () => {
  it("a plugin-style handler returning a multimodal result: text for run(), parts for invoke(), secrets in text parts redacted", async () => {
    const data: MultimodalResult = { type: "multimodal", parts: [{ type: "text", text: "done; export API_KEY=sk-live-abcdefghijklmnopqrstuv" }, { type: "image", data: PNG, mimeType: "image/png" }] };
    const { content, typed } = await throughRegistry({ success: true, data });
    expect(content).toBe(`done; export API_KEY=[REDACTED]\n[image: image/png, ${PNG_BYTES} bytes]`);
    expect(typed.data).toEqual(data);
  });

  it("a look-alike that is not well-formed is ordinary JSON data", async () => {
    const { content } = await throughRegistry({ success: true, data: { type: "multimodal", parts: [{ type: "image", data: 1 }] } });
    expect(JSON.parse(content)).toEqual({ type: "multimodal", parts: [{ type: "image", data: 1 }] });
  });
});
