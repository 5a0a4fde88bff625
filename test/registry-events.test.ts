/**
 * `registry.onChange`: real registrations, replacements and removals are announced with the new
 * generation; availability flips are announced when the registry evaluates a tool again
 * (`refreshAvailability()`, or a listing after a cached check expired); a listener that throws never
 * breaks a registration; with no listener the registry holds nothing for it.
 */
import { describe, expect, it } from "vitest";

import { createMemoryLogger, getToolDefinitions, ToolRegistry, type RegistryChange } from "../src/index.js";

const schema = (description: string) => ({ description, parameters: { type: "object" as const, properties: {} } });

function recorder(registry: ToolRegistry): { changes: RegistryChange[]; stop: () => void } {
  const changes: RegistryChange[] = [];
  const stop = registry.onChange((change) => {
    changes.push(change);
  });
  return { changes, stop };
}

describe("registry.onChange: registrations", () => {
  it("register, replace, deregister and reinstate are announced after the change, with the new generation", () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    const { changes } = recorder(registry);
    const seenInside: boolean[] = [];
    registry.onChange((change) => {
      if (change.kind === "registered") seenInside.push(registry.has(change.name));
    });
    const first = registry.register({ name: "a", toolset: "t", schema: schema("first"), handler: () => "1" })!;
    registry.register({ name: "a", toolset: "t", schema: schema("second"), handler: () => "2" });
    registry.register({ name: "b", toolset: "t", schema: schema("b"), handler: () => "b" });
    expect(registry.deregister("b")).toBe(true);
    expect(registry.deregister("b")).toBe(false); // nothing removed: nothing announced
    registry.reinstate(first);
    expect(changes).toEqual([
      { kind: "registered", name: "a", replaced: false, generation: 1 },
      { kind: "registered", name: "a", replaced: true, generation: 2 },
      { kind: "registered", name: "b", replaced: false, generation: 3 },
      { kind: "deregistered", name: "b", generation: 4 },
      { kind: "registered", name: "a", replaced: true, generation: 5 },
    ]);
    expect(registry.generation).toBe(5);
    // The listener runs after the tool is in: it can look it up.
    expect(seenInside).toEqual([true, true, true, true]);
  });

  it("a refused registration (shadowing another toolset's tool) is not announced", () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    registry.register({ name: "a", toolset: "t", schema: schema("a"), handler: () => "a" });
    const { changes } = recorder(registry);
    expect(registry.register({ name: "a", toolset: "other", schema: schema("a"), handler: () => "a" })).toBeUndefined();
    expect(changes).toEqual([]);
  });

  it("a listener that throws or rejects is logged; the registration stands and the other listeners are told", async () => {
    const logger = createMemoryLogger();
    const registry = new ToolRegistry({ logger });
    registry.onChange(() => {
      throw new Error("listener exploded");
    });
    registry.onChange(async () => {
      throw new Error("listener rejected");
    });
    const { changes } = recorder(registry);
    const entry = registry.register({ name: "a", toolset: "t", schema: schema("a"), handler: () => "a" });
    expect(entry?.name).toBe("a");
    expect(registry.has("a")).toBe(true);
    expect(changes).toHaveLength(1);
    await new Promise((resolve) => setImmediate(resolve));
    const warnings = logger.messages.filter((e) => e.level === "warn").map((e) => e.message);
    expect(warnings.some((m) => m.includes("listener exploded"))).toBe(true);
    expect(warnings.some((m) => m.includes("listener rejected"))).toBe(true);
    expect(await registry.dispatch("a", {})).toBe("a");
  });

  it("unsubscribing stops the events; a listener removing itself mid-event does not disturb the others", () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    const order: string[] = [];
    const stopFirst = registry.onChange(() => {
      order.push("first");
      stopFirst();
    });
    const second = recorder(registry);
    registry.register({ name: "a", toolset: "t", schema: schema("a"), handler: () => "a" });
    registry.register({ name: "b", toolset: "t", schema: schema("b"), handler: () => "b" });
    expect(order).toEqual(["first"]);
    expect(second.changes.map((c) => c.kind === "registered" && c.name)).toEqual(["a", "b"]);
    second.stop();
    second.stop(); // twice is harmless
    registry.register({ name: "c", toolset: "t", schema: schema("c"), handler: () => "c" });
    expect(second.changes).toHaveLength(2);
  });

  it("with no listener left, the availability cache has no observer (listings pay nothing)", () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    expect(registry.availability.observer).toBeUndefined();
    const a = recorder(registry);
    const b = recorder(registry);
    expect(registry.availability.observer).toBeTypeOf("function");
    a.stop();
    expect(registry.availability.observer).toBeTypeOf("function");
    b.stop();
    expect(registry.availability.observer).toBeUndefined();
  });

  it("a listener must be a function", () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    expect(() => registry.onChange("nope" as never)).toThrow(TypeError);
  });
});

describe("registry.onChange: availability", () => {
  it("an environment variable set, then refreshAvailability(): announced before it returns; unset again: announced", () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    delete process.env.REGISTRY_EVENTS_KEY;
    registry.register({ name: "needs_key", toolset: "t", requiresEnv: ["REGISTRY_EVENTS_KEY"], schema: schema("k"), handler: () => "ok" });
    registry.register({ name: "plain", toolset: "t", schema: schema("p"), handler: () => "ok" });
    const { changes } = recorder(registry);
    registry.refreshAvailability(); // the baseline: first sight is no change
    expect(changes).toEqual([]);
    process.env.REGISTRY_EVENTS_KEY = "x";
    try {
      registry.refreshAvailability();
      expect(changes).toEqual([{ kind: "availability", available: ["needs_key"], unavailable: [], generation: 2 }]);
      expect(getToolDefinitions({ registry, quiet: true }).map((d) => d.function.name)).toContain("needs_key");
    } finally {
      delete process.env.REGISTRY_EVENTS_KEY;
    }
    registry.refreshAvailability();
    expect(changes.at(-1)).toEqual({ kind: "availability", available: [], unavailable: ["needs_key"], generation: 2 });
    registry.refreshAvailability();
    expect(changes).toHaveLength(2);
  });

  it("a cached check is run again after its TTL; a flip found by a listing is one event on a microtask", async () => {
    let clock = 0;
    let up = false;
    const registry = new ToolRegistry({ logger: createMemoryLogger(), availability: { ttlMs: 1_000, now: () => clock } });
    const daemon = (): boolean => up;
    registry.register({ name: "d1", toolset: "d", checkFn: daemon, schema: schema("d1"), handler: () => "ok" });
    registry.register({ name: "d2", toolset: "d", checkFn: daemon, schema: schema("d2"), handler: () => "ok" });
    const { changes } = recorder(registry);
    expect(getToolDefinitions({ registry, quiet: true })).toEqual([]);
    up = true;
    clock = 500; // within the TTL: the cached answer holds, nothing changed as far as anyone can tell
    expect(getToolDefinitions({ registry, quiet: true })).toEqual([]);
    await Promise.resolve();
    expect(changes).toEqual([]);
    clock = 1_500;
    const listed = getToolDefinitions({ registry, quiet: true }).map((d) => d.function.name);
    expect(listed).toEqual(["d1", "d2"]);
    expect(changes).toEqual([]); // never in the middle of a listing
    await Promise.resolve();
    expect(changes).toEqual([{ kind: "availability", available: ["d1", "d2"], unavailable: [], generation: 2 }]);
  });

  it("a flip and a flip back before delivery cancel out", async () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger(), availability: { ttlMs: 0 } });
    let up = false;
    registry.register({ name: "d", toolset: "d", checkFn: () => up, schema: schema("d"), handler: () => "ok" });
    const { changes } = recorder(registry);
    registry.availabilityOf("d");
    up = true;
    registry.availabilityOf("d");
    up = false;
    registry.availabilityOf("d");
    await Promise.resolve();
    expect(changes).toEqual([]);
  });

  it("a replaced tool starts afresh: the new entry's first evaluation is no flip", () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    registry.register({ name: "d", toolset: "d", checkFn: () => false, schema: schema("d"), handler: () => "ok" });
    const { changes } = recorder(registry);
    registry.refreshAvailability();
    registry.register({ name: "d", toolset: "d", checkFn: () => true, schema: schema("d"), handler: () => "ok" });
    registry.refreshAvailability();
    expect(changes.map((c) => c.kind)).toEqual(["registered"]);
  });

  it("refreshAvailability keeps a check's grace period: a check that throws right after succeeding stays available", () => {
    const logger = createMemoryLogger();
    const registry = new ToolRegistry({ logger });
    let mode: "ok" | "throw" = "ok";
    registry.register({
      name: "flaky",
      toolset: "f",
      checkFn: () => {
        if (mode === "throw") throw new Error("transient");
        return true;
      },
      schema: schema("f"),
      handler: () => "ok",
    });
    const { changes } = recorder(registry);
    registry.refreshAvailability();
    mode = "throw";
    registry.refreshAvailability();
    expect(registry.availabilityOf("flaky").available).toBe(true);
    expect(changes).toEqual([]);
    expect(logger.messages.some((e) => e.level === "warn" && e.message.includes("transient"))).toBe(true);
  });
});
