/**
 * The framework adapters with tool search (docs/tool-search.md, next-features 5.4 item 14): the framework
 * is given tool_search / tool_describe / tool_call instead of the deferred MCP tools, and a bridged call
 * runs the real tool, its hooks seeing its own name and the adapter's surface. Real registrations, each
 * framework's own call path.
 */
import { RunContext } from "@openai/agents-core";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";

import { toAiSdkTools } from "../src/ai-sdk.js";
import { toLangChainTools } from "../src/langchain.js";
import { toOpenAIAgentsTools } from "../src/openai-agents.js";
import { newRegistry, registerGithubLike, type Ran } from "./tool-search-fixtures.js";

const BRIDGES = ["tool_call", "tool_describe", "tool_search"];
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

function setUp() {
  const registry = newRegistry();
  const ran: Ran[] = [];
  registerGithubLike(registry, "gh", ran, 30);
  const hooked: string[] = [];
  registry.addPreHook((call, ctx) => void hooked.push(`${call.name}:${ctx.surface}`));
  return { registry, ran, hooked };
}

const bridged = { name: "mcp__gh__create_issue", arguments: { owner: "acme", repo: "web" } };

describe("adapters with tool search on", () => {
  it("AI SDK: the tool set is the three bridges; the model's tool_call runs the real tool once, hooks see it", async () => {
    const { registry, ran, hooked } = setUp();
    const tools = toAiSdkTools({ registry, toolSearch: { enabled: "on" } });
    expect(Object.keys(tools).sort()).toEqual(BRIDGES);
    let turn = 0;
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        turn += 1;
        if (turn === 1) return { content: [{ type: "tool-call", toolCallId: "c1", toolName: "tool_call", input: JSON.stringify(bridged) }], finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage, warnings: [] };
        return { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
      },
    });
    await generateText({ model, tools, prompt: "file it", stopWhen: stepCountIs(3) });
    expect(ran).toEqual([{ name: "mcp__gh__create_issue", args: { owner: "acme", repo: "web" } }]);
    expect(hooked).toEqual(["mcp__gh__create_issue:ai-sdk"]);
  });

  it("LangChain: tool_search finds the deferred tool; tool_call runs it", async () => {
    const { registry, ran, hooked } = setUp();
    const tools = toLangChainTools({ registry, toolSearch: { enabled: "on" } });
    expect(tools.map((t) => t.name).sort()).toEqual(BRIDGES);
    const search = tools.find((t) => t.name === "tool_search")!;
    expect(JSON.stringify(await search.invoke({ query: "create issue" }))).toContain("mcp__gh__create_issue");
    await tools.find((t) => t.name === "tool_call")!.invoke(bridged);
    expect(ran.map((r) => r.name)).toEqual(["mcp__gh__create_issue"]);
    expect(hooked).toEqual(["mcp__gh__create_issue:langchain"]);
  });

  it("OpenAI Agents: the function tools are the bridges; tool_call runs the real tool; a tool outside the selection stays out of reach", async () => {
    const { registry, ran, hooked } = setUp();
    registerGithubLike(registry, "other", ran, 5);
    const tools = toOpenAIAgentsTools({ registry, enabledToolsets: ["mcp-gh"], toolSearch: { enabled: "on" } });
    expect(tools.map((t) => t.name).sort()).toEqual(BRIDGES);
    const call = tools.find((t) => t.name === "tool_call")!;
    await call.invoke(new RunContext({}), JSON.stringify(bridged));
    const refused = await call.invoke(new RunContext({}), JSON.stringify({ name: "mcp__other__create_issue", arguments: { owner: "a", repo: "b" } }));
    expect(String(refused)).toMatch(/error/i);
    expect(ran.map((r) => r.name)).toEqual(["mcp__gh__create_issue"]);
    expect(hooked).toEqual(["mcp__gh__create_issue:openai-agents"]);
  });

  it("off by default, and not combined with names", () => {
    const { registry } = setUp();
    expect(Object.keys(toAiSdkTools({ registry }))).toHaveLength(30);
    expect(() => toAiSdkTools({ registry, names: ["mcp__gh__create_issue"], toolSearch: { enabled: "on" } })).toThrow(/names/);
  });
});
