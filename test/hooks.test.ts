import { describe, expect, it } from "vitest";
import { ToolRegistry, createMemoryLogger, type ParsedToolCall, type PostHook, type PreHook, type ToolResult } from "../src/index.js";

function setup() {
  const registry = new ToolRegistry({ logger: createMemoryLogger() });
  const ran: string[] = [];
  registry.register({
    name: "greet",
    toolset: "t",
    schema: { description: "greet", parameters: { type: "object", properties: { who: { type: "string" } }, required: ["who"] } },
    handler: ({ who }) => {
      ran.push(String(who));
      return `hello ${who}`;
    },
  });
  registry.register({ name: "wave", toolset: "t", schema: { description: "wave" }, handler: () => "👋" });
  return { registry, ran };
}

describe("pre-hooks", () => {
  it("pass when they return undefined, and see the context", async () => {
    const { registry } = setup();
    const seen: unknown[] = [];
    registry.addPreHook((call, ctx) => { seen.push(call.name, ctx.sessionId, ctx.toolName); });
    expect(await registry.dispatch("greet", { who: "ada" }, { sessionId: "s" })).toBe("hello ada");
    expect(seen).toEqual(["greet", "s", "greet"]);
  });

  it("block the call when they return null; the handler never runs", async () => {
    const { registry, ran } = setup();
    registry.addPreHook(function denyAll() { return null; });
    const result = await registry.invoke({ name: "greet", arguments: { who: "x" } });
    expect(result).toEqual({ success: false, error: { kind: "blocked", message: 'Tool call greet was blocked by pre-hook "denyAll"' } });
    expect(ran).toEqual([]);
  });

  it("block the call when they throw, saying why (the document's auth hook)", async () => {
    const { registry, ran } = setup();
    const session = { isAdmin: false };
    registry.registerPreHook(async function authHook(call, ctx) {
      if (call.name === "greet" && !(ctx.session as typeof session).isAdmin) throw new Error("Unauthorized");
    });
    const result = await registry.invoke({ name: "greet", arguments: { who: "x" } }, session);
    expect(result.error).toEqual({ kind: "blocked", message: 'Tool call greet blocked by pre-hook "authHook": Error: Unauthorized' });
    expect(ran).toEqual([]);
    expect((await registry.invoke({ name: "greet", arguments: { who: "y" } }, { isAdmin: true })).success).toBe(true);
  });

  it("rewrite the call: new arguments and even another tool, validated after the rewrite", async () => {
    const { registry, ran } = setup();
    registry.addPreHook((call) => (call.name === "greet" ? { ...call, arguments: { who: String(call.arguments.who).toUpperCase() } } : undefined));
    expect(await registry.dispatch("greet", { who: "ada" })).toBe("hello ADA");
    const redirect: PreHook = (call) => (call.name === "wave" ? { name: "greet", arguments: { who: 5 } } : undefined);
    registry.addPreHook(redirect);
    const result = await registry.invoke({ id: "c9", name: "wave" });
    expect(result.error?.kind).toBe("invalid_args");
    expect(ran).toEqual(["ADA"]);
  });

  it("returning something that is not a call blocks with an explanation", async () => {
    const { registry, ran } = setup();
    registry.addPreHook((() => 42) as unknown as PreHook);
    const result = await registry.invoke({ name: "greet", arguments: { who: "x" } });
    expect(result.error?.kind).toBe("blocked");
    expect(result.error?.message).toMatch(/invalid value/);
    expect(ran).toEqual([]);
  });

  it("run before lookup, so a hook sees calls to unknown tools", async () => {
    const { registry } = setup();
    const names: string[] = [];
    registry.addPreHook((call) => { names.push(call.name); });
    await registry.dispatch("ghost");
    expect(names).toEqual(["ghost"]);
  });
});

describe("post-hooks", () => {
  it("receive (call, result, ctx) and may replace the result", async () => {
    const { registry } = setup();
    const log: string[] = [];
    registry.registerPostHook(async (call: ParsedToolCall, result: ToolResult) => { log.push(`${call.name} -> ${result.success}`); });
    registry.addPostHook((call, result) => (call.name === "greet" ? { success: true, data: `${String(result.data)}!` } : undefined));
    expect(await registry.dispatch("greet", { who: "bo" })).toBe("hello bo!");
    await registry.dispatch("ghost");
    expect(log).toEqual(["greet -> true", "ghost -> false"]);
  });

  it("that throw withhold the result (fail closed) with hook_failed", async () => {
    const { registry, ran } = setup();
    registry.addPostHook(function redact() { throw new Error("redactor down"); });
    const result = await registry.invoke({ name: "greet", arguments: { who: "secret" } });
    expect(ran).toEqual(["secret"]);
    expect(result.error?.kind).toBe("hook_failed");
    expect(result.error?.message).toBe('Tool greet ran, but post-hook "redact" failed, so its result is withheld: Error: redactor down');
    expect(JSON.stringify(result)).not.toContain("hello secret");
  });

  it("returning a non-result withholds the result too", async () => {
    const { registry } = setup();
    registry.addPostHook((() => "nope") as unknown as PostHook);
    expect((await registry.invoke({ name: "wave" })).error?.kind).toBe("hook_failed");
  });
});

describe("removeHook", () => {
  it("removes by kind or from both lists and says whether it removed one", async () => {
    const { registry } = setup();
    const pre: PreHook = () => null;
    const post: PostHook = () => ({ success: true, data: "replaced" });
    registry.addPreHook(pre);
    registry.addPostHook(post);
    expect(registry.removeHook(pre, "post")).toBe(false);
    expect(registry.removeHook(pre, "pre")).toBe(true);
    expect(registry.removeHook(pre)).toBe(false);
    expect(await registry.dispatch("wave")).toBe("replaced");
    expect(registry.removeHook(post)).toBe(true);
    expect(await registry.dispatch("wave")).toBe("👋");
  });

  it("the disposer returned by addPreHook removes that hook", async () => {
    const { registry } = setup();
    const dispose = registry.addPreHook(() => null);
    expect((await registry.invoke({ name: "wave" })).success).toBe(false);
    expect(dispose()).toBe(true);
    expect((await registry.invoke({ name: "wave" })).success).toBe(true);
  });

  it("a hook removed during a call does not disturb that call", async () => {
    const { registry } = setup();
    const order: string[] = [];
    const second: PreHook = () => { order.push("second"); };
    registry.addPreHook(() => { order.push("first"); registry.removeHook(second); });
    registry.addPreHook(second);
    await registry.dispatch("wave");
    await registry.dispatch("wave");
    expect(order).toEqual(["first", "second", "first"]);
  });
});
