/**
 * A handler result that cannot be sent to the model as JSON is an
 * `invalid_result` failure for every caller, not only in the model's string:
 * `invoke()`, `run()`, `dispatch()`, post-hooks, `handleFunctionCallDetailed`
 * (its `isError`) and `executeToolCalls` all see the same failure.
 */
import { describe, expect, it } from "vitest";
import {
  ToolRegistry,
  createMemoryLogger,
  executeToolCalls,
  handleFunctionCall,
  handleFunctionCallDetailed,
  ok,
  type ToolResult,
} from "../src/index.js";

function circular(): Record<string, unknown> {
  const value: Record<string, unknown> = { name: "loop" };
  value.self = value;
  return value;
}

function deeplyNested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++) value = { child: value };
  return value;
}

/** Each handler returns something JSON.stringify refuses (throws on, or turns into undefined). */
const UNSERIALISABLE: Record<string, () => unknown> = {
  circular: () => circular(),
  nested_bigint: () => ({ total: 1, rows: [{ id: 10n }] }),
  throwing_to_json: () => ({ when: { toJSON: () => { throw new Error("no JSON for you"); } } }),
  // toJSON at the top level answering undefined: JSON.stringify returns undefined, not a string.
  to_json_undefined: () => ({ toJSON: () => undefined }),
  too_deep: () => deeplyNested(200_000),
  async_circular: async () => circular(),
  ok_circular: () => ok(circular()),
  plain_ok_bigint: () => ({ success: true, data: { n: 1n } }),
  // Values dispatch already refused at the top level (kept here so every entry point is checked for them too).
  top_symbol: () => Symbol("s"),
  top_function: () => () => 1,
  top_bigint: () => 10n,
};

function setup(): ToolRegistry {
  const registry = new ToolRegistry({ logger: createMemoryLogger() });
  for (const [name, handler] of Object.entries(UNSERIALISABLE)) {
    registry.register({ name, toolset: "bad", schema: { description: name }, handler });
  }
  // With a time limit the handler runs in a race with its timer: a different path through dispatch.
  registry.register({ name: "timed_circular", toolset: "bad", schema: { description: "t" }, timeoutMs: 5_000, handler: async () => circular() });
  registry.register({ name: "fine", toolset: "good", schema: { description: "f" }, handler: () => ({ rows: [1, 2], nested: { fn: () => 1 } }) });
  return registry;
}

const NAMES = [...Object.keys(UNSERIALISABLE), "timed_circular"];

function expectInvalid(result: ToolResult, name: string): void {
  expect(result.success, name).toBe(false);
  expect(result.error?.kind, name).toBe("invalid_result");
  expect(result.error?.message, name).toMatch(new RegExp(`^Tool ${name} returned `));
  expect(result.data, name).toBeUndefined();
}

describe("unserialisable handler results are invalid_result failures everywhere", () => {
  it("invoke() returns a typed invalid_result failure", async () => {
    const registry = setup();
    for (const name of NAMES) expectInvalid(await registry.invoke({ name }), name);
  });

  it("run() and dispatch() agree: the typed result fails and the model gets the same message", async () => {
    const registry = setup();
    for (const name of NAMES) {
      const outcome = await registry.run(name);
      expectInvalid(outcome.result, name);
      expect(JSON.parse(outcome.content), name).toEqual({ error: outcome.result.error!.message });
      const content = JSON.parse(await registry.dispatch(name)) as { error: string };
      expect(content.error, name).toMatch(/not JSON-serialisable|cannot be sent to the model/);
    }
    expect((await registry.run("circular")).result.error?.message).toMatch(/not JSON-serialisable: TypeError: Converting circular structure to JSON/);
    expect((await registry.run("nested_bigint")).result.error?.message).toMatch(/BigInt/);
    expect((await registry.run("throwing_to_json")).result.error?.message).toMatch(/Error: no JSON for you/);
    expect((await registry.run("too_deep")).result.error?.message).toMatch(/RangeError: Maximum call stack size exceeded/);
  });

  it("handleFunctionCallDetailed and handleFunctionCall report isError with the invalid_result failure", async () => {
    const registry = setup();
    for (const name of NAMES) {
      const outcome = await handleFunctionCallDetailed(name, {}, { registry });
      expect(outcome.isError, name).toBe(true);
      expectInvalid(outcome.result, name);
      expect(JSON.parse(outcome.content).error, name).toBe(outcome.result.error!.message);
      expect(JSON.parse(await handleFunctionCall(name, {}, { registry })).error, name).toBe(outcome.result.error!.message);
    }
  });

  it("executeToolCalls marks each such call as an error and leaves its neighbours alone", async () => {
    const registry = setup();
    const calls = [{ id: "a", name: "fine" }, ...NAMES.map((name, i) => ({ id: `c${i}`, name })), { id: "z", name: "fine" }];
    const outcomes = await executeToolCalls(calls, { registry });
    expect(outcomes[0]!.isError).toBe(false);
    expect(outcomes[0]!.content).toBe('{"rows":[1,2],"nested":{}}');
    expect(outcomes.at(-1)!.isError).toBe(false);
    for (const [i, name] of NAMES.entries()) {
      const outcome = outcomes[i + 1]!;
      expect(outcome.name).toBe(name);
      expect(outcome.isError, name).toBe(true);
      expectInvalid(outcome.result, name);
    }
  });

  it("post-hooks receive the invalid_result failure, never the raw unserialisable value", async () => {
    const registry = setup();
    const seen: ToolResult[] = [];
    registry.addPostHook((_call, result) => {
      seen.push(result);
      return undefined;
    });
    for (const name of NAMES) expectInvalid(await registry.invoke({ name }), name);
    expect(seen).toHaveLength(NAMES.length);
    for (const [i, name] of NAMES.entries()) expectInvalid(seen[i]!, name);
  });

  it("keeps the handler's metadata on the failure (metadata never reaches the model)", async () => {
    const registry = setup();
    registry.register({ name: "meta", toolset: "bad", schema: { description: "m" }, handler: () => ok(circular(), { took_ms: 3 }) });
    const result = await registry.invoke({ name: "meta" });
    expectInvalid(result, "meta");
    expect(result.metadata).toEqual({ took_ms: 3 });
  });

  it("a post-hook that leaves an unserialisable result (replaced or changed in place) yields invalid_result", async () => {
    const registry = setup();
    registry.register({ name: "obj", toolset: "good", schema: { description: "o" }, handler: () => ({ items: [] as unknown[] }) });
    registry.register({ name: "text", toolset: "good", schema: { description: "t" }, handler: () => "plain" });
    registry.addPostHook((call, result) => {
      if (call.name === "obj") (result.data as { items: unknown[] }).items.push(5n);
      if (call.name === "text") return ok(circular());
      return undefined;
    });
    for (const name of ["obj", "text"]) {
      const outcome = await handleFunctionCallDetailed(name, {}, { registry });
      expect(outcome.isError, name).toBe(true);
      expect(outcome.result.error?.kind, name).toBe("invalid_result");
      expect(outcome.result.error?.message, name).toMatch(new RegExp(`^The result of ${name}, as its post-hooks left it, is a value that is not JSON-serialisable`));
      expect(JSON.parse(outcome.content).error).toBe(outcome.result.error!.message);
    }
  });

  it("a redacting post-hook that edits the data in place is what the model receives", async () => {
    const registry = setup();
    registry.register({ name: "secret", toolset: "good", schema: { description: "s" }, handler: () => ({ token: "sk-live-123" }) });
    registry.addPostHook((_call, result) => {
      if (result.success) (result.data as { token: string }).token = "[redacted]";
      return undefined;
    });
    expect(await registry.dispatch("secret")).toBe('{"token":"[redacted]"}');
  });

  it("serialisable results are unchanged: nested functions and undefined are dropped as JSON.stringify drops them", async () => {
    const registry = setup();
    const outcome = await handleFunctionCallDetailed("fine", {}, { registry });
    expect(outcome.isError).toBe(false);
    expect(outcome.result.success).toBe(true);
    expect(outcome.content).toBe('{"rows":[1,2],"nested":{}}');
  });

  it("a thrown value whose toJSON and toString both throw is still a typed failure with a readable message", async () => {
    const registry = setup();
    const hostile = { toJSON() { throw 1; }, toString() { throw 2; } };
    registry.register({ name: "throws_sync", toolset: "bad", schema: { description: "t" }, handler: () => { throw hostile; } });
    registry.register({ name: "throws_async", toolset: "bad", schema: { description: "t" }, handler: async () => { throw hostile; } });
    registry.register({ name: "json_throws_hostile", toolset: "bad", schema: { description: "t" }, handler: () => ({ a: { toJSON() { throw hostile; } } }) });
    for (const name of ["throws_sync", "throws_async"]) {
      const outcome = await handleFunctionCallDetailed(name, {}, { registry });
      expect(outcome.isError, name).toBe(true);
      expect(outcome.result.error, name).toEqual({ kind: "failed", message: "Tool execution failed: an exception that cannot be described" });
    }
    const outcome = await handleFunctionCallDetailed("json_throws_hostile", {}, { registry });
    expect(outcome.result.error?.kind).toBe("invalid_result");
    expect(outcome.result.error?.message).toMatch(/not JSON-serialisable: an exception that cannot be described/);
  });
});
