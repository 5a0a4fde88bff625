// Acceptance 10-16 of spec 3.3: plugin hooks on real registry calls, block and approve directives through
// the real approval gate (a scripted surface stands in for the person), directive order, post_tool_call
// and transform_tool_result, MCP-sourced and execute_code-bridged calls, unknown hook names, sessions.
import { readFileSync } from "node:fs";
import path from "node:path";

import { describe, expect, it } from "vitest";

import { ApprovalGate } from "../src/approval/flow/gate.js";
import type { ApprovalAnswer, ApprovalRequest, ApprovalSurface } from "../src/approval/flow/types.js";
import { runCode } from "../src/code-execution/run-code.js";
import { createMemoryLogger } from "../src/util/logger.js";
import { config, load, plugin, sandbox, warnings } from "./fixtures/plugins/plugin-home.js";

type Box = ReturnType<typeof sandbox>;
const g = globalThis as Record<string, unknown>;

/** A tool whose handler counts its calls in `globalThis.__calls[name]`. */
function countedTool(box: Box, name: string, reply: unknown = "ran", source?: { kind: "mcp"; server: string }): void {
  ((g.__calls ??= {}) as Record<string, number>)[name] = 0;
  box.registry.register({
    name,
    toolset: source ? `mcp-${source.server}` : "app",
    schema: { description: name, parameters: { type: "object", properties: { path: { type: "string" } } } },
    handler: () => {
      const calls = (g.__calls ??= {}) as Record<string, number>;
      calls[name] = (calls[name] ?? 0) + 1;
      return reply;
    },
    ...(source ? { source } : {}),
  });
}
const calls = (name: string): number => ((g.__calls ?? {}) as Record<string, number>)[name] ?? 0;

/** Enables plugins `a-…`, `b-…` in key order with the given register bodies. */
async function withPlugins(box: Box, bodies: Record<string, string>, extra = "") {
  for (const [key, body] of Object.entries(bodies)) plugin(path.join(box.home, "plugins"), key, box.marks, body);
  config(box, `plugins:\n  enabled: [${Object.keys(bodies).join(", ")}]\n${extra}`);
  return load(box);
}

function scriptedSurface(answer: ApprovalAnswer | (() => Promise<ApprovalAnswer>)): ApprovalSurface & { requests: ApprovalRequest[] } {
  const requests: ApprovalRequest[] = [];
  return {
    kind: "scripted",
    requests,
    ask: async (request) => {
      requests.push(request);
      return typeof answer === "function" ? answer() : answer;
    },
  };
}

function gate(box: Box, surface: ApprovalSurface): ApprovalGate {
  return new ApprovalGate({ home: box.home, settings: { mode: "manual" }, surface, logger: createMemoryLogger() });
}

describe("no plugin hooks, no cost", () => {
  it("installs nothing on the registry until a tool-call hook exists, and removes the bridge with the last one", async () => {
    const box = sandbox();
    const manager = await withPlugins(box, { quiet: `ctx.registerHook("on_session_start", () => undefined);` });
    expect(box.registry.hooks.pre).toHaveLength(0);
    expect(box.registry.hooks.post).toHaveLength(0);
    await manager.close();
  });
});

describe("a registry pre-hook may block with a failed ToolResult (what the block directive uses)", () => {
  it("the model gets exactly its error; a successful ToolResult is not a block but an invalid answer", async () => {
    const box = sandbox();
    countedTool(box, "guarded");
    const remove = box.registry.addPreHook(() => ({ success: false, error: { kind: "blocked", message: "exactly this" } }));
    const outcome = await box.registry.run("guarded", {});
    expect(outcome.content).toBe('{"error":"exactly this"}');
    expect(outcome.result.error).toEqual({ kind: "blocked", message: "exactly this" });
    remove();
    box.registry.addPreHook(() => ({ success: true, data: "smuggled" }));
    const odd = await box.registry.run("guarded", {});
    expect(odd.result.error?.kind).toBe("blocked");
    expect(odd.content).toMatch(/returned an invalid value for guarded; it must return a tool call, a failed ToolResult or null \(block\), or undefined \(pass\)/);
    expect(calls("guarded")).toBe(0);
  });
});

describe("block directive (11) and hook failures (10)", () => {
  it("blocks with the message as the model's error, skips the handler, and reports status blocked to post_tool_call", async () => {
    const box = sandbox();
    countedTool(box, "write_file");
    g.__post = [];
    const manager = await withPlugins(box, {
      guard: `ctx.registerHook("pre_tool_call", (e) => e.toolName === "write_file" ? { action: "block", message: "no" } : undefined);
              ctx.registerHook("post_tool_call", (e) => { globalThis.__post.push(e); });`,
    });
    const outcome = await box.registry.run("write_file", { path: "/etc/passwd" }, { sessionId: "s1", taskId: "t1", toolCallId: "call-1" });
    expect(outcome.content).toBe('{"error":"no"}');
    expect(outcome.result.error).toEqual({ kind: "blocked", message: "no" });
    expect(calls("write_file")).toBe(0);
    expect(g.__post).toEqual([
      { toolName: "write_file", args: { path: "/etc/passwd" }, taskId: "t1", sessionId: "s1", toolCallId: "call-1", surface: "library", result: '{"error":"no"}', durationMs: expect.any(Number), status: "blocked" },
    ]);
    await manager.close();
  });

  it("ignores a block without a message, and non-object answers", async () => {
    const box = sandbox();
    countedTool(box, "t");
    const manager = await withPlugins(box, {
      a: `ctx.registerHook("pre_tool_call", () => ({ action: "block" }));`,
      b: `ctx.registerHook("pre_tool_call", () => ({ action: "block", message: "   " }));`,
      c: `ctx.registerHook("pre_tool_call", () => "block");`,
      d: `ctx.registerHook("pre_tool_call", () => 42);`,
    });
    expect(await box.registry.dispatch("t", {})).toBe("ran");
    expect(calls("t")).toBe(1);
    await manager.close();
  });

  it("a throwing pre_tool_call hook is logged, the other hooks still run, and the tool runs (fail open)", async () => {
    const box = sandbox();
    countedTool(box, "t2");
    g.__seen = [];
    const manager = await withPlugins(box, {
      a: `ctx.registerHook("pre_tool_call", () => { throw new Error("hook bug"); });`,
      b: `ctx.registerHook("pre_tool_call", async () => { await null; throw new Error("async hook bug"); });`,
      c: `ctx.registerHook("pre_tool_call", (e) => { globalThis.__seen.push(e.toolName); });`,
    });
    expect(await box.registry.dispatch("t2", {})).toBe("ran");
    expect(g.__seen).toEqual(["t2"]);
    expect(warnings(box).filter((w) => /pre_tool_call hook threw \(ignored\): Error: (async )?hook bug/.test(w))).toHaveLength(2);
    await manager.close();
  });
});

describe("directive order (13)", () => {
  it("the first valid directive in registration order wins", async () => {
    const box = sandbox();
    countedTool(box, "t3");
    const manager = await withPlugins(box, {
      a: `ctx.registerHook("pre_tool_call", () => ["not", "a", "directive"]);`,
      b: `ctx.registerHook("pre_tool_call", async () => ({ action: "block", message: "from b" }));`,
      c: `ctx.registerHook("pre_tool_call", () => ({ action: "block", message: "from c" }));`,
    });
    expect(await box.registry.dispatch("t3", {})).toBe('{"error":"from b"}');
    await manager.close();
  });
});

describe("approve directive (12) and a failing gate (10)", () => {
  const approver = `ctx.registerHook("pre_tool_call", (e) => e.toolName === "write_file" ? { action: "approve", message: "writes over ssh", rule_key: "write_file:ssh" } : undefined);`;

  it("asks through the approval gate with the rule key; deny and timeout block, once runs", async () => {
    const box = sandbox();
    countedTool(box, "write_file");
    let answer: ApprovalAnswer = { scope: "deny", reason: "not today" };
    const surface = scriptedSurface(async () => answer);
    const manager = await withPlugins(box, { approver });
    await manager.close();
    const live = await load(box, { approval: gate(box, surface) });

    const denied = await box.registry.run("write_file", { path: "x" }, { sessionId: "s" });
    expect(denied.result.error?.kind).toBe("blocked");
    expect(denied.content).toMatch(/not today/);
    expect(calls("write_file")).toBe(0);
    const request = surface.requests[0]!;
    expect(request.matches).toEqual([expect.objectContaining({ rule: "plugin-approval", prefix: "write_file:ssh" })]);
    expect(request.display).toMatch(/Plugin "approver" asks you to approve a call of write_file: writes over ssh/);

    answer = { scope: "deny", by: "timeout" };
    expect((await box.registry.run("write_file", { path: "x" }, { sessionId: "s" })).result.error?.kind).toBe("blocked");

    answer = { scope: "once" };
    expect(await box.registry.dispatch("write_file", { path: "x" }, { sessionId: "s" })).toBe("ran");
    expect(calls("write_file")).toBe(1);
    await live.close();
  });

  it('"always" persists under the rule key: a new gate (a new process) does not ask again', async () => {
    const box = sandbox();
    countedTool(box, "write_file");
    const first = scriptedSurface({ scope: "always" });
    const manager = await withPlugins(box, { approver });
    await manager.close();
    let live = await load(box, { approval: gate(box, first) });
    expect(await box.registry.dispatch("write_file", { path: "x" })).toBe("ran");
    await live.close();
    const saved = readFileSync(path.join(box.home, "config.yaml"), "utf8");
    expect(saved).toMatch(/rule: plugin-approval/);
    expect(saved).toMatch(/prefix: write_file:ssh/);

    const second = scriptedSurface({ scope: "deny" });
    live = await load(box, { approval: gate(box, second) });
    expect(await box.registry.dispatch("write_file", { path: "y" })).toBe("ran");
    expect(second.requests).toHaveLength(0);
    expect(calls("write_file")).toBe(2);
    await live.close();
  });

  it("an approvals.deny rule on plugin-approval refuses without asking anyone", async () => {
    const box = sandbox();
    countedTool(box, "write_file");
    const manager = await withPlugins(box, { approver });
    await manager.close();
    const surface = scriptedSurface({ scope: "once" });
    const denying = new ApprovalGate({
      home: box.home,
      settings: { mode: "manual", deny: [{ rule: "plugin-approval", reason: "no plugin approvals on this machine" }] },
      surface,
      logger: createMemoryLogger(),
    });
    const live = await load(box, { approval: denying });
    const content = await box.registry.dispatch("write_file", {});
    expect(content).toMatch(/no plugin approvals on this machine/);
    expect(surface.requests).toHaveLength(0);
    expect(calls("write_file")).toBe(0);
    await live.close();
  });

  it("an approvals.deny rule on the category plugin_request refuses too, and a command category does not", async () => {
    const box = sandbox();
    countedTool(box, "write_file");
    const manager = await withPlugins(box, { approver });
    await manager.close();
    for (const [category, refused] of [["plugin_request", true], ["code_execution", false]] as const) {
      const surface = scriptedSurface({ scope: "once" });
      const gate = new ApprovalGate({
        home: box.home,
        settings: { mode: "manual", deny: [{ category, reason: `deny ${category}` }] },
        surface,
        logger: createMemoryLogger(),
      });
      const live = await load(box, { approval: gate });
      const content = await box.registry.dispatch("write_file", {});
      if (refused) {
        expect(content).toMatch(/deny plugin_request/);
        expect(surface.requests).toHaveLength(0);
      } else {
        expect(surface.requests).toHaveLength(1);
      }
      await live.close();
    }
    expect(calls("write_file")).toBe(1);
  });

  it('a gate that throws blocks with "BLOCKED: plugin approval gate failed for <tool>"', async () => {
    const box = sandbox();
    countedTool(box, "write_file");
    const manager = await withPlugins(box, { approver });
    await manager.close();
    const broken = { checkAction: async () => Promise.reject(new Error("config.yaml is broken")) };
    const live = await load(box, { approval: broken });
    expect(await box.registry.dispatch("write_file", {})).toBe('{"error":"BLOCKED: plugin approval gate failed for write_file"}');
    expect(calls("write_file")).toBe(0);
    expect(warnings(box).some((w) => /approval gate failed for write_file: Error: config\.yaml is broken/.test(w))).toBe(true);
    await live.close();
  });
});

describe("post_tool_call and transform_tool_result (14)", () => {
  it("post_tool_call gets an integer durationMs, the final string and the status; the first string transform wins, null leaves it", async () => {
    const box = sandbox();
    box.registry.register({ name: "slow", toolset: "app", schema: { description: "slow" }, handler: async () => (await new Promise((r) => setTimeout(r, 30)), { n: 1 }) });
    box.registry.register({ name: "broken", toolset: "app", schema: { description: "broken" }, handler: () => { throw new Error("kaput"); } });
    g.__post = [];
    const manager = await withPlugins(box, {
      a: `ctx.registerHook("transform_tool_result", () => null);`,
      b: `ctx.registerHook("transform_tool_result", (e) => e.toolName === "slow" ? e.result.replace("1", "2") : undefined);`,
      c: `ctx.registerHook("transform_tool_result", () => "too late");
          ctx.registerHook("post_tool_call", (e) => { globalThis.__post.push(e); });`,
    });
    const slow = await box.registry.run("slow", {});
    expect(slow.content).toBe('{"n":2}');
    const broken = await box.registry.dispatch("broken", {});
    expect(broken).toBe("too late");
    const [first, second] = g.__post as { durationMs: number; result: string; status: string; toolName: string }[];
    expect(first).toMatchObject({ toolName: "slow", result: '{"n":2}', status: "ok" });
    expect(Number.isInteger(first!.durationMs) && first!.durationMs >= 25).toBe(true);
    expect(second).toMatchObject({ toolName: "broken", status: "ok", result: "too late" });
    await manager.close();
  });

  it("post_tool_call sees a failure's status and error text", async () => {
    const box = sandbox();
    box.registry.register({ name: "broken", toolset: "app", schema: { description: "broken" }, handler: () => { throw new Error("kaput"); } });
    g.__post = [];
    const manager = await withPlugins(box, { c: `ctx.registerHook("post_tool_call", (e) => { globalThis.__post.push(e); });` });
    await box.registry.dispatch("broken", {});
    expect(g.__post).toEqual([expect.objectContaining({ toolName: "broken", status: "failed", result: '{"error":"Tool execution failed: Error: kaput"}' })]);
    expect(Number.isInteger((g.__post as { durationMs: number }[])[0]!.durationMs)).toBe(true);
    await manager.close();
  });
});

describe("MCP and bridged calls (15)", () => {
  it("hooks fire for a tool registered with source {kind: mcp}, under its registered name", async () => {
    const box = sandbox();
    countedTool(box, "mcp__files__delete", "deleted", { kind: "mcp", server: "files" });
    g.__seen = [];
    const manager = await withPlugins(box, {
      guard: `ctx.registerHook("pre_tool_call", (e) => { globalThis.__seen.push(e.toolName); return e.toolName.startsWith("mcp__files__") ? { action: "block", message: "no MCP deletes" } : undefined; });`,
    });
    expect(await box.registry.dispatch("mcp__files__delete", {})).toBe('{"error":"no MCP deletes"}');
    expect(g.__seen).toEqual(["mcp__files__delete"]);
    expect(calls("mcp__files__delete")).toBe(0);
    await manager.close();
  });

  it("hooks see the underlying tool of a call execute_code makes", async () => {
    const box = sandbox();
    countedTool(box, "lookup", "looked up");
    g.__seen = [];
    const manager = await withPlugins(box, { spy: `ctx.registerHook("pre_tool_call", (e) => { globalThis.__seen.push(e.toolName); });` });
    const run = await runCode({ code: "console.log(await tools.lookup({}));", registry: box.registry, extraSandboxTools: ["lookup"], timeoutMs: 15_000 });
    expect(run.output).toContain("looked up");
    expect(g.__seen).toEqual(["lookup"]);
    await manager.close();
  });
});

describe("names (16) and sessions", () => {
  it("an unknown hook name warns with the valid names and is still stored", async () => {
    const box = sandbox();
    const manager = await withPlugins(box, { odd: `ctx.registerHook("pre_llm_call", () => undefined);` });
    expect(manager.plugins[0]).toMatchObject({ state: "enabled", hooks: ["pre_llm_call"] });
    expect(manager.hooks.list("pre_llm_call")).toHaveLength(1);
    expect(warnings(box).some((w) => /unknown hook "pre_llm_call".*valid hooks: pre_tool_call, post_tool_call, transform_tool_result, on_session_start, on_session_end/.test(w))).toBe(true);
    await manager.close();
  });

  it("startSession and endSession run the session hooks; a throwing one is logged", async () => {
    const box = sandbox();
    g.__sessions = [];
    const manager = await withPlugins(box, {
      a: `ctx.registerHook("on_session_start", (e) => { globalThis.__sessions.push(["start", e.sessionId]); });
          ctx.registerHook("on_session_end", () => { throw new Error("end bug"); });
          ctx.registerHook("on_session_end", (e) => { globalThis.__sessions.push(["end", e.sessionId, e.reason]); });`,
    });
    await manager.startSession({ sessionId: "s9" });
    await manager.endSession({ sessionId: "s9", reason: "done" });
    expect(g.__sessions).toEqual([["start", "s9"], ["end", "s9", "done"]]);
    expect(warnings(box).some((w) => /on_session_end hook threw \(ignored\): Error: end bug/.test(w))).toBe(true);
    await manager.close();
  });
});
