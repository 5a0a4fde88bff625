/**
 * runAgent with tool search (docs/tool-search.md): MCP and plugin tools deferred behind tool_search /
 * tool_describe / tool_call, against a scripted OpenAI-compatible server. What the requests carried (the
 * bridge tools, not the deferred ones), what ran (the real tool, its hooks seeing its own name), what the
 * activity events named, and that a session's reach holds through the bridge.
 */
import { afterEach, describe, expect, it } from "vitest";

import { runAgent } from "../src/agent/loop/run-agent.js";
import type { AgentEvent } from "../src/agent/types.js";
import { reply, startScriptedOpenAI, type ScriptedOpenAI } from "./support/scripted-openai.js";
import { newRegistry, registerGithubLike, registerUserTool, type Ran } from "./tool-search-fixtures.js";

let server: ScriptedOpenAI | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const base = { model: "scripted-model", apiKey: "sk-test-0123456789", systemPrompt: false } as const;
const toolNames = (body: { tools?: { function: { name: string } }[] }): string[] => (body.tools ?? []).map((t) => t.function.name).sort();

describe("runAgent with tool search", () => {
  it("on: the model gets the bridge tools, finds a deferred MCP tool, and tool_call runs the real tool with its hooks", async () => {
    const registry = newRegistry();
    const ran: Ran[] = [];
    registerGithubLike(registry, "gh", ran, 30);
    registerUserTool(registry, "app", "notes", ran);
    const hooked: string[] = [];
    registry.addPreHook((call) => void hooked.push(call.name));
    server = await startScriptedOpenAI([
      reply.toolCalls([{ id: "c1", name: "tool_search", args: { query: "create issue" } }]),
      reply.toolCalls([{ id: "c2", name: "tool_call", args: { name: "mcp__gh__create_issue", arguments: { owner: "acme", repo: "web" } } }]),
      reply.text("Filed it."),
    ]);
    const events: AgentEvent[] = [];
    const result = await runAgent({ ...base, baseURL: server.baseURL, registry, prompt: "file an issue", toolSearch: { enabled: "on" }, onEvent: (e) => events.push(e) });

    expect(result.status).toBe("completed");
    const first = server.requests[0]!.body;
    expect(toolNames(first)).toEqual(["notes", "tool_call", "tool_describe", "tool_search"]);
    // Every request carries the same tools.
    for (const request of server.requests) expect(toolNames(request.body)).toEqual(toolNames(first));
    // The search result named the tool; tool_call ran it, once, with the arguments.
    expect(server.requests[1]!.body.messages.at(-1).content).toContain("mcp__gh__create_issue");
    expect(ran).toEqual([{ name: "mcp__gh__create_issue", args: { owner: "acme", repo: "web" } }]);
    expect(hooked).toEqual(["mcp__gh__create_issue"]);
    const starts = events.filter((e) => e.type === "tool_start").map((e) => (e as { name: string }).name);
    expect(starts).toEqual(["tool_search", "mcp__gh__create_issue"]);
    expect(result.toolCalls.map((c) => c.name)).toEqual(["tool_search", "mcp__gh__create_issue"]);
  });

  it("a run restricted to some toolsets cannot reach another's tools through the bridge", async () => {
    const registry = newRegistry();
    const ran: Ran[] = [];
    registerGithubLike(registry, "gh", ran, 20);
    registerGithubLike(registry, "other", ran, 20);
    server = await startScriptedOpenAI([
      reply.toolCalls([{ id: "c1", name: "tool_call", args: { name: "mcp__other__delete_branch", arguments: { owner: "acme", repo: "web" } } }]),
      reply.toolCalls([{ id: "c2", name: "mcp__other__delete_branch", args: { owner: "acme", repo: "web" } }]),
      reply.text("done"),
    ]);
    const result = await runAgent({ ...base, baseURL: server.baseURL, registry, prompt: "go", toolsets: ["mcp-gh"], toolSearch: { enabled: "on" } });
    expect(result.status).toBe("completed");
    expect(toolNames(server.requests[0]!.body)).toEqual(["tool_call", "tool_describe", "tool_search"]);
    expect(ran).toEqual([]);
    expect(server.requests[1]!.body.messages.at(-1).content).toMatch(/error/i);
    expect(server.requests[2]!.body.messages.at(-1).content).toMatch(/error/i);
  });

  it("off: every tool is sent directly, byte for byte what it would be without tool search", async () => {
    const registry = newRegistry();
    registerGithubLike(registry, "gh", [], 30);
    server = await startScriptedOpenAI([reply.text("hi"), reply.text("hi")]);
    await runAgent({ ...base, baseURL: server.baseURL, registry, prompt: "hello", toolSearch: false });
    await runAgent({ ...base, baseURL: server.baseURL, registry, prompt: "hello", toolSearch: "off" });
    const names = toolNames(server.requests[0]!.body);
    expect(names).toHaveLength(30);
    expect(names).not.toContain("tool_search");
    expect(JSON.stringify(server.requests[1]!.body.tools)).toBe(JSON.stringify(server.requests[0]!.body.tools));
  });
});
