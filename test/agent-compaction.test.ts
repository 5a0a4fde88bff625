/**
 * Context compaction in runAgent against a scripted OpenAI-compatible server on 127.0.0.1: a
 * conversation that crosses the threshold is compacted before the next request (first messages,
 * the summary, last messages, no orphan tool message, the same system prompt bytes); the summary
 * request offers no tools; the endpoint's reported prompt_tokens count; the todo list's active items
 * are re-injected once per compaction, never twice, and not at all when none is active; a failed
 * summary request keeps the whole conversation and is not retried every turn.
 */


import { describe, expect, it } from "vitest";

import { runAgent } from "../src/agent/loop/run-agent.js";
import { InMemoryTodoStore, TODO_INJECTION_HEADER } from "../src/agent/stores/todo-store.js";
import { createTodoHandler, TODO_TOOL } from "../src/agent/tools/todo.js";
import type { AgentEvent, AgentMessage, RunAgentOptions, SessionRecorder } from "../src/agent/types.js";
import { ToolRegistry, createMemoryLogger } from "../src/index.js";
import { useLoopFixture } from "./support/loop-fixture.js";
import { reply, type Json, type ScriptedOpenAI, type Step } from "./support/scripted-openai.js";
import { isSummaryRequest, routed } from "./support/compaction-script.js";

const { scratch, tools, serve } = useLoopFixture("compaction");
let server: ScriptedOpenAI | undefined;

/** A registry with `blob` (returns `size` characters) and the todo tool's schema. */
function testRegistry(): ToolRegistry {
  const registry = new ToolRegistry({ logger: createMemoryLogger() });
  registry.register({
    name: "blob",
    toolset: "test",
    schema: { description: "Returns a blob.", parameters: { type: "object", properties: { size: { type: "integer" }, label: { type: "string" } } } },
    handler: async ({ size, label }) => `${String(label)}:${"x".repeat(Number(size))}`,
  });
  registry.register(TODO_TOOL);
  return registry;
}

// Replies report no prompt_tokens (0), so the loop estimates; one test reports them.
const none = { input: 0 };
const blobs = (...specs: [string, number][]): Step => reply.toolCalls(specs.map(([id, size]) => ({ id, name: "blob", args: { size, label: id } })), null, none);



const agentRequests = (s: ScriptedOpenAI) => s.requests.filter((r) => !isSummaryRequest(r));
const summaryRequests = (s: ScriptedOpenAI) => s.requests.filter(isSummaryRequest);

/** Tool messages answer a call of the assistant message before their block; every call is answered. */
function pairingProblems(messages: Json[]): string[] {
  const problems: string[] = [];
  messages.forEach((m, i) => {
    if (m.role === "tool") {
      let j = i - 1;
      while (j >= 0 && messages[j].role === "tool") j--;
      if (messages[j]?.role !== "assistant" || !(messages[j].tool_calls ?? []).some((c: Json) => c.id === m.tool_call_id)) problems.push(`orphan ${m.tool_call_id}`);
    }
    for (const call of m.role === "assistant" ? (m.tool_calls ?? []) : []) {
      let j = i + 1;
      let found = false;
      for (; j < messages.length && messages[j].role === "tool"; j++) if (messages[j].tool_call_id === call.id) found = true;
      if (!found) problems.push(`unanswered ${call.id}`);
    }
  });
  return problems;
}

// 4,000 tokens of context, compaction past 2,000 (~8,000 characters).
const base = (s: ScriptedOpenAI, more: Partial<RunAgentOptions> = {}): RunAgentOptions => ({
  model: "scripted-model",
  baseURL: s.baseURL,
  apiKey: "sk-test-0123456789",
  systemPrompt: "You are a test agent.",
  registry: testRegistry(),
  contextTokens: 4000,
  retry: { maxRetries: 0 },
  ...more,
  compaction: { keepFirst: 1, keepLast: 2, ...(more.compaction === false ? {} : more.compaction) },
});

const contentOf = (m: Json): string => (typeof m.content === "string" ? m.content : "");

describe("compaction in the loop", () => {
  it("past the threshold: the next request holds the first message, the summary, the last messages (the tool round whole) and the same system prompt", async () => {
    server = await serve(
      routed(
        [blobs(["c1", 3000]), blobs(["c2a", 3000], ["c2b", 3000]), reply.text("all done", none)],
        [reply.text("SUMMARY: blob c1 returned 3000 x characters.")],
      ),
    );
    const events: AgentEvent[] = [];
    const result = await runAgent(base(server, { prompt: "start the work", onEvent: (e) => events.push(e) }));
    expect(result.status).toBe("completed");
    expect(result.finalText).toBe("all done");

    // agent, agent, summary, agent
    expect(server.requests.map((r) => (isSummaryRequest(r) ? "summary" : "agent"))).toEqual(["agent", "agent", "summary", "agent"]);
    const [first, , third] = agentRequests(server);
    const sent: Json[] = third!.body.messages;
    expect(sent.map((m) => m.role)).toEqual(["system", "user", "user", "assistant", "tool", "tool"]);
    expect(sent[1].content).toBe("start the work");
    expect(sent[2].content).toMatch(/^\[Context compaction: summary of earlier turns\]/);
    expect(sent[2].content).toContain("not a new request from the user");
    expect(sent[2].content).toContain("SUMMARY: blob c1 returned 3000 x characters.");
    expect(sent[3].tool_calls.map((c: Json) => c.id)).toEqual(["c2a", "c2b"]);
    expect(sent.slice(4).map((m) => m.tool_call_id)).toEqual(["c2a", "c2b"]);
    expect(pairingProblems(sent)).toEqual([]);
    // Nothing internal reaches the endpoint (synthetic stays home); the system prompt is the same bytes.
    expect(JSON.stringify(sent)).not.toContain("synthetic");
    expect(JSON.stringify(sent[0])).toBe(JSON.stringify(first!.body.messages[0]));

    // The summary request: no tools, no tool_choice, the middle as a fenced transcript.
    const summary = summaryRequests(server)[0]!.body;
    expect(summary.tools).toBeUndefined();
    expect(summary.tool_choice).toBeUndefined();
    expect(summary.model).toBe("scripted-model");
    expect(summary.messages[1].content).toContain("blob({\"size\":3000,\"label\":\"c1\"})");
    expect(summary.messages[1].content).toContain("c1:xxxx");
    expect(summary.messages[1].content).not.toContain("c2a:");

    const compaction = events.find((e) => e.type === "compaction");
    expect(compaction).toMatchObject({ type: "compaction", removedMessages: 2, keptMessages: 4, snapshotsInjected: 0 });
    if (compaction?.type !== "compaction") throw new Error("no compaction event");
    expect(compaction.tokensBefore).toBeGreaterThan(2000);
    expect(compaction.tokensAfter).toBeLessThan(compaction.tokensBefore);
    // The result is the compacted conversation, to pass back as messages; the usage counts the summary request.
    expect(result.messages.map((m) => m.role)).toEqual(["user", "user", "assistant", "tool", "tool", "assistant"]);
    expect(result.usage.requests).toBe(4);
    expect(result.turns).toBe(3);
  });

  it("counts the endpoint's reported prompt_tokens: a short conversation the endpoint says is 5,000 tokens is compacted", async () => {
    server = await serve(
      routed([reply.toolCalls([{ id: "c1", name: "blob", args: { size: 10, label: "c1" } }], null, { input: 5000 }), reply.text("ok", none)], [reply.text("short summary")]),
    );
    const history = [
      { role: "user" as const, content: "one" },
      { role: "assistant" as const, content: "two" },
      { role: "user" as const, content: "three" },
      { role: "assistant" as const, content: "four" },
    ];
    const result = await runAgent(base(server, { messages: history, prompt: "five" }));
    expect(result.status).toBe("completed");
    expect(summaryRequests(server)).toHaveLength(1);
    expect(agentRequests(server)[1]!.body.messages.map((m: Json) => contentOf(m).slice(0, 20))).toEqual([
      "You are a test agent",
      "one",
      "[Context compaction:",
      "",
      "c1:xxxxxxxxxx",
    ]);
  });

  it("compaction: false, or a conversation under the threshold: no summary request", async () => {
    server = await serve(routed([blobs(["c1", 3000]), blobs(["c2a", 3000], ["c2b", 3000]), reply.text("done", none)], []));
    const result = await runAgent({ ...base(server, { prompt: "go" }), compaction: false });
    expect(result.status).toBe("completed");
    expect(summaryRequests(server)).toHaveLength(0);
    expect(agentRequests(server)[2]!.body.messages).toHaveLength(7);
  });

  it("a failed summary request keeps the whole conversation, is reported once, and is not retried every turn", async () => {
    server = await serve(
      routed(
        [blobs(["c1", 3000]), blobs(["c2a", 3000], ["c2b", 3000]), blobs(["c3", 3000]), reply.text("finished", none)],
        [reply.error(400, "the summariser is down"), reply.text("should never be asked")],
      ),
    );
    const events: AgentEvent[] = [];
    const result = await runAgent(base(server, { prompt: "go", onEvent: (e) => events.push(e) }));
    expect(result.status).toBe("completed");
    expect(result.finalText).toBe("finished");
    expect(summaryRequests(server)).toHaveLength(1);
    const failures = events.filter((e) => e.type === "compaction_failed");
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ reason: expect.stringContaining("the summariser is down") });
    expect(events.some((e) => e.type === "compaction")).toBe(false);
    // Everything sent, nothing lost: the last request carries every message of the run.
    const last = agentRequests(server).at(-1)!.body.messages;
    expect(last).toHaveLength(1 + 1 + 2 + 3 + 2); // system, prompt, c1 round, c2 round, c3 round
    expect(result.messages).toHaveLength(1 + 2 + 3 + 2 + 1);
  });
});

describe("the todo list after compaction", () => {
  /** The todo write, and a blob so that the first round is worth summarising. */
  const todoWrite = (items: Json[]): Step =>
    reply.toolCalls(
      [
        { id: "t1", name: "todo", args: { todos: items } },
        { id: "c1", name: "blob", args: { size: 3000, label: "c1" } },
      ],
      null,
      none,
    );

  it("active items are injected right after the summary, exactly once per compaction, across two compactions", async () => {
    server = await serve(
      routed(
        [
          todoWrite([
            { id: "1", content: "step one", status: "in_progress" },
            { id: "2", content: "step two", status: "pending" },
            { id: "3", content: "finished thing", status: "completed" },
          ]),
          blobs(["c2a", 2000], ["c2b", 2000]),
          blobs(["c3a", 2000], ["c3b", 2000]),
          reply.text("done", none),
        ],
        [reply.text("FIRST SUMMARY"), reply.text("SECOND SUMMARY")],
      ),
    );
    const events: AgentEvent[] = [];
    const store = new InMemoryTodoStore();
    const result = await runAgent(base(server, { prompt: "plan and work", handlers: { todo: createTodoHandler(store) }, onEvent: (e) => events.push(e) }));
    expect(result.status).toBe("completed");
    expect(summaryRequests(server)).toHaveLength(2);
    expect(events.filter((e) => e.type === "compaction")).toHaveLength(2);

    const agent = agentRequests(server);
    for (const [index, summaryText] of [
      [2, "FIRST SUMMARY"],
      [3, "SECOND SUMMARY"],
    ] as const) {
      const sent: Json[] = agent[index]!.body.messages;
      const snapshots = sent.filter((m) => contentOf(m).includes(TODO_INJECTION_HEADER));
      const summaries = sent.filter((m) => contentOf(m).startsWith("[Context compaction"));
      expect(snapshots, `request ${index}`).toHaveLength(1);
      expect(summaries, `request ${index}`).toHaveLength(1);
      expect(summaries[0].content).toContain(summaryText);
      // Right after the summary, a user message; active items only.
      expect(sent.indexOf(snapshots[0])).toBe(sent.indexOf(summaries[0]) + 1);
      expect(snapshots[0].role).toBe("user");
      expect(snapshots[0].content).toContain("[>] 1. step one (in_progress)");
      expect(snapshots[0].content).toContain("[ ] 2. step two (pending)");
      expect(snapshots[0].content).not.toContain("finished thing");
      expect(pairingProblems(sent)).toEqual([]);
    }
    // The second summary folded the first one in (it was in the middle), and the old snapshot with it.
    expect(summaryRequests(server)[1]!.body.messages[1].content).toContain("FIRST SUMMARY");
    expect(events.filter((e) => e.type === "compaction").map((e) => (e as { snapshotsInjected: number }).snapshotsInjected)).toEqual([1, 1]);
  });

  it("only completed or cancelled items: nothing is injected", async () => {
    server = await serve(
      routed(
        [
          todoWrite([
            { id: "1", content: "all done", status: "completed" },
            { id: "2", content: "dropped", status: "cancelled" },
          ]),
          blobs(["c2a", 3000], ["c2b", 3000]),
          reply.text("done", none),
        ],
        [reply.text("A SUMMARY")],
      ),
    );
    const result = await runAgent(base(server, { prompt: "plan", handlers: { todo: createTodoHandler(new InMemoryTodoStore()) } }));
    expect(result.status).toBe("completed");
    expect(summaryRequests(server)).toHaveLength(1);
    const sent: Json[] = agentRequests(server)[2]!.body.messages;
    expect(sent.some((m) => contentOf(m).startsWith("[Context compaction"))).toBe(true);
    expect(sent.some((m) => contentOf(m).includes(TODO_INJECTION_HEADER))).toBe(false);
  });
});

describe("compaction's edges", () => {
  it("compaction.model writes the summary on the same endpoint", async () => {
    server = await serve(routed([blobs(["c1", 3000]), blobs(["c2a", 3000], ["c2b", 3000]), reply.text("ok", none)], [reply.text("S")]));
    await runAgent(base(server, { prompt: "go", compaction: { model: "cheap-summariser" } }));
    expect(summaryRequests(server).map((r) => r.body.model)).toEqual(["cheap-summariser"]);
    expect(agentRequests(server).map((r) => r.body.model)).toEqual(["scripted-model", "scripted-model", "scripted-model"]);
  });

  it("a compaction that leaves the prompt over the threshold (the kept messages alone are too big) is the run's last", async () => {
    server = await serve(
      routed(
        [blobs(["c1", 3000]), blobs(["c2", 9000]), blobs(["c3", 100]), blobs(["c4", 100]), reply.text("ok", none)],
        [reply.text("S"), reply.text("never")],
      ),
    );
    const events: AgentEvent[] = [];
    const result = await runAgent(base(server, { prompt: "go", onEvent: (e) => events.push(e) }));
    expect(result.status).toBe("completed");
    expect(summaryRequests(server)).toHaveLength(1);
    const compaction = events.find((e) => e.type === "compaction");
    expect(compaction).toBeDefined();
    expect((compaction as { tokensAfter: number }).tokensAfter).toBeGreaterThan(2000);
  });

  it("a recorder without continueCompacted keeps its id and gets only the new messages; one whose fork throws keeps the whole conversation", async () => {
    server = await serve(routed([blobs(["c1", 3000]), blobs(["c2a", 3000], ["c2b", 3000]), reply.text("ok", none)], [reply.text("S")]));
    const appended: AgentMessage[] = [];
    const plain: SessionRecorder = { id: "plain-session", append: (messages) => void appended.push(...messages) };
    const events: AgentEvent[] = [];
    const result = await runAgent(base(server, { prompt: "go", session: plain, onEvent: (e) => events.push(e) }));
    expect(result.sessionId).toBe("plain-session");
    expect(events.find((e) => e.type === "compaction")).toMatchObject({ previousSessionId: "plain-session", sessionId: "plain-session" });
    // The recorder saw every real message once and no made-up one.
    expect(appended.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "tool", "tool", "assistant"]);
    expect(appended.some((m) => m.synthetic !== undefined)).toBe(false);
    await server.close();

    server = await serve(routed([blobs(["c1", 3000]), blobs(["c2a", 3000], ["c2b", 3000]), reply.text("ok", none)], [reply.text("S")]));
    const failing: SessionRecorder = {
      id: "broken-fork",
      append: () => undefined,
      continueCompacted: () => {
        throw new Error("disk full");
      },
    };
    const failures: AgentEvent[] = [];
    const kept = await runAgent(base(server, { prompt: "go", session: failing, onEvent: (e) => failures.push(e) }));
    expect(kept.sessionId).toBe("broken-fork");
    expect(failures.filter((e) => e.type === "compaction_failed")).toEqual([{ type: "compaction_failed", reason: "the session could not be continued: disk full", tokens: expect.any(Number) }]);
    expect(agentRequests(server).at(-1)!.body.messages).toHaveLength(1 + 1 + 2 + 3);
  });

  it("cancelled during the summary request: the run returns interrupted with the conversation whole, no failure reported", async () => {
    const controller = new AbortController();
    server = await serve(
      routed([blobs(["c1", 3000]), blobs(["c2a", 3000], ["c2b", 3000])], [
        () => {
          controller.abort(new Error("user pressed Ctrl-C"));
          return reply.hang();
        },
      ]),
    );
    const events: AgentEvent[] = [];
    const result = await runAgent(base(server, { prompt: "go", signal: controller.signal, onEvent: (e) => events.push(e) }));
    expect(result.status).toBe("interrupted");
    expect(result.messages).toHaveLength(1 + 2 + 3);
    expect(events.some((e) => e.type === "compaction" || e.type === "compaction_failed")).toBe(false);
  });
});
