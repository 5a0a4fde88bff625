/**
 * Compaction with the product's stores: a real SQLite session store and memory files in a temporary
 * profile home (openSessionWiring, as `mibyan chat` uses it), the real terminal and process tools.
 * After a compaction the old session is ended with end_reason compaction and a continuation (parent =
 * old) holds the compacted conversation; later tool calls run under the continuation's id (the task
 * stays); session_search finds the summarised messages in the ended session through the lineage; a
 * background process started before the compaction is polled and killed after it; the continuation
 * keeps the frozen memory snapshot, so the next turn's system prompt is the same bytes.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { getApprovalGate, setApprovalGate } from "../src/approval/default-gate.js";
import { getEnvironmentManager, setEnvironmentManager } from "../src/environments/manager.js";
import { runAgent } from "../src/agent/loop/run-agent.js";
import { SUMMARY_SYNTHETIC } from "../src/agent/compaction/result.js";
import { openSessionWiring, type SessionWiring } from "../src/agent/session-wiring.js";
import { TODO_INJECTION_HEADER } from "../src/agent/stores/todo-store.js";
import { FileMemoryStore } from "../src/agent/stores/memory/file-memory-store.js";
import type { AgentEvent, RunAgentOptions } from "../src/agent/types.js";
import { getProcessRegistry } from "../src/process/default-registry.js";
import { registry } from "../src/registry/singleton.js";
import "../src/tools/terminal.js";
import "../src/tools/process.js";
import { localFileTools } from "./support/local-file-tools.js";
import { reply, startScriptedOpenAI, type Json, type RecordedRequest, type ScriptedOpenAI } from "./support/scripted-openai.js";
import { routed } from "./support/compaction-script.js";

const scratch = mkdtempSync(path.join(tmpdir(), "mibyan-compaction-session-"));
const home = mkdtempSync(path.join(scratch, "profile-"));
const previousGate = getApprovalGate();
const previousManager = getEnvironmentManager();
const tools = localFileTools(scratch, mkdtempSync(path.join(scratch, "user-home-")));
const servers: ScriptedOpenAI[] = [];
let wiring: SessionWiring | undefined;
const moreWirings: SessionWiring[] = [];
let processId: string | undefined;

beforeAll(() => {
  setEnvironmentManager(tools.manager);
  setApprovalGate(tools.gate);
  registry.register({
    name: "blob",
    toolset: "test",
    schema: { description: "Returns a blob.", parameters: { type: "object", properties: { size: { type: "integer" } } } },
    handler: async ({ size }) => "x".repeat(Number(size)),
  });
  registry.register({
    name: "whoami",
    toolset: "test",
    schema: { description: "The session and task of the call.", parameters: { type: "object", properties: {} } },
    handler: async (_args, ctx) => JSON.stringify({ sessionId: ctx.sessionId, taskId: ctx.taskId }),
  });
});
afterAll(async () => {
  for (const server of servers) await server.close();
  wiring?.close();
  for (const w of moreWirings) w.close();
  const processes = getProcessRegistry();
  if (processId !== undefined) await processes.kill(processId.split("|")[0]!, processId.split("|")[1]!).catch(() => undefined);
  await processes.dispose();
  setApprovalGate(previousGate);
  setEnvironmentManager(previousManager);
  await tools.manager.closeAll?.();
  rmSync(scratch, { recursive: true, force: true });
});

const none = { input: 0 };


const toolResult = (request: RecordedRequest, id: string): Json => {
  const message = (request.body.messages as Json[]).find((m) => m.role === "tool" && m.tool_call_id === id);
  return message === undefined ? undefined : JSON.parse(message.content);
};

describe("compaction with the session store, memory and background processes", () => {
  it("lineage, tool calls under the continuation, session_search through the lineage, a background process kept, the memory snapshot frozen", async () => {
    expect((await new FileMemoryStore({ home }).add("memory", "The user prefers tea.")).body.success).toBe(true);
    wiring = await openSessionWiring({ home, registry, memory: {}, model: "scripted-model", source: "chat" });
    const oldId = wiring.sessionId;
    const store = wiring.store;
    const seen: Record<string, Json> = {};

    const server = await startScriptedOpenAI(
      routed(
        [
          // Round 1 (summarised later): a background process, the session id, a big result.
          reply.toolCalls(
            [
              { id: "bg", name: "terminal", args: { command: "echo started-bg; sleep 60", background: true } },
              { id: "w1", name: "whoami", args: {} },
              { id: "big", name: "blob", args: { size: 200_000 } },
            ],
            "I will remember the word zebraquartz.",
            none,
          ),
          // Round 2 (kept): the compaction happens before the request after it.
          reply.toolCalls([{ id: "w2", name: "whoami", args: {} }], null, none),
          // Round 3, after the compaction: poll the process started in round 1, ask the session id again.
          () => {
            if (processId === undefined) return reply.error(400, "the background process was not started");
            return reply.toolCalls(
              [
                { id: "poll", name: "process", args: { action: "poll", process_id: processId.split("|")[1] } },
                { id: "w3", name: "whoami", args: {} },
              ],
              null,
              none,
            );
          },
          (request) => {
            seen.poll = toolResult(request, "poll");
            seen.w3 = toolResult(request, "w3");
            seen.w2 = toolResult(request, "w2");
            return reply.text("first turn done", none);
          },
          // The next user turn.
          reply.text("second turn done", none),
        ],
        [reply.text("SUMMARY: started a background process; the word was noted.")],
      ),
    );
    servers.push(server);

    const events: AgentEvent[] = [];
    const options = (prompt: string): RunAgentOptions => ({
      model: "scripted-model",
      baseURL: server.baseURL,
      apiKey: "sk-test-0123456789",
      prompt,
      registry,
      session: wiring!.session,
      handlers: wiring!.handlers,
      systemPrompt: { memory: wiring!.memory, contextFiles: false, now: new Date("2026-12-04T12:00:00Z") },
      contextTokens: 40_000,
      compaction: { keepFirst: 1, keepLast: 2 },
      retry: { maxRetries: 0 },
      onEvent: (e) => {
        events.push(e);
        if (e.type === "tool_end" && e.callId === "bg") processId = `${oldId}|${JSON.parse(e.content).process_id}`;
      },
    });
    // The person approved a command for this session before the compaction.
    const approved = { rule: "recursive-delete", prefix: "rm -f -r build", backend: "local" };
    tools.gate.grantSession(oldId, [approved]);
    const first = await runAgent(options("please start"));
    expect(first.status).toBe("completed");
    expect(first.finalText).toBe("first turn done");

    // Lineage: the old session ended by compaction, the continuation's parent is it.
    const newId = first.sessionId!;
    expect(newId).not.toBe(oldId);
    expect(wiring.session.id).toBe(newId);
    expect(store.getSession(oldId)).toMatchObject({ end_reason: "compaction" });
    expect(store.getSession(newId)).toMatchObject({ parent_session_id: oldId, source: "chat", model: "scripted-model", end_reason: null });
    expect(store.lineage(newId)).toEqual([newId, oldId]);
    expect(events.find((e) => e.type === "compaction")).toMatchObject({ previousSessionId: oldId, sessionId: newId, removedMessages: 4 });
    expect(events.find((e) => e.type === "compaction")).not.toHaveProperty("warnings");
    // What was approved for the session is the continuation's: not asked again after the compaction.
    expect(tools.gate.sessionApprovals(newId)).toEqual([expect.objectContaining(approved)]);
    expect(tools.gate.sessionApprovals(oldId)).toEqual([]);

    // The old session keeps everything; the continuation holds the compacted conversation and what followed.
    expect(store.getMessages(oldId).map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool", "tool", "assistant", "tool"]);
    const continued = store.getMessages(newId);
    expect(continued.map((m) => m.role)).toEqual(["user", "user", "assistant", "tool", "assistant", "tool", "tool", "assistant"]);
    expect(continued[1]).toMatchObject({ synthetic: SUMMARY_SYNTHETIC });
    expect(continued[1]!.content).toContain("SUMMARY: started a background process");

    // Tool calls before the compaction ran under the old id, after it under the continuation's; the task stayed.
    expect(seen.w2).toEqual({ sessionId: oldId, taskId: oldId });
    expect(seen.w3).toEqual({ sessionId: newId, taskId: oldId });

    // The background process the old session started is the continuation's to poll and manage.
    expect(seen.poll.error).toBeUndefined();
    expect(seen.poll).toMatchObject({ status: "running" });
    const [owner, id] = processId!.split("|") as [string, string];
    expect(owner).toBe(oldId);
    expect((await getProcessRegistry().poll(newId, id)).status).toBe("running");
    await expect(getProcessRegistry().poll("someone-else", id)).rejects.toThrow();
    expect((await getProcessRegistry().kill(newId, id)).status).not.toBe("running");
    processId = undefined;

    // session_search from the continuation finds the summarised message in the ended session.
    const found = JSON.parse(await wiring.handlers.session_search!({ query: "zebraquartz" }, { sessionId: newId }));
    expect(found.count).toBe(1);
    expect(found.results[0]).toMatchObject({ session_id: oldId, from_current_lineage: expect.any(String) });
    // The summary itself is not indexed: it would echo the parent's matches.
    expect(JSON.parse(await wiring.handlers.session_search!({ query: "SUMMARY" }, { sessionId: "another-session" })).count).toBe(0);

    // Memory written on disk since the snapshot: the continuation keeps the frozen snapshot, so the
    // next turn's system prompt is the same bytes (a new snapshot would show the new entry).
    expect((await new FileMemoryStore({ home }).add("memory", "The user moved to Lisbon.")).body.success).toBe(true);
    const second = await runAgent(options("and now?"));
    expect(second.finalText).toBe("second turn done");
    expect(second.sessionId).toBe(newId);
    expect(second.systemPrompt).toBe(first.systemPrompt);
    expect(first.systemPrompt).toContain("The user prefers tea.");
    expect(second.systemPrompt).not.toContain("Lisbon");
    // The next turn resumes the compacted conversation: one summary, no second copy.
    const resumed: Json[] = server.requests.at(-1)!.body.messages;
    expect(resumed.filter((m) => typeof m.content === "string" && m.content.startsWith("[Context compaction")).length).toBe(1);
    expect(resumed.map((m) => m.role)).toEqual(["system", "user", "user", "assistant", "tool", "assistant", "tool", "tool", "assistant", "user"]);
  });

  it("a session resumed after a compaction gets its todo list back from the injected block, and its next compaction injects it once", async () => {
    const first = await openSessionWiring({ home, registry, memory: {}, model: "scripted-model" });
    moreWirings.push(first);
    const server = await startScriptedOpenAI(
      routed(
        [
          reply.toolCalls(
            [
              {
                id: "plan",
                name: "todo",
                args: {
                  todos: [
                    { id: "1", content: "alpha task", status: "in_progress" },
                    { id: "2", content: "beta task\nwith a second line (really)", status: "pending" },
                    { id: "3", content: "gamma done", status: "completed" },
                  ],
                },
              },
              { id: "big", name: "blob", args: { size: 200_000 } },
            ],
            null,
            none,
          ),
          reply.toolCalls([{ id: "w", name: "whoami", args: {} }], null, none),
          reply.text("planned", none),
          // The resumed session's turn.
          reply.toolCalls([{ id: "big2", name: "blob", args: { size: 200_000 } }], null, none),
          reply.toolCalls([{ id: "w2", name: "whoami", args: {} }], null, none),
          reply.text("resumed and done", none),
        ],
        [reply.text("FIRST SUMMARY"), reply.text("SECOND SUMMARY")],
      ),
    );
    servers.push(server);
    const run = (w: SessionWiring, prompt: string) =>
      runAgent({
        model: "scripted-model",
        baseURL: server.baseURL,
        apiKey: "sk-test-0123456789",
        prompt,
        registry,
        session: w.session,
        handlers: w.handlers,
        systemPrompt: { contextFiles: false, now: new Date("2026-12-04T12:00:00Z") },
        contextTokens: 40_000,
        compaction: { keepFirst: 1, keepLast: 2 },
        retry: { maxRetries: 0 },
      });
    const planned = await run(first, "plan the work");
    expect(planned.finalText).toBe("planned");
    const continuation = planned.sessionId!;
    expect(continuation).not.toBe(first.sessionId);
    // The todo call itself was summarised away: only the block tells what the list was.
    const stored = first.store.getMessages(continuation);
    expect(stored.some((m) => m.tool_calls?.some((c) => c.function.name === "todo"))).toBe(false);
    expect(stored.filter((m) => m.content?.startsWith(TODO_INJECTION_HEADER))).toHaveLength(1);

    // Another process resumes it by the id the chat started with: that session was ended by the
    // compaction, so the continuation is resumed; the list comes back from the block (active items).
    const resumed = await openSessionWiring({ home, registry, memory: {}, resume: first.sessionId });
    moreWirings.push(resumed);
    expect(resumed.sessionId).toBe(continuation);
    expect(resumed.resumed).toBe(true);
    const list = JSON.parse(await resumed.handlers.todo!({}, { sessionId: continuation }));
    expect(list.todos).toEqual([
      { id: "1", content: "alpha task", status: "in_progress" },
      { id: "2", content: "beta task\nwith a second line (really)", status: "pending" },
    ]);

    const done = await run(resumed, "go on");
    expect(done.finalText).toBe("resumed and done");
    expect(done.sessionId).not.toBe(continuation);
    const sent: Json[] = server.requests.at(-1)!.body.messages;
    const blocks = sent.filter((m) => typeof m.content === "string" && m.content.startsWith(TODO_INJECTION_HEADER));
    expect(blocks).toHaveLength(1);
    expect(blocks[0].content).toContain("alpha task");
    expect(sent.filter((m) => typeof m.content === "string" && m.content.startsWith("[Context compaction"))).toHaveLength(1);
    expect(sent.find((m) => typeof m.content === "string" && m.content.startsWith("[Context compaction")).content).toContain("SECOND SUMMARY");
    expect(resumed.store.lineage(done.sessionId!)).toEqual([done.sessionId, continuation, first.sessionId]);
    // Two compactions on: the first id still resumes the last continuation.
    expect(resumed.store.compactionTip(first.sessionId)).toBe(done.sessionId);
    expect(resumed.store.compactionTip(done.sessionId!)).toBe(done.sessionId);
  });
});
