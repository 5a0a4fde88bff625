import { describe, expect, it } from "vitest";
import { ToolRegistry, createMemoryLogger } from "../src/index.js";

function clockRegistry() {
  let now = 1_000_000;
  const logger = createMemoryLogger();
  const registry = new ToolRegistry({ logger, availability: { ttlMs: 30_000, graceMs: 60_000, now: () => now } });
  return { registry, logger, advance: (ms: number) => { now += ms; } };
}

describe("availability checks", () => {
  it("run a shared check once per listing, however many tools use it", () => {
    const { registry } = clockRegistry();
    let calls = 0;
    const shared = () => { calls++; return true; };
    for (let i = 0; i < 50; i++) registry.register({ name: `t${i}`, toolset: "s", schema: { description: "d" }, handler: () => "", checkFn: shared });
    expect(registry.getDefinitions(registry.names)).toHaveLength(50);
    expect(calls).toBe(1);
  });

  it("cache answers across calls for the TTL, then ask again", () => {
    const { registry, advance } = clockRegistry();
    let calls = 0;
    let answer = true;
    registry.register({ name: "t", toolset: "s", schema: { description: "d" }, handler: () => "", checkFn: () => { calls++; return answer; } });
    registry.getDefinitions(["t"]);
    advance(29_000);
    answer = false;
    expect(registry.getDefinitions(["t"])).toHaveLength(1);
    expect(calls).toBe(1);
    advance(2_000);
    expect(registry.getDefinitions(["t"])).toHaveLength(0);
    expect(calls).toBe(2);
  });

  it("treat a throwing check as unavailable, except within the grace period after a success", () => {
    const { registry, advance, logger } = clockRegistry();
    let mode: "ok" | "throw" = "throw";
    registry.register({
      name: "t",
      toolset: "s",
      schema: { description: "d" },
      handler: () => "",
      checkFn: () => { if (mode === "throw") throw new Error("network blip"); return true; },
    });
    expect(registry.availabilityOf("t")).toEqual({ available: false, code: "check_threw", reason: "availability check threw Error: network blip" });
    advance(31_000);
    mode = "ok";
    expect(registry.availabilityOf("t").available).toBe(true);
    advance(31_000);
    mode = "throw";
    expect(registry.availabilityOf("t").available).toBe(true);
    expect(logger.messages.some((m) => m.level === "warn" && /still treated as available/.test(m.message))).toBe(true);
    advance(31_000);
    expect(registry.availabilityOf("t").available).toBe(false);
  });

  it("a check returning false takes effect at once, even within the grace period", () => {
    const { registry, advance } = clockRegistry();
    let answer = true;
    registry.register({ name: "t", toolset: "s", schema: { description: "d" }, handler: () => "", checkFn: () => answer });
    expect(registry.availabilityOf("t").available).toBe(true);
    advance(31_000);
    answer = false;
    expect(registry.availabilityOf("t")).toMatchObject({ available: false, code: "check_failed" });
  });

  it("an async check is refused with a reason, not silently trusted", () => {
    const { registry } = clockRegistry();
    registry.register({ name: "t", toolset: "s", schema: { description: "d" }, handler: () => "", checkFn: (async () => true) as never });
    expect(registry.availabilityOf("t").reason).toMatch(/must be synchronous/);
  });

  it("a missing or empty required env var makes the tool unavailable, naming the variable", () => {
    const { registry } = clockRegistry();
    registry.register({ name: "t", toolset: "s", schema: { description: "d" }, handler: () => "", requiresEnv: ["MIBYAN_TEST_KEY"] });
    delete process.env.MIBYAN_TEST_KEY;
    expect(registry.availabilityOf("t")).toEqual({ available: false, code: "missing_env", reason: "missing environment variable MIBYAN_TEST_KEY" });
    process.env.MIBYAN_TEST_KEY = "";
    expect(registry.availabilityOf("t").available).toBe(false);
    process.env.MIBYAN_TEST_KEY = "k";
    expect(registry.availabilityOf("t").available).toBe(true);
    delete process.env.MIBYAN_TEST_KEY;
  });

  it("isToolsetAvailable never throws and is false for a toolset without tools", () => {
    const { registry } = clockRegistry();
    registry.register({ name: "t", toolset: "s", schema: { description: "d" }, handler: () => "", checkFn: () => { throw new Error("x"); } });
    expect(registry.isToolsetAvailable("s")).toBe(false);
    expect(registry.isToolsetAvailable("nothing")).toBe(false);
    expect(registry.availabilityOf("ghost")).toMatchObject({ available: false, code: "not_registered" });
  });

  it("clear() forgets cached answers", () => {
    const { registry } = clockRegistry();
    let answer = true;
    registry.register({ name: "t", toolset: "s", schema: { description: "d" }, handler: () => "", checkFn: () => answer });
    registry.availabilityOf("t");
    answer = false;
    expect(registry.availabilityOf("t").available).toBe(true);
    registry.availability.clear();
    expect(registry.availabilityOf("t").available).toBe(false);
  });
});
