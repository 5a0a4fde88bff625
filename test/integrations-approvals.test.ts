/**
 * Every question our approval gate would put to a person, asked through the framework instead,
 * with real calls: a program `execute_code` runs (foreseen from its arguments), a `write_file` to
 * a `.env` file and a plugin's `approve` directive (learned: denied for now, the next call with
 * the same arguments asks the person through the framework), smart mode (the reviewer judges
 * first; what a person approved through the framework is not re-judged by it), and the floor
 * (deny rules still refuse). The gate's own surface records every question and says no: it
 * must never be asked.
 */

import http from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { Agent, run, setTracingDisabled } from "@openai/agents-core";
import { generateText, stepCountIs, type ModelMessage, type ToolSet } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";

import { getApprovalGate, setApprovalGate } from "../src/approval/default-gate.js";
import type { ApprovalGateOptions } from "../src/approval/flow/gate.js";
import type { ApprovalRequest, GateDecision } from "../src/approval/flow/types.js";
import { toAiSdkTools } from "../src/ai-sdk.js";
import { registry } from "../src/index.js";
import { toOpenAIAgentsTools } from "../src/openai-agents.js";
import { PluginHooks } from "../src/plugins/plugin-hooks.js";
import "../src/tools/execute-code.js";
import "../src/tools/read-file.js";
import "../src/tools/terminal.js";
import "../src/tools/write-file.js";
import { createMemoryLogger } from "../src/util/logger.js";
import { ScriptedModel, terminalArgs, toolOutputIn } from "./fixtures/agents/scripted-model.js";

const scratch = mkdtempSync(path.join(tmpdir(), "mibyan-adapter-approvals-"));
const previousGate = getApprovalGate();
beforeAll(() => setTracingDisabled(true));
afterAll(() => {
  setApprovalGate(previousGate);
  rmSync(scratch, { recursive: true, force: true });
});

let asked: ApprovalRequest[] = [];
let decisions: GateDecision[] = [];
function useGate(extra: Partial<ApprovalGateOptions> = {}): void {
  asked = [];
  decisions = [];
  setApprovalGate({
    home: mkdtempSync(path.join(scratch, "home-")),
    settings: { mode: "manual" },
    surface: { kind: "test", ask: async (r) => (asked.push(r), { scope: "deny", reason: "the gate's own prompt said no" }) },
    logger: createMemoryLogger(),
    observers: [{ onDecision: (d) => void decisions.push(d) }],
    ...extra,
  });
}
beforeEach(() => useGate());

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** An AI SDK model that calls `toolName` with `input` under `toolCallId`, then says "done". */
function aiModel(toolName: string, input: unknown, toolCallId: string) {
  let turn = 0;
  return new MockLanguageModelV3({
    doGenerate: async () => {
      turn += 1;
      if (turn === 1) {
        return { content: [{ type: "tool-call", toolCallId, toolName, input: JSON.stringify(input) }], finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage, warnings: [] };
      }
      return { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
    },
  });
}

function outputSeen(model: MockLanguageModelV3, toolCallId: string): { type: string; value?: string; reason?: string } | undefined {
  for (const message of model.doGenerateCalls.at(-1)!.prompt) {
    if (message.role !== "tool") continue;
    for (const part of message.content) if (part.type === "tool-result" && part.toolCallId === toolCallId) return part.output as never;
  }
  return undefined;
}

/** One AI SDK turn of `toolName(input)`; when the SDK asks for approval, answers `answer` and runs the second step. */
async function aiTurn(tools: ToolSet, toolName: string, input: unknown, toolCallId: string, answer: boolean) {
  const model = aiModel(toolName, input, toolCallId);
  const first = await generateText({ model, tools, prompt: "go", stopWhen: stepCountIs(3) });
  const request = first.content.find((p) => p.type === "tool-approval-request") as { approvalId: string } | undefined;
  if (request === undefined) return { requested: false, output: outputSeen(model, toolCallId) };
  const messages: ModelMessage[] = [
    { role: "user", content: "go" },
    ...first.response.messages,
    { role: "tool", content: [{ type: "tool-approval-response", approvalId: request.approvalId, approved: answer, ...(answer ? {} : { reason: "not this" }) }] },
  ];
  await generateText({ model, tools, messages, stopWhen: stepCountIs(3) });
  return { requested: true, output: outputSeen(model, toolCallId) };
}

const byFramework = (): string[] => decisions.filter((d) => d.by === "framework").map((d) => d.command);

describe("execute_code: the program is foreseen and put to the framework before it runs", () => {
  const program = (marker: string) => `import { appendFileSync } from "node:fs";\nappendFileSync(${JSON.stringify(marker)}, "ran\\n");\nconsole.log("wrote");\n`;

  it("denied: never runs; approved: runs once, our gate never asks", async () => {
    const marker = path.join(mkdtempSync(path.join(scratch, "code-")), "marker.txt");
    const tools = toAiSdkTools({ names: ["execute_code"], session: { id: "code" } });
    const denied = await aiTurn(tools, "execute_code", { code: program(marker) }, "c1", false);
    expect(denied.requested).toBe(true);
    expect(denied.output).toMatchObject({ type: "execution-denied", reason: "not this" });
    expect(existsSync(marker)).toBe(false);

    const approved = await aiTurn(tools, "execute_code", { code: program(marker) }, "c2", true);
    expect(approved.requested).toBe(true);
    expect(JSON.parse(approved.output!.value!)).toMatchObject({ exit_code: 0, error: null });
    expect(readFileSync(marker, "utf8")).toBe("ran\n");
    expect(asked).toEqual([]);
    expect(decisions.map((d) => [d.by, d.allowed])).toEqual([["user", true]]);
  }, 30_000);
});

describe("a provider that reuses tool call ids across turns", () => {
  it("a request never answered does not stick to the id: the next turn's call under it is judged on its own input", async () => {
    const tools = toAiSdkTools({ names: ["terminal"], session: { id: "reuse" } });
    const needs = tools.terminal!.needsApproval as (input: unknown, o: { toolCallId: string; messages: ModelMessage[] }) => Promise<boolean>;
    expect(await needs({ command: "rm -rf build" }, { toolCallId: "call_0", messages: [] })).toBe(true);
    // Next turn, same id, a harmless command, no answer to the earlier request in the messages.
    expect(await needs({ command: "echo hi" }, { toolCallId: "call_0", messages: [] })).toBe(false);
    const agents = toOpenAIAgentsTools({ names: ["terminal"], session: { id: "reuse" } });
    const model = new ScriptedModel("terminal", terminalArgs("echo hi"), "call_0");
    const first = await run(new Agent({ name: "x", instructions: "x", model: new ScriptedModel("terminal", terminalArgs("rm -rf build-nothing-here"), "call_0"), tools: agents }), "go");
    expect(first.interruptions).toHaveLength(1);
    const second = await run(new Agent({ name: "x", instructions: "x", model, tools: agents }), "go");
    expect(second.interruptions).toHaveLength(0);
    expect(JSON.parse(toolOutputIn(model.requests.at(-1)!.input)!)).toMatchObject({ output: "hi\n", exit_code: 0 });
  }, 30_000);
});

describe("write_file to a .env file: learned on the first call, asked through the framework on the next", () => {
  it("first call denied for now (the model is told to call again), second asks, approved it writes once", async () => {
    const file = path.join(mkdtempSync(path.join(scratch, "env-")), ".env");
    const input = { path: file, content: "TOKEN=abc\n" };
    const tools = toAiSdkTools({ names: ["write_file"], session: { id: "env" } });
    const first = await aiTurn(tools, "write_file", input, "w1", true);
    expect(first.requested).toBe(false);
    expect(first.output!.type).toBe("error-text");
    expect(JSON.parse(first.output!.value!).error).toMatch(/needs the user's approval .*call write_file again with the same arguments/);
    expect(existsSync(file)).toBe(false);
    expect(byFramework()).toHaveLength(1);

    const second = await aiTurn(tools, "write_file", input, "w2", true);
    expect(second.requested).toBe(true);
    expect(JSON.parse(second.output!.value!)).toMatchObject({ error: null });
    expect(readFileSync(file, "utf8")).toBe("TOKEN=abc\n");
    expect(asked).toEqual([]);
    expect(decisions.at(-1)).toMatchObject({ allowed: true, by: "user", scope: "once" });

    // Spent: the same write again is a new question (learned again), not a free pass.
    const third = await aiTurn(tools, "write_file", { ...input, content: "TOKEN=other\n" }, "w3", true);
    expect(third.requested).toBe(false);
    expect(readFileSync(file, "utf8")).toBe("TOKEN=abc\n");
  }, 30_000);

  it("denied through the framework: the file is never written", async () => {
    const file = path.join(mkdtempSync(path.join(scratch, "env-")), ".env");
    const input = { path: file, content: "TOKEN=abc\n" };
    const tools = toAiSdkTools({ names: ["write_file"], session: { id: "env-deny" } });
    await aiTurn(tools, "write_file", input, "w1", true);
    const second = await aiTurn(tools, "write_file", input, "w2", false);
    expect(second.requested).toBe(true);
    expect(second.output).toMatchObject({ type: "execution-denied" });
    expect(existsSync(file)).toBe(false);
    expect(asked).toEqual([]);
  }, 30_000);
});

describe("a plugin's approve directive, through the Agents SDK's interruptions", () => {
  let hooks: PluginHooks;
  beforeEach(() => {
    hooks = new PluginHooks({ registry, logger: createMemoryLogger(), approval: () => getApprovalGate() });
    hooks.add("auditor", "pre_tool_call", (event: { toolName: string }) => (event.toolName === "read_file" ? { action: "approve", message: "reads are audited" } : undefined));
  });
  afterEach(() => hooks.clear());

  it("learned, then interrupted, approved: the read runs once and our gate never asks", async () => {
    const file = path.join(mkdtempSync(path.join(scratch, "read-")), "notes.txt");
    writeFileSync(file, "secret plans\n");
    const input = { path: file, offset: null, limit: null };
    const tools = toOpenAIAgentsTools({ names: ["read_file"], session: { id: "plugin" } });

    const firstModel = new ScriptedModel("read_file", input, "r1");
    const first = await run(new Agent({ name: "reader", instructions: "read", model: firstModel, tools }), "read");
    expect(first.interruptions).toHaveLength(0);
    const told = toolOutputIn(firstModel.requests.at(-1)!.input)!;
    expect(JSON.parse(told).error).toMatch(/needs the user's approval .*plugin-approval.*call read_file again with the same arguments/);
    expect(told).not.toContain("secret plans");

    const secondModel = new ScriptedModel("read_file", input, "r2");
    const agent = new Agent({ name: "reader", instructions: "read", model: secondModel, tools });
    const second = await run(agent, "read");
    expect(second.interruptions).toHaveLength(1);
    second.state.approve(second.interruptions[0]!);
    const resumed = await run(agent, second.state);
    expect(toolOutputIn(secondModel.requests.at(-1)!.input)).toContain("secret plans");
    expect(resumed.finalOutput).toContain("secret plans");
    expect(asked).toEqual([]);
    expect(decisions.at(-1)).toMatchObject({ allowed: true, by: "user", scope: "once" });
  }, 30_000);

  it("rejected through the SDK: the model reads the message, the tool never ran", async () => {
    const file = path.join(mkdtempSync(path.join(scratch, "read-")), "notes.txt");
    writeFileSync(file, "secret plans\n");
    const input = { path: file, offset: null, limit: null };
    const tools = toOpenAIAgentsTools({ names: ["read_file"], session: { id: "plugin-reject" } });
    await run(new Agent({ name: "reader", instructions: "read", model: new ScriptedModel("read_file", input, "r1"), tools }), "read");
    const model = new ScriptedModel("read_file", input, "r2");
    const agent = new Agent({ name: "reader", instructions: "read", model, tools });
    const second = await run(agent, "read");
    second.state.reject(second.interruptions[0]!, { message: "no" });
    await run(agent, second.state);
    expect(toolOutputIn(model.requests.at(-1)!.input)).toBe("no");
    expect(asked).toEqual([]);
  }, 30_000);

  it("a deny rule still refuses: never offered to the person, blocked with the rule's reason", async () => {
    useGate({ settings: { mode: "manual", deny: [{ rule: "plugin-approval", reason: "no audited reads here" }] } });
    const file = path.join(mkdtempSync(path.join(scratch, "read-")), "notes.txt");
    writeFileSync(file, "secret plans\n");
    const input = { path: file, offset: null, limit: null };
    const tools = toOpenAIAgentsTools({ names: ["read_file"], session: { id: "plugin-deny" } });
    for (const id of ["r1", "r2"]) {
      const model = new ScriptedModel("read_file", input, id);
      const result = await run(new Agent({ name: "reader", instructions: "read", model, tools }), "read");
      expect(result.interruptions).toHaveLength(0);
      expect(toolOutputIn(model.requests.at(-1)!.input)).toMatch(/Denied by the user's configuration.*no audited reads here/);
    }
    expect(byFramework()).toEqual([]);
  }, 30_000);
});

describe("smart mode", () => {
  let server: http.Server;
  let baseUrl: string;
  let replies: string[] = [];
  let reviewed = 0;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        reviewed += 1;
        const decision = replies.shift() ?? "escalate";
        const content = JSON.stringify({ decision, reason: `scripted ${decision}` });
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ id: "x", object: "chat.completion", created: 0, model: "r", choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
  });
  beforeEach(() => {
    replies = [];
    reviewed = 0;
    useGate({ settings: { mode: "smart", smart: { model: "reviewer", baseUrl, apiKey: "k", timeoutMs: 5_000, breakerThreshold: 3 } } });
  });

  it("the reviewer judges first: its denial reaches the model, nobody is asked", async () => {
    const dir = path.join(mkdtempSync(path.join(scratch, "smart-")), "build");
    writeFileSync(dir, "x");
    replies = ["deny"];
    const tools = toAiSdkTools({ names: ["terminal"], session: { id: "smart-deny" } });
    const turn = await aiTurn(tools, "terminal", { command: `rm -rf ${dir}` }, "t1", true);
    expect(turn.requested).toBe(false);
    expect(JSON.parse(turn.output!.value!).error).toMatch(/automatic reviewer denied/);
    expect(existsSync(dir)).toBe(true);
    expect(reviewed).toBe(1);
    expect(asked).toEqual([]);
  }, 30_000);

  it("escalated, then approved by a person through the framework: runs, and the reviewer is not asked to second-guess it", async () => {
    const dir = path.join(mkdtempSync(path.join(scratch, "smart-")), "build");
    writeFileSync(dir, "x");
    // First review escalates; any later review would deny: a person's approval must not be re-judged.
    replies = ["escalate", "deny", "deny"];
    const tools = toAiSdkTools({ names: ["terminal"], session: { id: "smart-person" } });
    const first = await aiTurn(tools, "terminal", { command: `rm -rf ${dir}` }, "t1", true);
    expect(first.requested).toBe(false);
    expect(JSON.parse(first.output!.value!).error).toMatch(/call terminal again with the same arguments/);
    expect(reviewed).toBe(1);
    expect(existsSync(dir)).toBe(true);

    const second = await aiTurn(tools, "terminal", { command: `rm -rf ${dir}` }, "t2", true);
    expect(second.requested).toBe(true);
    expect(JSON.parse(second.output!.value!)).toMatchObject({ exit_code: 0, error: null });
    expect(existsSync(dir)).toBe(false);
    expect(reviewed).toBe(1);
    expect(asked).toEqual([]);
  }, 30_000);

  it("the hardline floor holds in smart mode too, whatever was approved", async () => {
    const tools = toOpenAIAgentsTools({ names: ["terminal"], session: { id: "smart-hardline" } });
    const model = new ScriptedModel("terminal", terminalArgs("rm -rf /"), "h1");
    const result = await run(new Agent({ name: "x", instructions: "x", model, tools }), "go");
    expect(result.interruptions).toHaveLength(0);
    expect(toolOutputIn(model.requests.at(-1)!.input)).toMatch(/Blocked: .*never allowed/);
    expect(reviewed).toBe(0);
  }, 30_000);
});
