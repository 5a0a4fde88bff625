/**
 * runAgent against a scripted OpenAI-compatible server on 127.0.0.1, with the real built-in tools
 * (write_file, read_file, terminal) working in a temporary directory: what each request carried
 * (tools in OpenAI format, tool messages answering the right tool_call_id, no internal keys, the
 * same system prompt bytes on every request) and what the loop did (files written, commands run,
 * parallel-safe calls together, unknown tools answered, the budget's summary turn, agent-loop
 * handlers, the session recorder, streaming, usage).
 */

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

import { describe, expect, it } from "vitest";

import { runAgent } from "../src/agent/loop/run-agent.js";
import { BUDGET_EXHAUSTED_MESSAGE } from "../src/agent/loop/budget.js";
import type { AgentEvent, AgentMessage, SessionRecorder } from "../src/agent/types.js";
import { ToolRegistry, createMemoryLogger } from "../src/index.js";
import "../src/tools/read-file.js";
import "../src/tools/write-file.js";
import "../src/tools/terminal.js";
import { useLoopFixture } from "./support/loop-fixture.js";
import { reply, type Json, type ScriptedOpenAI } from "./support/scripted-openai.js";

const { scratch, home, tools, serve } = useLoopFixture("loop");
let server: ScriptedOpenAI | undefined;

const base = { model: "scripted-model", apiKey: "sk-test-0123456789", systemPrompt: { contextFiles: false } } as const;

/** Every key of every object inside `value`, recursively. */
function allKeys(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) allKeys(item, into);
  else if (value !== null && typeof value === "object") {
    for (const [key, inner] of Object.entries(value)) {
      into.add(key);
      allKeys(inner, into);
    }
  }
  return into;
}

describe("runAgent: the happy path with real tools", () => {
  it("write_file then read_file then an answer: tools in OpenAI format, tool messages answer the right ids, the file exists", async () => {
    const target = path.join(scratch, "hello.txt");
    server = await serve([
      reply.toolCalls([{ id: "call_write", name: "write_file", args: { path: target, content: "hello from the loop\n" } }]),
      reply.toolCalls([{ id: "call_read", name: "read_file", args: { path: target } }]),
      (request) => {
        const last = request.body.messages.at(-1);
        return reply.text(`I read: ${JSON.parse(last.content).content.trim()}`);
      },
    ]);
    const events: AgentEvent[] = [];
    const result = await runAgent({ ...base, baseURL: server.baseURL, prompt: "write and read a file", toolsets: ["file"], onEvent: (e) => events.push(e) });

    expect(readFileSync(target, "utf8")).toBe("hello from the loop\n");
    expect(result.status).toBe("completed");
    expect(result.finalText).toContain("hello from the loop");
    expect(result.turns).toBe(3);
    expect(result.usage).toMatchObject({ requests: 3, inputTokens: 30, outputTokens: 15, totalTokens: 45 });

    const [first, second, third] = server.requests;
    expect(first!.headers.authorization).toBe("Bearer sk-test-0123456789");
    expect(first!.body.model).toBe("scripted-model");
    const names = first!.body.tools.map((t: Json) => t.function.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(["read_file", "write_file"]));
    expect(names).not.toContain("terminal");
    for (const tool of first!.body.tools) {
      expect(Object.keys(tool).sort()).toEqual(["function", "type"]);
      expect(tool.type).toBe("function");
      expect(typeof tool.function.description).toBe("string");
      expect(tool.function.parameters.type).toBe("object");
    }
    // The tool message answers the call it belongs to, right after the assistant message that made it.
    const sent = second!.body.messages;
    expect(sent.at(-2)).toMatchObject({ role: "assistant", tool_calls: [{ id: "call_write", type: "function", function: { name: "write_file" } }] });
    expect(sent.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_write" });
    expect(JSON.parse(sent.at(-1).content)).toMatchObject({ bytes_written: expect.any(Number) });
    expect(third!.body.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_read" });

    // What the loop keeps beside messages (tool_name, timestamp, finish_reason) never went out.
    const keys = allKeys(server.requests.map((r) => r.body.messages));
    for (const internal of ["tool_name", "timestamp", "finish_reason", "reasoning"]) expect(keys.has(internal)).toBe(false);
    expect(result.messages.find((m) => m.role === "tool")).toMatchObject({ tool_name: "write_file", timestamp: expect.any(Number) });

    const types = events.map((e) => e.type);
    expect(types.filter((t) => t === "turn_start")).toHaveLength(3);
    expect(types.at(-1)).toBe("done");
    const end = events.find((e) => e.type === "tool_end" && e.name === "write_file") as Extract<AgentEvent, { type: "tool_end" }>;
    expect(end).toMatchObject({ callId: "call_write", status: "ok", emoji: expect.any(String) });
    expect(end.elapsedMs).toBeGreaterThanOrEqual(0);
  });

  it("runs a real terminal command and sends its output back", async () => {
    const marker = path.join(scratch, `ran-${process.pid}`);
    server = await serve([
      reply.toolCalls([{ id: "t1", name: "terminal", args: { command: `echo loop-ran > ${marker} && echo printed-$((6*7))` } }]),
      (request) => reply.text(JSON.parse(request.body.messages.at(-1).content).output.trim()),
    ]);
    const result = await runAgent({ ...base, baseURL: server.baseURL, prompt: "run it", toolsets: ["terminal"] });
    expect(readFileSync(marker, "utf8")).toBe("loop-ran\n");
    expect(result.finalText).toBe("printed-42");
    expect(result.toolCalls).toMatchObject([{ name: "terminal", status: "ok", id: "t1" }]);
  });

  it("two read_file calls on different paths start together; results come back in call order", async () => {
    const a = path.join(scratch, "a.txt");
    const b = path.join(scratch, "b.txt");
    writeFileSync(a, "alpha\n");
    writeFileSync(b, "beta\n");
    server = await serve([
      reply.toolCalls([
        { id: "ra", name: "read_file", args: { path: a } },
        { id: "rb", name: "read_file", args: { path: b } },
      ]),
      reply.text("done"),
    ]);
    const events: AgentEvent[] = [];
    await runAgent({ ...base, baseURL: server.baseURL, prompt: "read both", toolsets: ["file"], onEvent: (e) => events.push(e) });
    const order = events.filter((e) => e.type === "tool_start" || e.type === "tool_end").map((e) => `${e.type}:${(e as { callId: string }).callId}`);
    expect(order.slice(0, 2)).toEqual(["tool_start:ra", "tool_start:rb"]);
    const sent = server.requests[1]!.body.messages.slice(-2);
    expect(sent.map((m: Json) => m.tool_call_id)).toEqual(["ra", "rb"]);
    expect(JSON.parse(sent[0].content).content).toContain("alpha");
    expect(JSON.parse(sent[1].content).content).toContain("beta");
  });

  it("write_file then read_file of the same path in one turn run in order", async () => {
    const target = path.join(scratch, "ordered.txt");
    server = await serve([
      reply.toolCalls([
        { id: "w", name: "write_file", args: { path: target, content: "fresh\n" } },
        { id: "r", name: "read_file", args: { path: target } },
      ]),
      reply.text("ok"),
    ]);
    await runAgent({ ...base, baseURL: server.baseURL, prompt: "go", toolsets: ["file"] });
    const read = server.requests[1]!.body.messages.at(-1);
    expect(read.tool_call_id).toBe("r");
    expect(JSON.parse(read.content).content).toContain("fresh");
  });

  it("an unknown tool gets the error text and the loop continues; a registered tool outside the toolsets is refused", async () => {
    server = await serve([
      reply.toolCalls([
        { id: "u1", name: "termnal", args: { command: "true" } },
        { id: "u2", name: "terminal", args: { command: `touch ${path.join(scratch, "must-not-exist")}` } },
      ]),
      reply.text("recovered"),
    ]);
    const result = await runAgent({ ...base, baseURL: server.baseURL, prompt: "go", toolsets: ["file"] });
    expect(result.status).toBe("completed");
    expect(result.finalText).toBe("recovered");
    const [unknown, outside] = server.requests[1]!.body.messages.slice(-2);
    expect(unknown).toMatchObject({ role: "tool", tool_call_id: "u1" });
    expect(JSON.parse(unknown.content).error).toMatch(/Unknown tool: termnal/);
    expect(outside).toMatchObject({ role: "tool", tool_call_id: "u2" });
    expect(JSON.parse(outside.content).error).toMatch(/terminal/);
    expect(existsSync(path.join(scratch, "must-not-exist"))).toBe(false);
    expect(result.toolCalls.map((c) => c.status)).toEqual(["error", "error"]);
  });

  it("malformed arguments are the model's error to read, not the loop's end", async () => {
    server = await serve([reply.toolCalls([{ id: "bad", name: "read_file", args: "{not json" }]), reply.text("ok")]);
    const result = await runAgent({ ...base, baseURL: server.baseURL, prompt: "go", toolsets: ["file"] });
    expect(result.status).toBe("completed");
    expect(JSON.parse(server.requests[1]!.body.messages.at(-1).content).error).toMatch(/Invalid JSON arguments/);
  });
});

describe("runAgent: concurrency, budget, prompt", () => {
  function slowRegistry() {
    const own = new ToolRegistry({ logger: createMemoryLogger() });
    const spans: Record<string, { start: number; end: number }> = {};
    own.register({
      name: "slow_probe",
      toolset: "probe",
      parallelSafe: true,
      schema: { description: "waits", parameters: { type: "object", properties: { id: { type: "string" } }, required: ["id"] } },
      handler: async ({ id }) => {
        const start = performance.now();
        await sleep(300);
        spans[String(id)] = { start, end: performance.now() };
        return `probe ${String(id)}`;
      },
    });
    return { own, spans };
  }

  it("two parallel-safe calls run concurrently (each waits 300 ms; they overlap)", async () => {
    const { own, spans } = slowRegistry();
    server = await serve([
      reply.toolCalls([
        { id: "p1", name: "slow_probe", args: { id: "one" } },
        { id: "p2", name: "slow_probe", args: { id: "two" } },
      ]),
      reply.text("both"),
    ]);
    await runAgent({ ...base, registry: own, baseURL: server.baseURL, prompt: "probe" });
    expect(spans.two!.start).toBeLessThan(spans.one!.end);
    expect(spans.one!.start).toBeLessThan(spans.two!.end);
  });

  it("maxTurns 3 with a model that always calls tools: 3 tool rounds, then the summary request with tools refused, then its text", async () => {
    const { own } = slowRegistry();
    const always = () => reply.toolCalls([{ name: "slow_probe", args: { id: "again" } }]);
    server = await serve([always, always, always, reply.text("Summary: I probed three times.")]);
    const events: AgentEvent[] = [];
    const result = await runAgent({ ...base, registry: own, baseURL: server.baseURL, prompt: "loop forever", maxTurns: 3, onEvent: (e) => events.push(e) });
    expect(server.requests).toHaveLength(4);
    expect(result.status).toBe("max_turns");
    expect(result.finalText).toBe("Summary: I probed three times.");
    expect(result.toolCalls).toHaveLength(3);
    const last = server.requests[3]!.body;
    expect(last.messages.at(-1)).toEqual({ role: "user", content: BUDGET_EXHAUSTED_MESSAGE });
    expect(last.tool_choice).toBe("none");
    for (const request of server.requests.slice(0, 3)) expect(request.body.tool_choice).toBeUndefined();
    expect(events.filter((e) => e.type === "budget_exhausted")).toHaveLength(1);
    expect(events.find((e) => e.type === "turn_start" && e.summary)).toMatchObject({ turn: 4 });
  });

  it("a summary turn that still calls tools or says nothing gets the fallback text, and no tool runs", async () => {
    const { own, spans } = slowRegistry();
    server = await serve([reply.toolCalls([{ name: "slow_probe", args: { id: "once" } }]), reply.toolCalls([{ name: "slow_probe", args: { id: "sneaky" } }])]);
    const result = await runAgent({ ...base, registry: own, baseURL: server.baseURL, prompt: "go", maxTurns: 1 });
    expect(result.status).toBe("max_turns");
    expect(result.finalText).toBe("I reached the iteration limit and couldn't generate a summary.");
    expect(spans.sneaky).toBeUndefined();
    expect(result.messages.at(-1)).toMatchObject({ role: "assistant" });
    expect((result.messages.at(-1) as { tool_calls?: unknown }).tool_calls).toBeUndefined();
  });

  it("the system prompt is the same bytes on every request of a run, and the first message; the date has day precision", async () => {
    const { own } = slowRegistry();
    const once = () => reply.toolCalls([{ name: "slow_probe", args: { id: "x" } }]);
    server = await serve([once, once, reply.text("end"), reply.text("second run")]);
    const now = new Date("2026-12-04T15:16:17Z");
    const result = await runAgent({ ...base, registry: own, baseURL: server.baseURL, prompt: "go", systemPrompt: { contextFiles: false, now } });
    const systems = server.requests.map((r) => r.body.messages[0]);
    for (const message of systems) expect(message).toEqual({ role: "system", content: result.systemPrompt });
    expect(result.systemPrompt).toContain("2026-12-04");
    expect(result.systemPrompt).not.toContain("15:16");
    // The raw bodies share the prefix up to the end of the system message, byte for byte.
    const prefix = (raw: string) => raw.slice(0, raw.indexOf(`"content":${JSON.stringify(result.systemPrompt)}`) + result.systemPrompt!.length + 12);
    expect(new Set(server.requests.map((r) => prefix(r.raw))).size).toBe(1);
    // The same prompt is built for a second run of the session (the caching provider sees one prefix).
    const again = await runAgent({ ...base, registry: own, baseURL: server.baseURL, messages: result.messages, prompt: "again", systemPrompt: { contextFiles: false, now } });
    expect(again.systemPrompt).toBe(result.systemPrompt);
    expect(server.requests[3]!.body.messages[0].content).toBe(result.systemPrompt);
  });

  it("streams the answer as text deltas and assembles streamed tool calls", async () => {
    const { own, spans } = slowRegistry();
    server = await serve([reply.streamToolCalls([{ id: "s1", name: "slow_probe", args: { id: "streamed" } }]), reply.streamText(["Hel", "lo ", "there"], { input: 7, output: 3 })]);
    const deltas: string[] = [];
    const result = await runAgent({
      ...base,
      registry: own,
      baseURL: server.baseURL,
      prompt: "stream",
      stream: true,
      onEvent: (e) => {
        if (e.type === "text_delta") deltas.push(e.delta);
      },
    });
    expect(spans.streamed).toBeDefined();
    expect(deltas).toEqual(["Hel", "lo ", "there"]);
    expect(result.finalText).toBe("Hello there");
    expect(server.requests[0]!.body.stream).toBe(true);
    expect(server.requests[0]!.body.stream_options).toEqual({ include_usage: true });
    expect(server.requests[1]!.body.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "s1", content: "probe streamed" });
    expect(result.usage).toMatchObject({ requests: 2, inputTokens: 17, outputTokens: 8 });
  });
});

describe("runAgent: agent-loop tools and the session recorder", () => {
  function loopRegistry() {
    const own = new ToolRegistry({ logger: createMemoryLogger() });
    own.register({
      name: "todo",
      toolset: "todo",
      schema: { description: "task list", parameters: { type: "object", properties: { todos: { type: "array" } } } },
      handler: () => JSON.stringify({ error: "todo is an agent-loop tool" }),
    });
    own.register({
      name: "memory",
      toolset: "memory",
      schema: { description: "memory", parameters: { type: "object", properties: { content: { type: "string" } } } },
      handler: () => JSON.stringify({ error: "memory is an agent-loop tool" }),
    });
    return own;
  }

  it("routes todo to its handler with the session's ids; memory without a handler is not offered and is refused", async () => {
    const own = loopRegistry();
    const seen: { args: unknown; sessionId?: string; toolCallId?: string }[] = [];
    let turnsBegun = 0;
    const todo = Object.assign(
      (args: Record<string, unknown>, ctx: { sessionId?: string; toolCallId?: string }) => {
        seen.push({ args, sessionId: ctx.sessionId, toolCallId: ctx.toolCallId });
        return JSON.stringify({ todos: args.todos, summary: { total: 1 } });
      },
      { beginTurn: () => void turnsBegun++ },
    );
    server = await serve([
      reply.toolCalls([
        { id: "td", name: "todo", args: { todos: [{ id: "1", content: "x", status: "pending" }] } },
        { id: "mm", name: "memory", args: { content: "remember" } },
      ]),
      reply.text("noted"),
    ]);
    const stored: AgentMessage[] = [];
    const session: SessionRecorder = { id: "sess-1", append: (messages) => void stored.push(...messages) };
    await runAgent({ ...base, registry: own, baseURL: server.baseURL, prompt: "plan", handlers: { todo }, session });
    expect(server.requests[0]!.body.tools.map((t: Json) => t.function.name)).toEqual(["todo"]);
    expect(seen).toEqual([{ args: { todos: [{ id: "1", content: "x", status: "pending" }] }, sessionId: "sess-1", toolCallId: "td" }]);
    expect(turnsBegun).toBe(1);
    const [todoResult, memoryResult] = server.requests[1]!.body.messages.slice(-2);
    expect(todoResult).toMatchObject({ tool_call_id: "td" });
    expect(JSON.parse(todoResult.content).summary.total).toBe(1);
    expect(JSON.parse(memoryResult.content).error).toMatch(/memory/);
    // Everything of the run was recorded, in order: user, assistant, two tool results, assistant.
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool", "assistant"]);
    expect(stored[2]).toMatchObject({ role: "tool", tool_name: "todo", tool_call_id: "td" });
  });

  it("a resumed session: history goes first, is not appended again, and a dangling tool call is answered before sending", async () => {
    const own = loopRegistry();
    const history: AgentMessage[] = [
      { role: "system", content: "an old system prompt that must not be resent" },
      { role: "user", content: "earlier question" },
      { role: "assistant", content: null, tool_calls: [{ id: "lost", type: "function", function: { name: "todo", arguments: "{}" } }] },
    ];
    const stored: AgentMessage[] = [];
    server = await serve([reply.text("continuing")]);
    const result = await runAgent({
      ...base,
      registry: own,
      baseURL: server.baseURL,
      prompt: "follow-up",
      session: { id: "resumed", history: () => history, append: (m) => void stored.push(...m) },
    });
    const sent = server.requests[0]!.body.messages;
    expect(sent.map((m: Json) => m.role)).toEqual(["system", "user", "assistant", "tool", "user"]);
    expect(sent[0].content).not.toContain("old system prompt");
    expect(sent[3]).toMatchObject({ role: "tool", tool_call_id: "lost" });
    expect(JSON.parse(sent[3].content).error).toMatch(/interrupted/);
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(result.newMessages).toHaveLength(2);
  });

  it("internal keys a caller leaves on messages (_*, tool_name, reasoning, a stored row's id) are not sent", async () => {
    server = await serve([reply.text("fine")]);
    const messages = [
      { role: "user", content: "hi", _multimodal: { parts: [] }, timestamp: 1, id: 7 },
      { role: "assistant", content: "hello", reasoning: "private chain", finish_reason: "stop", _receipt: "r1" },
    ] as unknown as AgentMessage[];
    await runAgent({ ...base, registry: new ToolRegistry({ logger: createMemoryLogger() }), baseURL: server.baseURL, messages, prompt: "and now?" });
    const sent = server.requests[0]!.body;
    expect(sent.messages.slice(1)).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
      { role: "user", content: "and now?" },
    ]);
    expect(sent.tools).toBeUndefined();
  });
});
