/**
 * runAgent against a model and an endpoint that misbehave: a model asking for a destructive command
 * (the approval gate refuses it, nothing is deleted, the loop goes on), tool calls without ids or
 * with absurd stream indexes, a stream cut after text was shown (not retried: the text cannot be
 * taken back) or before any (retried), and a session recorder that fails (the run stops with its
 * error rather than going on unsaved).
 */

import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

import { describe, expect, it } from "vitest";

import { AgentEndpointError } from "../src/agent/loop/errors.js";
import { runAgent } from "../src/agent/loop/run-agent.js";
import type { AgentEvent, RunAgentOptions } from "../src/agent/types.js";
import { ToolRegistry, createMemoryLogger } from "../src/index.js";
import "../src/tools/terminal.js";
import { useLoopFixture } from "./support/loop-fixture.js";
import { reply, type Json, type ScriptedOpenAI } from "./support/scripted-openai.js";

const { scratch, tools, serve } = useLoopFixture("loop-hostile");
let server: ScriptedOpenAI | undefined;

const base = (baseURL: string, extra: Partial<RunAgentOptions> = {}): RunAgentOptions => ({ model: "m", apiKey: "k", baseURL, systemPrompt: false, prompt: "go", ...extra });

function probeRegistry(): ToolRegistry {
  const own = new ToolRegistry({ logger: createMemoryLogger() });
  own.register({ name: "probe", toolset: "probe", schema: { description: "probe", parameters: { type: "object", properties: {} } }, handler: () => "probed" });
  return own;
}

describe("a model that asks for harm", () => {
  it("rm -rf of a project through terminal: the gate refuses (nobody to ask), the files stay, the model reads the refusal and the loop goes on", async () => {
    const victim = path.join(scratch, "victim");
    mkdirSync(victim);
    writeFileSync(path.join(victim, "precious.txt"), "keep me\n");
    server = await serve([reply.toolCalls([{ id: "rm", name: "terminal", args: { command: `rm -rf ${victim}` } }]), reply.text("I could not delete it.")]);
    const events: AgentEvent[] = [];
    const result = await runAgent(base(server.baseURL, { toolsets: ["terminal"], onEvent: (e) => events.push(e) }));
    expect(existsSync(path.join(victim, "precious.txt"))).toBe(true);
    expect(result.status).toBe("completed");
    const refusal = server.requests[1]!.body.messages.at(-1);
    expect(refusal.tool_call_id).toBe("rm");
    expect(refusal.content).toMatch(/block|denied|approval/i);
    expect(events.find((e) => e.type === "tool_end")).toMatchObject({ name: "terminal", status: "error" });
  });
});

describe("malformed completions", () => {
  it("tool calls without ids get made-up ids that their tool messages answer", async () => {
    const body = reply.toolCalls([{ name: "probe", args: {} }]) as Extract<ReturnType<typeof reply.text>, { kind: "json" }>;
    delete (body.body as Json).choices[0].message.tool_calls[0].id;
    server = await serve([body, reply.text("ok")]);
    await runAgent(base(server.baseURL, { registry: probeRegistry() }));
    const [assistant, tool] = server.requests[1]!.body.messages.slice(-2);
    expect(assistant.tool_calls[0].id).toBe("call_0");
    expect(tool).toMatchObject({ role: "tool", tool_call_id: "call_0", content: "probed" });
  });

  it("two calls sharing an id get distinct ids, each answered once", async () => {
    server = await serve([
      reply.toolCalls([
        { id: "same", name: "probe", args: {} },
        { id: "same", name: "probe", args: {} },
      ]),
      reply.text("ok"),
    ]);
    await runAgent(base(server.baseURL, { registry: probeRegistry() }));
    const sent = server.requests[1]!.body.messages;
    expect(sent.at(-3).tool_calls.map((c: Json) => c.id)).toEqual(["same", "same_2"]);
    expect(sent.slice(-2).map((m: Json) => m.tool_call_id)).toEqual(["same", "same_2"]);
  });

  it("the caller's message objects are not changed", async () => {
    server = await serve([reply.text("ok")]);
    const mine = { role: "user" as const, content: "hello" };
    await runAgent(base(server.baseURL, { registry: probeRegistry(), messages: [mine], prompt: undefined }));
    expect(mine).toEqual({ role: "user", content: "hello" });
  });

  it("a streamed tool call with an absurd index is still one call, answered", async () => {
    const chunks = [
      { choices: [{ index: 0, delta: { tool_calls: [{ index: 99_999_999, id: "far", type: "function", function: { name: "probe", arguments: "{}" } }] } }] },
      { choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] },
    ];
    server = await serve([{ kind: "sse", chunks }, reply.streamText(["fine"])]);
    const result = await runAgent(base(server.baseURL, { registry: probeRegistry(), stream: true }));
    expect(result.finalText).toBe("fine");
    expect(server.requests[1]!.body.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "far", content: "probed" });
  });
});

describe("broken streams", () => {
  it("cut after text was shown: a connection error, not retried", async () => {
    // A pause between chunks, so the client has shown the first text before the connection drops.
    const step = reply.streamText(["visible ", "then cut"], undefined, 150);
    server = await serve([{ ...step, breakAfter: 2 } as typeof step, reply.streamText(["never"])]);
    const deltas: string[] = [];
    const thrown = await runAgent(base(server.baseURL, { registry: probeRegistry(), stream: true, onEvent: (e) => e.type === "text_delta" && deltas.push(e.delta) })).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(AgentEndpointError);
    expect((thrown as AgentEndpointError).kind).toBe("connection");
    expect(deltas).toEqual(["visible "]);
    expect(server.requests).toHaveLength(1);
  });

  it("cut before any text: retried, and the retry's answer stands", async () => {
    const step = reply.streamText(["lost"]);
    server = await serve([{ ...step, breakAfter: 1 } as typeof step, reply.streamText(["second ", "try"])]);
    const result = await runAgent(base(server.baseURL, { registry: probeRegistry(), stream: true, retry: { initialDelayMs: 10 } }));
    expect(result.finalText).toBe("second try");
    expect(server.requests).toHaveLength(2);
  });
});

describe("a failing session recorder", () => {
  it("append throwing ends the run with that error, and runEnded hears 'error'", async () => {
    server = await serve([reply.toolCalls([{ name: "probe", args: {} }]), reply.text("never")]);
    const ended: string[] = [];
    let appends = 0;
    const thrown = await runAgent(
      base(server.baseURL, {
        registry: probeRegistry(),
        session: {
          id: "broken",
          append: () => {
            if (++appends === 2) throw new Error("disk full");
          },
          runEnded: (info) => void ended.push(info.status),
        },
      }),
    ).catch((e: unknown) => e);
    expect((thrown as Error).message).toBe("disk full");
    expect(ended).toEqual(["error"]);
    expect(server.requests).toHaveLength(1);
  });
});
