// A call cut short (the caller's AbortSignal, or the call's time limit) still
// delivers what a handler that honours its signal has: the terminal's partial
// output with exit code 130/124 and its status. Real commands, real process groups.
import { readFileSync } from "node:fs";

import { describe, expect, it } from "vitest";

import { ToolRegistry } from "../src/registry/tool-registry.js";
import { handleFunctionCall, handleFunctionCallDetailed } from "../src/dispatch/handle-function-call.js";
import { executeToolCalls } from "../src/dispatch/execute-tool-calls.js";
import { CANCEL_GRACE_MS } from "../src/dispatch/pipeline.js";
import { TERMINAL_SCHEMA, createTerminalHandler, type CommandGate } from "../src/tools/terminal.js";
import { createExecuteCodeHandler, type ActionGate } from "../src/tools/execute-code.js";

// The approval gate is not what is tested here: it allows everything.
const allowAll = { check: async () => ({ allowed: true }), checkAction: async () => ({ allowed: true }) } as unknown as CommandGate & ActionGate;

function registry(): ToolRegistry {
  const reg = new ToolRegistry();
  reg.register({ name: "terminal", toolset: "terminal", schema: TERMINAL_SCHEMA, handler: createTerminalHandler({ gate: () => allowAll }), timeoutMs: 20 * 60 * 1000 });
  reg.register({
    name: "execute_code",
    toolset: "code_execution",
    schema: { description: "runs JavaScript", parameters: { type: "object", properties: { code: { type: "string" } }, required: ["code"] } },
    handler: createExecuteCodeHandler({ gate: () => allowAll, registry: reg }),
  });
  return reg;
}

const abortAfter = (ms: number): AbortSignal => {
  const ac = new AbortController();
  setTimeout(() => ac.abort(), ms);
  return ac.signal;
};

interface RunJson {
  output: string;
  exit_code: number;
  error: string | null;
  status?: string;
}

function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] === "Z";
  } catch {
    return true;
  }
}

const ECHO_THEN_SLEEP = { command: "sleep 30 & echo PID=$!; echo partial-output; sleep 30" };

describe("a cancelled terminal call keeps its partial output", () => {
  it("caller's AbortSignal: the model sees the output, exit code 130 and status cancelled; typed callers see `cancelled`", async () => {
    const reg = registry();
    const started = Date.now();
    const outcome = await handleFunctionCallDetailed("terminal", JSON.stringify(ECHO_THEN_SLEEP), { registry: reg, signal: abortAfter(700) });
    expect(Date.now() - started).toBeLessThan(5_000);
    const model = JSON.parse(outcome.content) as RunJson;
    expect(model.output).toContain("partial-output");
    expect(model).toMatchObject({ exit_code: 130, status: "cancelled", error: "Command was cancelled (process group killed)" });
    expect(outcome.isError).toBe(true);
    expect(outcome.result.error).toMatchObject({ kind: "cancelled", message: "Tool terminal was cancelled" });
    expect(outcome.result.data).toBe(outcome.content);
    // The background child of the command went with its group.
    const pid = Number(/PID=(\d+)/.exec(model.output)?.[1]);
    expect(pid).toBeGreaterThan(0);
    expect(gone(pid)).toBe(true);
  });

  it("the call's time limit: status timeout, exit code 124, the output so far; typed callers see `timeout`", async () => {
    const reg = registry();
    const outcome = await handleFunctionCallDetailed("terminal", ECHO_THEN_SLEEP, { registry: reg, timeoutMs: 700 });
    const model = JSON.parse(outcome.content) as RunJson;
    expect(model.output).toContain("partial-output");
    expect(model).toMatchObject({ exit_code: 124, status: "timeout", error: "Command was stopped by the call's time limit (process group killed)" });
    expect(outcome.result.error).toMatchObject({ kind: "timeout", message: "Tool terminal timed out after 0.7 s" });
    const pid = Number(/PID=(\d+)/.exec(model.output)?.[1]);
    expect(gone(pid)).toBe(true);
  });

  it("every entry point agrees: invoke, run, dispatch, handleFunctionCall", async () => {
    const reg = registry();
    const args = { command: "echo partial-output; sleep 30" };
    const invoked = await reg.invoke({ name: "terminal", arguments: args }, undefined, { signal: abortAfter(500) });
    expect(invoked).toMatchObject({ success: false, error: { kind: "cancelled" } });
    expect(JSON.parse(invoked.data as string)).toMatchObject({ status: "cancelled", exit_code: 130 });
    const ran = await reg.run("terminal", args, { timeoutMs: 500 });
    expect(ran.result.error?.kind).toBe("timeout");
    expect(JSON.parse(ran.content)).toMatchObject({ status: "timeout", output: "partial-output\n" });
    const dispatched = JSON.parse(await reg.dispatch("terminal", args, { signal: abortAfter(500) })) as RunJson;
    expect(dispatched).toMatchObject({ status: "cancelled", output: "partial-output\n" });
    const handled = JSON.parse(await handleFunctionCall("terminal", args, { registry: reg, timeoutMs: 500 })) as RunJson;
    expect(handled).toMatchObject({ status: "timeout", output: "partial-output\n", exit_code: 124 });
  });

  it("executeToolCalls: one call timed out among others keeps its output; the others are untouched", async () => {
    const reg = registry();
    reg.register({ name: "echo", toolset: "demo", parallelSafe: true, schema: { description: "echo" }, handler: (a: Record<string, unknown>) => `echo ${String(a.x)}` });
    const outcomes = await executeToolCalls(
      [
        { id: "a", name: "echo", arguments: { x: 1 } },
        { id: "b", name: "terminal", arguments: { command: "echo partial-output; sleep 30", timeout: 1 } },
        { id: "c", name: "echo", arguments: { x: 2 } },
      ],
      { registry: reg },
    );
    expect(outcomes.map((o) => [o.id, o.isError])).toEqual([
      ["a", false],
      ["b", true],
      ["c", false],
    ]);
    expect(outcomes[0]!.content).toBe("echo 1");
    expect(outcomes[2]!.content).toBe("echo 2");
    // The terminal's own timeout: an ordinary result of the tool (its JSON error).
    expect(JSON.parse(outcomes[1]!.content)).toMatchObject({ output: "partial-output\n", exit_code: 124, status: "timeout" });

    const cancelled = await executeToolCalls(
      [
        { id: "a", name: "echo", arguments: { x: 1 } },
        { id: "b", name: "terminal", arguments: { command: "echo partial-output; sleep 30" } },
      ],
      { registry: reg, timeoutMs: 600 },
    );
    expect(cancelled[0]).toMatchObject({ content: "echo 1", isError: false });
    expect(cancelled[1]!.result.error?.kind).toBe("timeout");
    expect(JSON.parse(cancelled[1]!.content)).toMatchObject({ output: "partial-output\n", status: "timeout" });
  });
});

describe("a cancelled execute_code call keeps its partial output", () => {
  const code = "console.log('partial-output'); await new Promise((r) => setTimeout(r, 30000));";
  it("cancelled: exit code 130, status cancelled, the output collected so far", async () => {
    const outcome = await handleFunctionCallDetailed("execute_code", { code }, { registry: registry(), signal: abortAfter(1_000) });
    expect(JSON.parse(outcome.content)).toMatchObject({ output: "partial-output\n", exit_code: 130, status: "cancelled" });
    expect(outcome.result.error?.kind).toBe("cancelled");
  });
  it("the call's time limit: exit code 124, status timeout", async () => {
    const outcome = await handleFunctionCallDetailed("execute_code", { code }, { registry: registry(), timeoutMs: 1_000 });
    expect(JSON.parse(outcome.content)).toMatchObject({ output: "partial-output\n", exit_code: 124, status: "timeout" });
    expect(outcome.result.error?.kind).toBe("timeout");
  });
});

describe("handlers that do not deliver", () => {
  it("a handler that never reads its signal gets `timeout` at once, as before", async () => {
    const reg = new ToolRegistry();
    reg.register({ name: "deaf", toolset: "demo", timeoutMs: 200, schema: { description: "d" }, handler: () => new Promise((r) => setTimeout(() => r("late"), 3_000)) });
    const started = Date.now();
    const outcome = await handleFunctionCallDetailed("deaf", {}, { registry: reg });
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(outcome.content).toBe('{"error":"Tool deaf timed out after 0.2 s"}');
  });

  it("a handler that reads its signal but ignores it is abandoned after the grace", async () => {
    const reg = new ToolRegistry();
    let finished = false;
    reg.register({
      name: "stubborn",
      toolset: "demo",
      timeoutMs: 200,
      schema: { description: "s" },
      handler: async (_a: Record<string, unknown>, ctx: { signal: AbortSignal }) => {
        void ctx.signal; // looked at, never honoured
        await new Promise((r) => setTimeout(r, CANCEL_GRACE_MS + 3_000));
        finished = true;
        return "late";
      },
    });
    const started = Date.now();
    const outcome = await handleFunctionCallDetailed("stubborn", {}, { registry: reg });
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(200 + CANCEL_GRACE_MS - 50);
    expect(took).toBeLessThan(200 + CANCEL_GRACE_MS + 2_000);
    expect(finished).toBe(false);
    expect(outcome.content).toBe('{"error":"Tool stubborn timed out after 0.2 s"}');
    expect(outcome.result).toEqual({ success: false, error: { kind: "timeout", message: "Tool stubborn timed out after 0.2 s" } });
  });

  it("a handler that rejects with the abort is `cancelled`, not a failure; one returning plain text is wrapped so the model knows", async () => {
    const reg = new ToolRegistry();
    reg.register({
      name: "fetchy",
      toolset: "demo",
      schema: { description: "f" },
      handler: (_a: Record<string, unknown>, ctx: { signal: AbortSignal }) =>
        new Promise((_r, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason))),
    });
    reg.register({
      name: "partial",
      toolset: "demo",
      schema: { description: "p" },
      handler: (_a: Record<string, unknown>, ctx: { signal: AbortSignal }) =>
        new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve({ rows: [1, 2] }))),
    });
    reg.register({
      name: "failing",
      toolset: "demo",
      schema: { description: "p" },
      handler: (_a: Record<string, unknown>, ctx: { signal: AbortSignal }) =>
        new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve({ success: false, error: "stopped at row 3" }))),
    });
    const a = await handleFunctionCallDetailed("fetchy", {}, { registry: reg, signal: abortAfter(100) });
    expect(a.content).toBe('{"error":"Tool fetchy was cancelled"}');
    expect(a.result.error?.kind).toBe("cancelled");
    const b = await handleFunctionCallDetailed("partial", {}, { registry: reg, signal: abortAfter(100) });
    expect(JSON.parse(b.content)).toEqual({ error: "Tool partial was cancelled", output: { rows: [1, 2] } });
    expect(b.result).toMatchObject({ success: false, data: { rows: [1, 2] }, error: { kind: "cancelled" } });
    const c = await handleFunctionCallDetailed("failing", {}, { registry: reg, timeoutMs: 100 });
    expect(c.content).toBe('{"error":"Tool failing timed out after 0.1 s: stopped at row 3"}');
    expect(c.result.error?.kind).toBe("timeout");
  });
});
