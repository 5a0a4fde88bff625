/**
 * delegate_task against a scripted OpenAI-compatible server on 127.0.0.1, with the real built-in tools
 * (terminal, read_file, write_file, execute_code registered) and a real approval gate. One server plays
 * every agent: each request is routed by its system prompt (a child's carries "YOUR TASK:\n<goal>") and
 * by how far its own conversation has got. Acceptance 14-17: the child's tool list, depth and size
 * checks with the original's texts, concurrent batches with sorted results, empty answers, approvals
 * (auto-denied without asking; allowed once with subagent_auto_approve), hooks; and cancellation, one
 * child's endpoint failure, the summary budget, the time limit.
 */

import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";

import { afterEach, beforeAll, describe, expect, it } from "vitest";

import { setApprovalGate } from "../src/approval/default-gate.js";
import { MemoryAllowlist } from "../src/approval/flow/allowlist.js";
import { ApprovalGate } from "../src/approval/flow/gate.js";
import type { ApprovalRequest, ApprovalSurface, GateDecision } from "../src/approval/flow/types.js";
import { runAgent } from "../src/agent/loop/run-agent.js";
import { createDelegateHandler, DELEGATE_TASK_TOOL, type DelegateHandlerOptions, type DelegateTaskOutput } from "../src/agent/delegation/index.js";
import type { SubagentStopEvent } from "../src/agent/delegation/child-run.js";
import { MEMORY_TOOL, TODO_TOOL, registry, createMemoryLogger } from "../src/index.js";
import "../src/tools/terminal.js";
import "../src/tools/read-file.js";
import "../src/tools/write-file.js";
import "../src/tools/execute-code.js";
import { useLoopFixture } from "./support/loop-fixture.js";
import { reply, startScriptedOpenAI, type Json, type RecordedRequest, type ScriptedOpenAI, type Step } from "./support/scripted-openai.js";

const { scratch, tools, serve: serveScript } = useLoopFixture("delegation");
let server: ScriptedOpenAI | undefined;

beforeAll(() => {
  for (const tool of [TODO_TOOL, MEMORY_TOOL, DELEGATE_TASK_TOOL]) if (!registry.has(tool.name)) registry.register(tool);
});

const KEY = "sk-delegation-test-0123456789";
const PARENT_TOOLSETS = ["terminal", "file", "code_execution", "memory", "todo", "delegation"];

// ---- routing one scripted server between the agents ----------------------------------------

type Route = (request: RecordedRequest, turn: number) => Step | Promise<Step>;

const systemOf = (request: RecordedRequest): string => request.body.messages[0]?.role === "system" ? String(request.body.messages[0].content) : "";
const isChild = (request: RecordedRequest, goal: string): boolean => systemOf(request).includes(`YOUR TASK:\n${goal}`);
const toolNames = (request: RecordedRequest): string[] => (request.body.tools ?? []).map((t: Json) => t.function.name);
/** The agent's own turn: assistant messages already in its conversation. */
const turnOf = (request: RecordedRequest): number => request.body.messages.filter((m: Json) => m.role === "assistant").length;
const lastTool = (request: RecordedRequest): Json => request.body.messages.filter((m: Json) => m.role === "tool").at(-1);
const childRequests = (goal: string): RecordedRequest[] => server!.requests.filter((r) => isChild(r, goal));

async function serve(route: Route): Promise<ScriptedOpenAI> {
  const entry = (request: RecordedRequest) => route(request, turnOf(request));
  server = await serveScript(Array.from({ length: 200 }, () => entry));
  return server;
}

const withDelay = (step: Step, delayMs: number): Step => ({ ...step, delayMs }) as Step;

/** A handler for a top-level parent (depth 0) on the scripted server, settings laid over the defaults. */
function delegate(overrides: Partial<DelegateHandlerOptions> = {}) {
  return createDelegateHandler({
    model: "parent-model",
    baseURL: server!.baseURL,
    apiKey: KEY,
    registry,
    toolsets: PARENT_TOOLSETS,
    cwd: scratch,
    contextFiles: false,
    retry: { maxRetries: 0 },
    logger: createMemoryLogger(),
    ...overrides,
  });
}

async function call(handler: ReturnType<typeof delegate>, args: Record<string, unknown>, extra: { signal?: AbortSignal; sessionId?: string } = {}): Promise<Json> {
  return JSON.parse(await handler(args, { sessionId: extra.sessionId ?? "parent-session", signal: extra.signal }));
}

describe("delegate_task: the child's tools (acceptance 14)", () => {
  it("a child gets the parent's tools minus delegate_task, memory and execute_code; its memory call is refused", async () => {
    await serve((request, turn) => {
      if (isChild(request, "inspect the repo")) {
        if (turn === 0) return reply.toolCalls([{ id: "mem", name: "memory", args: { action: "add", target: "memory", content: "secret plan" } }]);
        return reply.text(`memory said: ${lastTool(request).content}`);
      }
      return reply.error(500, "unexpected request");
    });
    const memoryCalls: unknown[] = [];
    const output: DelegateTaskOutput = await call(
      delegate({ handlers: { memory: (args) => (memoryCalls.push(args), "{}"), todo: () => "{}" } }),
      { goal: "inspect the repo", context: "the repo is at /src" },
    );
    const [first] = childRequests("inspect the repo");
    const names = toolNames(first!);
    expect(names).toEqual(expect.arrayContaining(["terminal", "read_file", "write_file", "todo"]));
    for (const blocked of ["delegate_task", "memory", "execute_code", "clarify", "send_message", "cronjob"]) expect(names).not.toContain(blocked);
    expect(systemOf(first!)).toContain("You are a focused subagent working on a specific delegated task.");
    expect(systemOf(first!)).toContain("CONTEXT:\nthe repo is at /src");
    expect(systemOf(first!)).toContain(`WORKSPACE PATH:\n${scratch}`);
    // The child's memory call never reached a handler: it was refused like a tool it does not have.
    expect(memoryCalls).toEqual([]);
    const refusal = JSON.parse(lastTool(childRequests("inspect the repo")[1]!).content);
    expect(refusal.error).toMatch(/Tool memory is not enabled for this session/);
    expect(output.results[0]).toMatchObject({ status: "completed", tool_trace: [{ tool: "memory", status: "error" }] });
  });

  it("a task's toolsets narrow the child's tools (intersected with the parent's), never widen them; an unknown toolset is an error", async () => {
    await serve((request) => reply.text(`tools: ${toolNames(request).join(",")}`));
    const output: DelegateTaskOutput = await call(delegate({ toolsets: ["file", "terminal"] }), {
      tasks: [
        { goal: "only files", toolsets: ["file"] },
        { goal: "wants the web", toolsets: ["web", "terminal"] },
      ],
    });
    expect(toolNames(childRequests("only files")[0]!).sort()).toEqual(["read_file", "write_file"]);
    expect(toolNames(childRequests("wants the web")[0]!).sort()).toEqual(["terminal"]);
    expect(output.results.map((r) => r.status)).toEqual(["completed", "completed"]);
    const unknown = await call(delegate(), { goal: "x", toolsets: ["fiel"] });
    expect(unknown.error).toMatch(/^unknown toolset "fiel"/);
  });
});

describe("delegate_task: depth and size (acceptance 15)", () => {
  it("max_spawn_depth 1: a depth-1 handler answers the exact depth error; a child asked to orchestrate gets no delegate_task", async () => {
    await serve(() => reply.text("leaf done"));
    const atDepthOne = await call(delegate({ depth: 1 }), { goal: "go deeper" });
    expect(atDepthOne).toEqual({
      error:
        "Delegation depth limit reached (depth=1, max_spawn_depth=1). Raise delegation.max_spawn_depth in config.yaml if deeper nesting is required (no hard ceiling, but each level multiplies API cost).",
    });
    expect(server!.requests).toHaveLength(0);
    const output: DelegateTaskOutput = await call(delegate(), { goal: "try to orchestrate", role: "orchestrator" });
    expect(toolNames(childRequests("try to orchestrate")[0]!)).not.toContain("delegate_task");
    expect(output.results[0]).toMatchObject({ role: "leaf", status: "completed", summary: "leaf done" });
  });

  it("max_spawn_depth 2 + orchestrator: the child delegates once; the grandchild has no delegate_task", async () => {
    await serve((request, turn) => {
      if (isChild(request, "grandchild work")) return reply.text("grandchild result: 42");
      if (isChild(request, "orchestrate it")) {
        if (turn === 0) return reply.toolCalls([{ id: "d1", name: "delegate_task", args: { goal: "grandchild work", role: "orchestrator" } }]);
        return reply.text(`combined: ${JSON.parse(lastTool(request).content).results[0].summary}`);
      }
      return reply.error(500, "unexpected request");
    });
    const output: DelegateTaskOutput = await call(delegate({ delegation: { maxSpawnDepth: 2 } }), { goal: "orchestrate it", role: "orchestrator" });
    const child = childRequests("orchestrate it")[0]!;
    expect(toolNames(child)).toContain("delegate_task");
    expect(systemOf(child)).toContain("NOTE: You are at depth 1. The delegation tree is capped at max_spawn_depth=2.");
    const grandchild = childRequests("grandchild work")[0]!;
    expect(toolNames(grandchild)).not.toContain("delegate_task");
    expect(toolNames(grandchild)).toEqual(expect.arrayContaining(["terminal", "read_file"]));
    expect(systemOf(grandchild)).not.toContain("Orchestrator Role");
    expect(output.results[0]).toMatchObject({ role: "orchestrator", status: "completed", summary: "combined: grandchild result: 42" });
    expect(output.results[0]!.tool_trace).toMatchObject([{ tool: "delegate_task", status: "ok" }]);
  });

  it("orchestrator_enabled false: even with max_spawn_depth 2, an orchestrator child is a leaf without delegate_task", async () => {
    await serve(() => reply.text("as a leaf"));
    const output: DelegateTaskOutput = await call(delegate({ delegation: { maxSpawnDepth: 2, orchestratorEnabled: false } }), { goal: "want to orchestrate", role: "orchestrator", max_iterations: 999 });
    expect(toolNames(childRequests("want to orchestrate")[0]!)).not.toContain("delegate_task");
    expect(output.results[0]).toMatchObject({ role: "leaf", status: "completed" });
  });

  it("4 tasks with the default max 3: the exact 'Too many tasks' error; the other checks in order with their texts", async () => {
    await serve(() => reply.text("ok"));
    const handler = delegate();
    const four = Array.from({ length: 4 }, (_, i) => ({ goal: `task ${i}` }));
    expect(await call(handler, { tasks: four })).toEqual({
      error:
        "Too many tasks: 4 provided, but max_concurrent_children is 3. Either reduce the task count, split into multiple delegate_task calls, or increase delegation.max_concurrent_children in config.yaml.",
    });
    expect(await call(delegate({ env: { DELEGATION_MAX_CONCURRENT_CHILDREN: "2" } }), { tasks: four.slice(0, 3) })).toMatchObject({ error: expect.stringMatching(/^Too many tasks: 3 provided, but max_concurrent_children is 2\./) });
    expect(await call(handler, {})).toEqual({ error: "Provide either 'goal' (single task) or 'tasks' (batch)." });
    expect(await call(handler, { tasks: [{ goal: "a" }, "b"] })).toEqual({ error: "Task 1 must be an object, got str." });
    expect(await call(handler, { tasks: [{ goal: "a" }, { context: "no goal" }] })).toEqual({ error: "Task 1 is missing a 'goal'." });
    // The depth check comes first, even for a batch that is too large.
    expect((await call(delegate({ depth: 1 }), { tasks: four })).error).toMatch(/^Delegation depth limit reached/);
    expect(server!.requests).toHaveLength(0);
    // tasks sent as a JSON string is recovered.
    const recovered: DelegateTaskOutput = await call(handler, { tasks: JSON.stringify([{ goal: "from a string" }]) });
    expect(recovered.results).toMatchObject([{ task_index: 0, status: "completed", summary: "ok" }]);
  });
});

describe("delegate_task: batches (acceptance 16)", () => {
  it("three children each waiting ~300 ms run at the same time; results sorted by task_index with every field", async () => {
    const delays: Record<string, number> = { "slow zero": 360, "mid one": 300, "fast two": 240 };
    await serve((request) => {
      const goal = Object.keys(delays).find((g) => isChild(request, g))!;
      return withDelay(reply.text(`answer of ${goal}`, { input: 11, output: 7 }), delays[goal]!);
    });
    // Warm up first (the loop and the openai client load on first use), so the timing measures the batch only.
    await call(delegate(), { goal: "mid one" });
    server!.requests.length = 0;
    const started = performance.now();
    const output: DelegateTaskOutput = await call(delegate(), { tasks: Object.keys(delays).map((goal) => ({ goal })) });
    const elapsed = performance.now() - started;
    // Overlap, from the server's side: every child's request arrived before the first answer could have left.
    const arrivals = server!.requests.map((r) => r.receivedAt).sort((a, b) => a - b);
    expect(arrivals).toHaveLength(3);
    expect(arrivals[2]! - arrivals[0]!).toBeLessThan(240);
    expect(elapsed).toBeLessThan(850);
    expect(output.results.map((r) => r.task_index)).toEqual([0, 1, 2]);
    expect(output.results.map((r) => r.summary)).toEqual(["answer of slow zero", "answer of mid one", "answer of fast two"]);
    for (const result of output.results) {
      expect(result).toMatchObject({ status: "completed", api_calls: 1, model: "parent-model", exit_reason: "completed", tokens: { input: 11, output: 7 }, tool_trace: [] });
      expect(result.duration_seconds).toBeGreaterThan(0.2);
      expect(typeof result.session_id).toBe("string");
    }
    expect(new Set(output.results.map((r) => r.session_id)).size).toBe(3);
    expect(output.total_duration_seconds).toBeGreaterThanOrEqual(output.results[0]!.duration_seconds);
  });

  it("an empty or '(empty)' answer is failed with 'Subagent did not produce a response.'; the tool trace and budget are reported", async () => {
    const file = path.join(scratch, "traced.txt");
    await serve((request, turn) => {
      if (isChild(request, "say nothing")) return reply.text("");
      if (isChild(request, "say empty")) return reply.text("(empty)");
      if (turn === 0) return reply.toolCalls([{ id: "w", name: "write_file", args: { path: file, content: "abc" } }]);
      if (turn === 1) return reply.toolCalls([{ id: "w2", name: "write_file", args: { path: file, content: "abcd" } }]);
      return reply.text("never reached: the budget is 2");
    });
    const output: DelegateTaskOutput = await call(delegate({ delegation: { maxIterations: 2 } }), { tasks: [{ goal: "say nothing" }, { goal: "say empty" }, { goal: "write twice" }] });
    expect(output.results[0]).toMatchObject({ status: "failed", summary: null, error: "Subagent did not produce a response.", exit_reason: "completed" });
    expect(output.results[1]).toMatchObject({ status: "failed", error: "Subagent did not produce a response." });
    // Two tool rounds, then the summary request (answered with the script's text): exit_reason max_iterations.
    expect(output.results[2]).toMatchObject({ status: "completed", exit_reason: "max_iterations", api_calls: 3 });
    expect(output.results[2]!.tool_trace).toEqual([
      { tool: "write_file", args_bytes: Buffer.byteLength(JSON.stringify({ path: file, content: "abc" })), result_bytes: expect.any(Number), status: "ok" },
      { tool: "write_file", args_bytes: Buffer.byteLength(JSON.stringify({ path: file, content: "abcd" })), result_bytes: expect.any(Number), status: "ok" },
    ]);
  });

  it("a summary over the budget is cut to head and tail with a marker", async () => {
    const long = Array.from({ length: 800 }, (_, i) => `line ${i} ${"x".repeat(40)}`).join("\n");
    await serve(() => reply.text(long));
    const output: DelegateTaskOutput = await call(delegate({ settings: { maxSummaryChars: 3000 } }), { goal: "talk a lot" });
    const { summary, summary_truncated } = output.results[0]!;
    expect(summary_truncated).toBe(true);
    expect(summary!.length).toBeLessThanOrEqual(3000);
    expect(summary).toMatch(/^line 0 /);
    expect(summary).toMatch(/line 799 x+$/);
    expect(summary).toContain(`of ${long.length.toLocaleString("en-US")}, to protect your context window.`);
  });
});

describe("delegate_task: approvals and hooks (acceptance 17)", () => {
  afterEach(() => void setApprovalGate(tools.gate));

  /** A surface that would approve, and counts how often it was asked: a child must never reach it. */
  function watchedGate() {
    const asked: ApprovalRequest[] = [];
    const surface: ApprovalSurface = { kind: "terminal", ask: async (request) => (asked.push(request), { scope: "once", by: "user" }) };
    const decisions: GateDecision[] = [];
    const gate = new ApprovalGate({ settings: { mode: "manual" }, surface, allowlist: new MemoryAllowlist(), logger: createMemoryLogger(), home: mkdtempSync(path.join(scratch, "gate-")) });
    gate.addObserver({ onDecision: (d) => void decisions.push(d) });
    // The terminal tool asks the process-wide gate; the handler registers each child's surface on the same one.
    setApprovalGate(gate);
    return { gate, asked, decisions };
  }

  function rmScript(victim: string) {
    return (request: RecordedRequest, turn: number): Step => {
      if (turn === 0) return reply.toolCalls([{ id: "rm", name: "terminal", args: { command: `rm -rf ${victim}` } }]);
      return reply.text(`terminal said: ${lastTool(request).content}`);
    };
  }

  it("a child's dangerous command is denied without asking anybody; the directory survives; the hooks fire with the status", async () => {
    const victim = path.join(scratch, "victim-denied");
    mkdirSync(victim);
    const { gate, asked, decisions } = watchedGate();
    await serve(rmScript(victim));
    const starts: unknown[] = [];
    const stops: SubagentStopEvent[] = [];
    const output: DelegateTaskOutput = await call(
      delegate({ onSubagentStart: (e) => void starts.push(e), onSubagentStop: (e) => void stops.push(e) }),
      { goal: "clean up" },
      { sessionId: "parent-7" },
    );
    expect(existsSync(victim)).toBe(true);
    expect(asked).toEqual([]);
    const childSession = output.results[0]!.session_id;
    expect(decisions).toMatchObject([{ allowed: false, by: "subagent", sessionId: childSession }]);
    expect(output.results[0]!.summary).toMatch(/a subagent cannot ask anybody, so it was not run/);
    expect(starts).toEqual([{ parentSessionId: "parent-7", childSessionId: childSession, childRole: "leaf", taskIndex: 0, goal: "clean up" }]);
    expect(stops).toMatchObject([{ parentSessionId: "parent-7", childSessionId: childSession, childStatus: "completed", childSummary: output.results[0]!.summary, durationMs: expect.any(Number) }]);
    // The child's surface is gone with the child: the same session's next check asks the gate's own surface.
    await gate.check(`rm -rf ${victim}`, { sessionId: childSession, backend: "local" });
    expect(asked).toHaveLength(1);
  });

  it("subagent_auto_approve: the command runs once (scope once), still without asking; hardline rules still block", async () => {
    const victim = path.join(scratch, "victim-approved");
    mkdirSync(victim);
    const { gate, asked, decisions } = watchedGate();
    await serve(rmScript(victim));
    const output: DelegateTaskOutput = await call(delegate({ delegation: { subagentAutoApprove: true } }), { goal: "clean up" });
    expect(existsSync(victim)).toBe(false);
    expect(asked).toEqual([]);
    expect(decisions).toMatchObject([{ allowed: true, by: "subagent", scope: "once" }]);
    expect(output.results[0]!.status).toBe("completed");
    expect(gate.sessionApprovals(output.results[0]!.session_id)).toEqual([]);

    await server!.close();
    await serve((request, turn) => (turn === 0 ? reply.toolCalls([{ id: "h", name: "terminal", args: { command: "rm -rf /" } }]) : reply.text(lastTool(request).content)));
    const hard: DelegateTaskOutput = await call(delegate({ delegation: { subagentAutoApprove: true } }), { goal: "wipe" });
    expect(decisions.at(-1)).toMatchObject({ allowed: false, by: "hardline" });
    expect(hard.results[0]!.summary).toMatch(/never allowed/);
  });

  it("a throwing hook never breaks the delegation", async () => {
    await serve(() => reply.text("fine"));
    const output: DelegateTaskOutput = await call(
      delegate({
        onSubagentStart: () => {
          throw new Error("start hook broke");
        },
        onSubagentStop: async () => {
          throw new Error("stop hook broke");
        },
      }),
      { goal: "anything" },
    );
    expect(output.results[0]).toMatchObject({ status: "completed", summary: "fine" });
  });
});

describe("delegate_task: cancellation, failures, time limit", () => {
  it("the parent's signal interrupts every child; the call returns at once with interrupted results", async () => {
    await serve(() => reply.hang());
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("user pressed Ctrl-C")), 200);
    const started = performance.now();
    const output: DelegateTaskOutput = await call(delegate(), { tasks: [{ goal: "wait one" }, { goal: "wait two" }] }, { signal: controller.signal });
    expect(performance.now() - started).toBeLessThan(3000);
    expect(output.results.map((r) => [r.status, r.exit_reason])).toEqual([
      ["interrupted", "interrupted"],
      ["interrupted", "interrupted"],
    ]);
  });

  it("the parent's run cancelled mid-delegation: runAgent returns interrupted and the children stopped", async () => {
    await serve((request) => (isChild(request, "hang here") ? reply.hang() : reply.toolCalls([{ id: "d", name: "delegate_task", args: { goal: "hang here" } }])));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 250);
    const result = await runAgent({
      model: "parent-model",
      baseURL: server!.baseURL,
      apiKey: KEY,
      prompt: "delegate something",
      registry,
      toolsets: PARENT_TOOLSETS,
      handlers: { delegate_task: delegate() },
      systemPrompt: { contextFiles: false },
      signal: controller.signal,
    });
    expect(result.status).toBe("interrupted");
    const toolMessage = result.messages.find((m) => m.role === "tool")!;
    expect(JSON.parse(toolMessage.content as string).results[0].status).toBe("interrupted");
  });

  it("one child's 401 and another's 500 are their own error results; the third child completes", async () => {
    await serve((request) => {
      if (isChild(request, "bad key")) return reply.error(401, "invalid api key sk-delegation-test-0123456789");
      if (isChild(request, "server down")) return reply.error(500, "boom");
      return reply.text("healthy");
    });
    const output: DelegateTaskOutput = await call(delegate(), { tasks: [{ goal: "bad key" }, { goal: "server down" }, { goal: "works" }] });
    expect(output.results.map((r) => r.status)).toEqual(["error", "error", "completed"]);
    expect(output.results[0]!.error).toMatch(/authentication failed/);
    expect(output.results[0]!.error).not.toContain(KEY);
    expect(output.results[1]!.error).toMatch(/HTTP 500/);
    expect(output.results[2]!.summary).toBe("healthy");
  });

  it("child_timeout: a child past its time limit is stopped and reported as timeout", async () => {
    await serve((request) => (isChild(request, "too slow") ? reply.hang() : reply.text("quick")));
    const output: DelegateTaskOutput = await call(delegate({ settings: { childTimeoutMs: 300 } }), { tasks: [{ goal: "too slow" }, { goal: "fast" }] });
    expect(output.results[0]).toMatchObject({ status: "timeout", exit_reason: "timeout", error: expect.stringMatching(/did not finish within/) });
    expect(output.results[1]).toMatchObject({ status: "completed", summary: "quick" });
  });

  it("children use delegation.model and a key only for the parent's own endpoint", async () => {
    await serve(() => reply.text("ok"));
    await call(delegate({ delegation: { model: "cheap-model" } }), { goal: "which model" });
    expect(server!.requests[0]!.body.model).toBe("cheap-model");
    expect(server!.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    const other = await startScriptedOpenAI([reply.text("elsewhere")]);
    try {
      const output: DelegateTaskOutput = await call(delegate({ delegation: { baseUrl: other.baseURL } }), { goal: "other host" });
      expect(output.results[0]!.summary).toBe("elsewhere");
      expect(other.requests[0]!.headers.authorization).not.toContain(KEY);
    } finally {
      await other.close();
    }
  });
});

describe("delegate_task: schema, settings, plugin hooks", () => {
  it("the description states the real limits, rebuilt at each listing from the settings", async () => {
    const { ToolRegistry, getToolDefinitions } = await import("../src/index.js");
    const { delegateTaskTool, delegationSettings } = await import("../src/agent/delegation/index.js");
    const own = new ToolRegistry({ logger: createMemoryLogger() });
    let section: Record<string, unknown> = {};
    own.register(delegateTaskTool(() => delegationSettings(section, {})));
    const describeNow = () => getToolDefinitions({ registry: own })[0]!.function;
    expect(describeNow().description).toContain("at most 3 per call");
    expect(describeNow().description).toContain("Subagents cannot delegate further (max_spawn_depth 1).");
    expect(describeNow().description).toContain("a budget of 50 model requests");
    expect(JSON.stringify(describeNow().parameters)).not.toContain("orchestrator");
    expect(Object.keys((describeNow().parameters as { properties: object }).properties).sort()).toEqual(["context", "goal", "tasks", "toolsets"]);
    section = { maxConcurrentChildren: 5, maxSpawnDepth: 3, maxIterations: 12 };
    expect(describeNow().description).toContain("at most 5 per call");
    expect(describeNow().description).toContain("Delegation may nest 3 levels deep");
    expect(describeNow().description).toContain("a budget of 12 model requests");
    expect(JSON.stringify(describeNow().parameters)).toContain("orchestrator");
  });

  it("settings: config wins over DELEGATION_MAX_CONCURRENT_CHILDREN, which wins over the default; api_key_env is read", async () => {
    const { delegationSettings, childEndpoint } = await import("../src/agent/delegation/index.js");
    expect(delegationSettings({}, {}).maxConcurrentChildren).toBe(3);
    expect(delegationSettings({}, { DELEGATION_MAX_CONCURRENT_CHILDREN: "6" }).maxConcurrentChildren).toBe(6);
    expect(delegationSettings({}, { DELEGATION_MAX_CONCURRENT_CHILDREN: "lots" }).maxConcurrentChildren).toBe(3);
    expect(delegationSettings({ maxConcurrentChildren: 2 }, { DELEGATION_MAX_CONCURRENT_CHILDREN: "6" }).maxConcurrentChildren).toBe(2);
    expect(delegationSettings({ childTimeoutSeconds: 45 }, {}).childTimeoutMs).toBe(45_000);
    const parent = { model: "m", baseURL: "http://127.0.0.1:1/v1", apiKey: "parent-key" };
    expect(childEndpoint({ apiKeyEnv: "SUB_KEY" }, parent, { SUB_KEY: "sub-key" })).toEqual({ model: "m", baseURL: parent.baseURL, apiKey: "sub-key" });
    expect(childEndpoint({ baseUrl: "http://127.0.0.1:1/v1/" }, parent, {}).apiKey).toBe("parent-key");
    expect(childEndpoint({ baseUrl: "https://elsewhere.example/v1", model: "small" }, parent, {})).toEqual({ model: "small", baseURL: "https://elsewhere.example/v1", apiKey: undefined });
  });

  it("plugin hooks subagent_start / subagent_stop get the events; a throwing one is logged", async () => {
    const { ToolRegistry } = await import("../src/index.js");
    const { PluginHooks } = await import("../src/plugins/plugin-hooks.js");
    const logger = createMemoryLogger();
    const hooks = new PluginHooks({ registry: new ToolRegistry({ logger }), logger, approval: () => tools.gate });
    const seen: unknown[] = [];
    hooks.add("watcher", "subagent_start", ((event: unknown) => void seen.push(["start", event])) as (event: never) => unknown);
    hooks.add("broken", "subagent_stop", (() => {
      throw new Error("hook bug");
    }) as (event: never) => unknown);
    hooks.add("watcher", "subagent_stop", ((event: unknown) => void seen.push(["stop", event])) as (event: never) => unknown);
    await serve(() => reply.text("done"));
    const output: DelegateTaskOutput = await call(
      delegate({ onSubagentStart: (e) => hooks.runSubagentHooks("subagent_start", e), onSubagentStop: (e) => hooks.runSubagentHooks("subagent_stop", e) }),
      { goal: "hooked" },
    );
    expect(seen).toMatchObject([
      ["start", { childRole: "leaf", goal: "hooked", taskIndex: 0 }],
      ["stop", { childStatus: "completed", childSummary: "done" }],
    ]);
    expect(output.results[0]!.status).toBe("completed");
    expect(logger.messages.some((e) => e.message.includes("subagent_stop hook threw"))).toBe(true);
  });
});
