/**
 * mibyan-tools/langchain at the tool level: what LangChain sees of our tools (schema, names,
 * `bindTools`), `invoke` with plain arguments and with a tool call, bad input (our validation,
 * never LangChain's backtracking one), errors, media as artifacts, selection, and the interrupt
 * records that stand for a person's approval (attacks on them included). The agent-level runs
 * are in integrations-langchain-agent.test.ts.
 */

import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import path from "node:path";

import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { DynamicStructuredTool } from "@langchain/core/tools";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { FakeStreamingChatModel } from "@langchain/core/utils/testing";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { describe, expect, it, vi } from "vitest";

import { ToolRegistry, createMemoryLogger as memoryLogger, getToolDefinitions, handleFunctionCall, registry } from "../src/index.js";
import { GRANT_TTL_MS } from "../src/integrations/langchain-approvals.js";
import { MibyanToolError, langChainInterruptOn, toLangChainTools } from "../src/langchain.js";
import "../src/tools/read-file.js";
import "../src/tools/terminal.js";
import { createMemoryLogger } from "../src/util/logger.js";
import { useRecordingGate } from "./support/recording-gate.js";

const { scratch, asked, decisions } = useRecordingGate("langchain");

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).toString("base64");

/** A registry of our own: a counting tool, a multimodal one, one with a pattern, one unavailable, one of the loop's. */
function ownRegistry() {
  const own = new ToolRegistry({ logger: memoryLogger(), agentLoopTools: ["todo"] });
  const runs: unknown[] = [];
  const object = { type: "object", properties: { q: { type: "string" } }, required: ["q"], additionalProperties: false };
  own.register({ name: "echo", toolset: "basic", schema: { description: "echoes", parameters: object }, handler: (args) => (runs.push(args), `echo ${String(args.q)}`) });
  own.register({
    name: "chart",
    toolset: "media",
    schema: { description: "draws a chart", parameters: { type: "object", properties: {} } },
    handler: () => ({ type: "multimodal", parts: [{ type: "text", text: "a chart" }, { type: "image", data: PNG, mimeType: "image/png" }] }),
  });
  // Linear in our validator (RE2), catastrophic on a backtracking engine.
  own.register({
    name: "pat",
    toolset: "basic",
    schema: { description: "takes a's", parameters: { type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } }, required: ["s"] } },
    handler: (args) => (runs.push(args), "matched"),
  });
  own.register({ name: "broken", toolset: "basic", schema: { description: "never available", parameters: object }, handler: () => "x", checkFn: () => false });
  own.register({ name: "todo", toolset: "basic", schema: { description: "the loop's todo list", parameters: object }, handler: () => "never" });
  return { own, runs };
}

const toolCall = (name: string, args: Record<string, unknown>, id = "call-1") => ({ type: "tool_call" as const, name, args, id });

describe("what LangChain sees", () => {
  it("DynamicStructuredTools with the registry's names, descriptions and JSON Schema (the same object, left unmarked by calls)", async () => {
    const tools = toLangChainTools({ enabledToolsets: ["terminal", "file"] });
    const definitions = getToolDefinitions({ enabledToolsets: ["terminal", "file"] });
    expect(tools.map((t) => t.name)).toEqual(definitions.map((d) => d.function.name));
    for (const d of definitions) {
      const t = tools.find((x) => x.name === d.function.name)!;
      expect(t).toBeInstanceOf(DynamicStructuredTool);
      expect(t.description).toBe(d.function.description);
      expect(t.schema).toEqual(d.function.parameters);
      expect(t.responseFormat).toBe("content_and_artifact");
    }
    const read = tools.find((t) => t.name === "read_file")!;
    await read.invoke({ path: path.join(scratch, "nothing-here.txt") });
    // LangChain's validator writes `__absolute_uri__` into a schema it checks; ours is never given to it.
    expect(Object.getOwnPropertyNames(read.schema)).not.toContain("__absolute_uri__");
  });

  it("model.bindTools(tools) and convertToOpenAITool give exactly the registry's OpenAI definitions", () => {
    const tools = toLangChainTools({ enabledToolsets: ["terminal", "file"] });
    const definitions = getToolDefinitions({ enabledToolsets: ["terminal", "file"] });
    // The fake model binds as a provider model does: the tools, converted to OpenAI's format, on the call config.
    const bound = new FakeStreamingChatModel({ toolStyle: "openai" }).bindTools(tools) as unknown as { config: { tools: unknown } };
    expect(bound.config.tools).toEqual(definitions);
    expect(tools.map((t) => convertToOpenAITool(t))).toEqual(definitions);
  });

  it("selection: toolsets, names, unavailable tools left out, agent-loop tools only with the session's handler", () => {
    const { own } = ownRegistry();
    expect(toLangChainTools({ registry: own }).map((t) => t.name)).toEqual(["chart", "echo", "pat"]);
    expect(toLangChainTools({ registry: own, enabledToolsets: ["media"] }).map((t) => t.name)).toEqual(["chart"]);
    expect(toLangChainTools({ registry: own, disabledToolsets: ["media"] }).map((t) => t.name)).toEqual(["echo", "pat"]);
    expect(toLangChainTools({ registry: own, names: ["echo", "broken"] }).map((t) => t.name)).toEqual(["echo"]);
    expect(toLangChainTools({ registry: own, session: { agentLoop: { todo: () => "1 item" } } }).map((t) => t.name)).toContain("todo");
    expect(() => toLangChainTools({ registry: own, names: ["ehco"] })).toThrow(/no tool is registered under "ehco"/);
  });
});

describe("invoke", () => {
  it("with arguments: exactly the string handleFunctionCall returns", async () => {
    const file = path.join(scratch, "a.txt");
    writeFileSync(file, "alpha\n");
    const [read] = toLangChainTools({ names: ["read_file"] });
    const expected = await handleFunctionCall("read_file", { path: file });
    expect(expected).toContain("alpha");
    expect(await read!.invoke({ path: file })).toBe(expected);
  });

  it("with a tool call: a ToolMessage for that call id, and the hooks see the id and the surface langchain", async () => {
    const file = path.join(scratch, "b.txt");
    writeFileSync(file, "beta\n");
    const seen: (string | undefined)[] = [];
    const off = registry.addPreHook((call, ctx) => void seen.push(`${call.name}:${ctx.toolCallId}:${ctx.surface}`));
    let message: ToolMessage | undefined;
    try {
      const [read] = toLangChainTools({ names: ["read_file"] });
      message = (await read!.invoke(toolCall("read_file", { path: file }, "call-42"))) as ToolMessage;
    } finally {
      off();
    }
    expect(seen).toEqual(["read_file:call-42:langchain"]);
    expect(ToolMessage.isInstance(message)).toBe(true);
    expect(message!.tool_call_id).toBe("call-42");
    expect(message!.content).toBe(await handleFunctionCall("read_file", { path: file }));
    expect(message!.status).toBe("success");
  });

  it("invalid input is refused by our validation, before the handler, with our invalid-arguments text", async () => {
    const { own, runs } = ownRegistry();
    const [echo] = toLangChainTools({ registry: own, names: ["echo"] });
    const text = (await echo!.invoke({ q: 5, extra: true } as never)) as string;
    expect(text).toBe(await handleFunctionCall("echo", { q: 5, extra: true }, { registry: own }));
    expect(JSON.parse(text).error).toMatch(/^Invalid arguments for echo/);
    expect(runs).toEqual([]);
    // With a tool call: the same text, as an error ToolMessage (no ToolInputParsingException).
    const message = (await echo!.invoke(toolCall("echo", {}))) as ToolMessage;
    expect(message.status).toBe("error");
    expect(JSON.parse(String(message.content)).error).toMatch(/^Invalid arguments for echo/);
  });

  it("attack: a schema pattern that backtracks catastrophically cannot stall the process through LangChain's validator", async () => {
    const { own, runs } = ownRegistry();
    const [pat] = toLangChainTools({ registry: own, names: ["pat"] });
    // 26 a's and a '!': seconds on a backtracking engine (~4 s here, doubling per character), microseconds on ours.
    const s = `${"a".repeat(26)}!`;
    const started = Date.now();
    const text = (await pat!.invoke({ s })) as string;
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(JSON.parse(text).error).toMatch(/^Invalid arguments for pat: s: must match pattern/);
    expect(runs).toEqual([]);
    expect(await pat!.invoke({ s: "aaaa" })).toBe("matched");
  });

  it("errors: a failure is our text; with errors: throw, a MibyanToolError carrying exactly that text", async () => {
    const missing = path.join(scratch, "missing.txt");
    const expected = await handleFunctionCall("read_file", { path: missing });
    const [returning] = toLangChainTools({ names: ["read_file"] });
    expect(await returning!.invoke({ path: missing })).toBe(expected);
    const [throwing] = toLangChainTools({ names: ["read_file"], errors: "throw" });
    const error = (await throwing!.invoke({ path: missing }).catch((e: unknown) => e)) as MibyanToolError;
    expect(error).toBeInstanceOf(MibyanToolError);
    expect(error.message).toBe(expected);
    expect(error.toolName).toBe("read_file");
  });

  it("LangGraph's prebuilt ToolNode: our error as a ToolMessage with status error, returned or thrown (handleToolErrors)", async () => {
    const missing = path.join(scratch, "missing-node.txt");
    const expected = await handleFunctionCall("read_file", { path: missing });
    const state = { messages: [new AIMessage({ content: "", tool_calls: [{ name: "read_file", args: { path: missing }, id: "call-7", type: "tool_call" }] })] };
    for (const errors of ["return", "throw"] as const) {
      const node = new ToolNode(toLangChainTools({ names: ["read_file"], errors }));
      const { messages } = (await node.invoke(state)) as { messages: ToolMessage[] };
      expect(messages).toHaveLength(1);
      expect(messages[0]!.status, errors).toBe("error");
      expect(messages[0]!.tool_call_id).toBe("call-7");
      // Returned: exactly our text; thrown: ToolNode's wording around it.
      if (errors === "return") expect(messages[0]!.content).toBe(expected);
      else expect(messages[0]!.content).toBe(`Error: ${expected}\n Please fix your mistakes.`);
    }
  });

  it("media: content is the text (placeholders, no base64), the artifact the media parts", async () => {
    const { own } = ownRegistry();
    const [chart] = toLangChainTools({ registry: own, names: ["chart"] });
    const message = (await chart!.invoke(toolCall("chart", {}))) as ToolMessage;
    expect(message.content).toBe(await handleFunctionCall("chart", {}, { registry: own }));
    expect(String(message.content)).not.toContain(PNG);
    expect(message.artifact).toEqual([{ type: "media", data: PNG, mediaType: "image/png" }]);
    // Without a tool call LangChain returns the content only.
    expect(await chart!.invoke({})).toBe(message.content);
  });

  it("media: \"content\" puts LangChain's standard image block into the content, in order", async () => {
    const { own } = ownRegistry();
    const [chart] = toLangChainTools({ registry: own, names: ["chart"], media: "content" });
    const message = (await chart!.invoke(toolCall("chart", {}))) as ToolMessage;
    expect(message.content).toEqual([
      { type: "text", text: "a chart" },
      { type: "image", mimeType: "image/png", data: PNG },
    ]);
    expect(message.artifact).toEqual([{ type: "media", data: PNG, mediaType: "image/png" }]);
    // A result without media is the plain string either way.
    const [echo] = toLangChainTools({ registry: own, names: ["echo"], media: "content" });
    expect(await echo!.invoke({ q: "hi" })).toBe("echo hi");
  });

  it("an aborted signal ends the call at once", async () => {
    const [terminal] = toLangChainTools({ names: ["terminal"] });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const started = Date.now();
    await expect(terminal!.invoke({ command: "sleep 20" }, { signal: controller.signal })).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe("interruptOn and the records that stand for a person's approval", () => {
  function project(): string {
    const dir = path.join(mkdtempSync(path.join(scratch, "proj-")), "build");
    mkdirSync(dir);
    writeFileSync(path.join(dir, "out.js"), "x");
    return dir;
  }
  const runtime = (thread: string) => ({ configurable: { thread_id: thread } });
  /** No grant: our gate's question went back to LangChain (refused for now, to be asked through the middleware), never to its own surface. */
  function refusedForNow(decisionCount: number): void {
    expect(asked).toEqual([]);
    expect(decisions).toHaveLength(decisionCount);
    expect(decisions.at(-1)).toMatchObject({ allowed: false, by: "framework" });
  }

  it("an entry per tool, approve and reject, interrupting only what our gate would ask about", async () => {
    const tools = toLangChainTools({ enabledToolsets: ["terminal", "file"] });
    const interruptOn = langChainInterruptOn(tools);
    expect(Object.keys(interruptOn)).toEqual(tools.map((t) => t.name));
    const entry = interruptOn.terminal!;
    expect(entry.allowedDecisions).toEqual(["approve", "reject"]);
    expect(await interruptOn.read_file!.when({ toolCall: { name: "read_file", args: { path: "/etc/hostname" }, id: "r1" } })).toBe(false);
    expect(await entry.when({ toolCall: { name: "terminal", args: { command: "ls -la" }, id: "c1" } })).toBe(false);
    expect(await entry.when({ toolCall: { name: "terminal", args: { command: "rm -rf build" }, id: "c2" } })).toBe(true);
    // Hardline: never offered to a person (the gate refuses it whatever they say).
    expect(await entry.when({ toolCall: { name: "terminal", args: { command: "rm -rf /" }, id: "c3" } })).toBe(false);
    expect(await entry.description({ name: "terminal", args: { command: "rm -rf build" }, id: "c2" })).toMatch(/rm -rf build[\s\S]*Flagged because:/);
    // Tools not made by toLangChainTools get nothing.
    expect(langChainInterruptOn([{ name: "terminal" }, null, 3])).toEqual({});
  });

  it("a call the interrupt let through runs once, unasked; the same call again is asked (one-shot)", async () => {
    const build = project();
    const [terminal] = toLangChainTools({ names: ["terminal"], session: { id: "lc-once" } });
    const { when } = langChainInterruptOn([terminal])["terminal"]!;
    const args = { command: `rm -rf ${build}` };
    expect(await when({ toolCall: { name: "terminal", args, id: "c1" }, runtime: runtime("t1") })).toBe(true);
    const ran = (await terminal!.invoke(toolCall("terminal", args, "c1"), runtime("t1"))) as ToolMessage;
    expect(JSON.parse(String(ran.content))).toMatchObject({ exit_code: 0 });
    expect(existsSync(build)).toBe(false);
    expect(asked).toEqual([]);
    expect(decisions, JSON.stringify(decisions)).toHaveLength(1);
    expect(decisions[0]).toMatchObject({ allowed: true, by: "user", scope: "once" });
    mkdirSync(build);
    await terminal!.invoke(toolCall("terminal", args, "c1"), runtime("t1"));
    expect(existsSync(build)).toBe(true);
    refusedForNow(2);
  });

  it("attack: a model reusing an approved call id for another command gets no grant", async () => {
    const build = project();
    const [terminal] = toLangChainTools({ names: ["terminal"] });
    const { when } = langChainInterruptOn([terminal])["terminal"]!;
    await when({ toolCall: { name: "terminal", args: { command: "rm -rf ./harmless-tmp" }, id: "c1" }, runtime: runtime("t1") });
    await terminal!.invoke(toolCall("terminal", { command: `rm -rf ${build}` }, "c1"), runtime("t1"));
    expect(existsSync(build)).toBe(true);
    refusedForNow(1);
  });

  it("attack: the same call id and command in another thread gets no grant", async () => {
    const build = project();
    const [terminal] = toLangChainTools({ names: ["terminal"] });
    const { when } = langChainInterruptOn([terminal])["terminal"]!;
    const args = { command: `rm -rf ${build}` };
    await when({ toolCall: { name: "terminal", args, id: "c1" }, runtime: runtime("t-person") });
    await terminal!.invoke(toolCall("terminal", args, "c1"), runtime("t-other"));
    expect(existsSync(build)).toBe(true);
    refusedForNow(1);
  });

  it("a record from another tool set, or one that has lapsed, grants nothing", async () => {
    const build = project();
    const args = { command: `rm -rf ${build}` };
    const [first] = toLangChainTools({ names: ["terminal"] });
    const [second] = toLangChainTools({ names: ["terminal"] });
    await langChainInterruptOn([first])["terminal"]!.when({ toolCall: { name: "terminal", args, id: "c1" }, runtime: runtime("t1") });
    await second!.invoke(toolCall("terminal", args, "c1"), runtime("t1"));
    expect(existsSync(build)).toBe(true);
    refusedForNow(1);

    const realNow = Date.now;
    const now = vi.spyOn(Date, "now").mockImplementation(() => realNow() + GRANT_TTL_MS + 1_000);
    try {
      await first!.invoke(toolCall("terminal", args, "c1"), runtime("t1"));
    } finally {
      now.mockRestore();
    }
    expect(existsSync(build)).toBe(true);
    refusedForNow(2);
  });
});
