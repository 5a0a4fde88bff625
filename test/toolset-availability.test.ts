// isToolsetAvailable: a toolset is available when any of its tools is (issue 11), not when the
// check of whichever tool registered first passes.
import { describe, expect, it } from "vitest";
import { ToolRegistry, createMemoryLogger } from "../src/index.js";

function registryWith(...tools: { name: string; toolset: string; checkFn?: () => boolean; requiresEnv?: string[] }[]): ToolRegistry {
  const registry = new ToolRegistry({ logger: createMemoryLogger() });
  for (const tool of tools) registry.register({ ...tool, schema: { description: "d" }, handler: () => "" });
  return registry;
}

describe("isToolsetAvailable", () => {
  it("is true when a later tool's check passes although the first tool's fails", () => {
    const registry = registryWith(
      { name: "browser_vision", toolset: "browser", checkFn: () => false },
      { name: "browser_navigate", toolset: "browser", checkFn: () => true },
    );
    expect(registry.isToolsetAvailable("browser")).toBe(true);
  });

  it("is false when the first tool's check passes but that tool is gone and the rest fail", () => {
    const registry = registryWith(
      { name: "a", toolset: "s", checkFn: () => true },
      { name: "b", toolset: "s", checkFn: () => false },
    );
    expect(registry.isToolsetAvailable("s")).toBe(true);
    registry.deregister("a");
    expect(registry.isToolsetAvailable("s")).toBe(false);
  });

  it("counts a tool with a missing environment variable as unavailable, and a toolset of only such tools too", () => {
    const variable = "MIBYAN_TEST_SURELY_UNSET_VARIABLE";
    delete process.env[variable];
    const registry = registryWith({ name: "needs_key", toolset: "keyed", requiresEnv: [variable] });
    expect(registry.isToolsetAvailable("keyed")).toBe(false);
    registry.register({ name: "free", toolset: "keyed", schema: { description: "d" }, handler: () => "" });
    expect(registry.isToolsetAvailable("keyed")).toBe(true);
  });

  it("agrees with the tools' own availability and never throws", () => {
    const registry = registryWith(
      { name: "x", toolset: "t", checkFn: () => { throw new Error("boom"); } },
      { name: "y", toolset: "t", checkFn: () => false },
    );
    expect(registry.isToolsetAvailable("t")).toBe(false);
    expect(registry.listTools({ toolset: "t" }).some((entry) => registry.availabilityOf(entry).available)).toBe(false);
    expect(registry.isToolsetAvailable("no-such-toolset")).toBe(false);
  });
});
