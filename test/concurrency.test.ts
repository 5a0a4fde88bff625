import { describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { ToolRegistry, applyConfig, createMemoryLogger, executeToolCalls, loadConfig } from "../src/index.js";

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => { clearTimeout(timer); reject(signal.reason); }, { once: true });
  });

describe("time limits and cancellation", () => {
  it("a per-tool timeout aborts the handler's signal and returns a timeout error; the run goes on", async () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    let sawAbort: unknown;
    registry.register({
      name: "hang",
      toolset: "t",
      timeoutMs: 50,
      schema: { description: "hangs" },
      handler: async (_args, ctx) => {
        ctx.signal.addEventListener("abort", () => { sawAbort = ctx.signal.reason; });
        await new Promise(() => {});
      },
    });
    registry.register({ name: "fine", toolset: "t", schema: { description: "fine" }, handler: () => "ok" });
    const result = await registry.invoke({ name: "hang" });
    expect(result.error).toEqual({ kind: "timeout", message: "Tool hang timed out after 0.05 s" });
    expect((sawAbort as DOMException).name).toBe("TimeoutError");
    expect(await registry.dispatch("fine")).toBe("ok");
  });

  it("the call's timeoutMs overrides the tool's, and the registry default applies to tools without one", async () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger(), defaultTimeoutMs: 30 });
    registry.register({ name: "slow", toolset: "t", schema: { description: "s" }, handler: async (_a, ctx) => { await sleep(200, ctx.signal); return "done"; } });
    expect((await registry.invoke({ name: "slow" })).error?.kind).toBe("timeout");
    expect(await registry.dispatch("slow", {}, { timeoutMs: 0 })).toBe("done");
  });

  it("the caller's AbortSignal cancels a running call with a cancelled error", async () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    let handlerSignal: AbortSignal | undefined;
    registry.register({
      name: "wait",
      toolset: "t",
      schema: { description: "w" },
      handler: async (_a, ctx) => { handlerSignal = ctx.signal; await sleep(10_000, ctx.signal); return "never"; },
    });
    const controller = new AbortController();
    const pending = registry.invoke({ name: "wait" }, undefined, { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    expect((await pending).error).toEqual({ kind: "cancelled", message: "Tool wait was cancelled" });
    expect(handlerSignal?.aborted).toBe(true);
    expect((await registry.invoke({ name: "wait" }, undefined, { signal: AbortSignal.abort() })).error?.kind).toBe("cancelled");
  });

  it("with both a timeout and a caller signal, cancellation reaches the handler", async () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    let aborted = false;
    registry.register({
      name: "both",
      toolset: "t",
      timeoutMs: 5_000,
      schema: { description: "b" },
      handler: async (_a, ctx) => { await sleep(10_000, ctx.signal).catch(() => { aborted = true; }); return "x"; },
    });
    const controller = new AbortController();
    const pending = registry.invoke({ name: "both" }, undefined, { signal: controller.signal });
    setTimeout(() => controller.abort(), 10);
    expect((await pending).error?.kind).toBe("cancelled");
    await sleep(5);
    expect(aborted).toBe(true);
  });
});

describe("executeToolCalls", () => {
  function setup() {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    const events: string[] = [];
    let running = 0;
    let peak = 0;
    const make = (name: string, parallelSafe: boolean, ms: number, fails = false) =>
      registry.register({
        name,
        toolset: "t",
        parallelSafe,
        schema: { description: name, parameters: { type: "object", properties: { id: { type: "string" } } } },
        handler: async ({ id }) => {
          running++;
          peak = Math.max(peak, running);
          events.push(`start ${name}:${id}`);
          await sleep(ms);
          events.push(`end ${name}:${id}`);
          running--;
          if (fails) throw new Error(`${name} failed`);
          return `${name}:${id}`;
        },
      });
    make("read", true, 20);
    make("write", false, 5);
    make("flaky", true, 5, true);
    return { registry, events, peak: () => peak };
  }

  it("runs parallel-safe calls together, in call order results, capped", async () => {
    const { registry, peak } = setup();
    const calls = Array.from({ length: 6 }, (_, i) => ({ id: `c${i}`, name: "read", arguments: { id: String(i) } }));
    const outcomes = await executeToolCalls(calls, { registry, maxConcurrency: 3 });
    expect(outcomes.map((o) => o.content)).toEqual(["read:0", "read:1", "read:2", "read:3", "read:4", "read:5"]);
    expect(outcomes.map((o) => o.id)).toEqual(["c0", "c1", "c2", "c3", "c4", "c5"]);
    expect(peak()).toBe(3);
  });

  it("tools.max_concurrency from config.yaml caps batches through the registry applyConfig set; a batch's own limit wins", async () => {
    const home = mkdtempSync(path.join(tmpdir(), "mibyan-concurrency-"));
    try {
      writeFileSync(path.join(home, "config.yaml"), "tools:\n  max_concurrency: 2\n");
      const { registry, peak } = setup();
      expect(registry.maxConcurrency).toBe(8);
      applyConfig(registry, loadConfig({ env: { MIBYAN_HOME: home } }).config);
      expect(registry.maxConcurrency).toBe(2);
      const calls = Array.from({ length: 6 }, (_, i) => ({ name: "read", arguments: { id: String(i) } }));
      await executeToolCalls(calls, { registry });
      expect(peak()).toBe(2);
      const second = setup();
      second.registry.maxConcurrency = 2;
      await executeToolCalls(calls, { registry: second.registry, maxConcurrency: 5 });
      expect(second.peak()).toBe(5);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("a non-parallel-safe call waits for everything before it and runs alone", async () => {
    const { registry, events } = setup();
    await executeToolCalls(
      [
        { name: "read", arguments: { id: "a" } },
        { name: "read", arguments: { id: "b" } },
        { name: "write", arguments: { id: "w" } },
        { name: "read", arguments: { id: "c" } },
      ],
      { registry },
    );
    const writeStart = events.indexOf("start write:w");
    expect(events.indexOf("end read:a")).toBeLessThan(writeStart);
    expect(events.indexOf("end read:b")).toBeLessThan(writeStart);
    expect(events.indexOf("end write:w")).toBeLessThan(events.indexOf("start read:c"));
  });

  it("one failure never affects the others", async () => {
    const { registry } = setup();
    const outcomes = await executeToolCalls(
      [
        { name: "read", arguments: { id: "1" } },
        { name: "flaky", arguments: { id: "2" } },
        { name: "missing", arguments: "{" },
        { name: "read", arguments: '{"id":"3"}' },
      ],
      { registry },
    );
    expect(outcomes.map((o) => o.isError)).toEqual([false, true, true, false]);
    expect(outcomes[1]!.content).toBe('{"error":"Tool execution failed: Error: flaky failed"}');
    expect(outcomes[3]!.content).toBe("read:3");
  });
});

describe("concurrent registration and dispatch", () => {
  it("keeps every dispatch well-formed while tools come and go", async () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    const work: Promise<unknown>[] = [];
    const contents: string[] = [];
    for (let i = 0; i < 200; i++) {
      const name = `tool_${i % 20}`;
      work.push(
        (async () => {
          await sleep(Math.random() * 5);
          registry.register({ name, toolset: `set_${i % 20}`, schema: { description: "d" }, handler: async () => { await sleep(1); return `v${i}`; } });
        })(),
      );
      work.push(
        (async () => {
          await sleep(Math.random() * 5);
          if (i % 7 === 0) registry.deregister(name);
          contents.push(await registry.dispatch(name, {}));
        })(),
      );
    }
    await Promise.all(work);
    expect(contents).toHaveLength(200);
    for (const content of contents) {
      expect(content).toMatch(/^(v\d+|\{"error":"Unknown tool: tool_\d+(\. Did you mean: [\w, ]+\?)?"\})$/);
    }
    for (const name of registry.names) expect(await registry.dispatch(name)).toMatch(/^v\d+$/);
    expect(registry.size).toBe(registry.listTools().length);
  });
});
