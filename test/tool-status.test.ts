import { describe, expect, it } from "vitest";
import { ToolRegistry, createMemoryLogger } from "../src/index.js";
import { collectToolStatus, renderToolStatus } from "../src/cli/commands/tools.js";
import type { Runtime } from "../src/cli/boot.js";

describe("mibyan tools status", () => {
  it("says why each tool is unavailable: env var, failed check, missing dependency", () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    registry.register({ name: "terminal", toolset: "terminal", schema: { description: "t" }, handler: () => "", emoji: "💻" });
    registry.register({ name: "web_search", toolset: "web", schema: { description: "w" }, handler: () => "", requiresEnv: ["MIBYAN_TEST_SERP_KEY"] });
    registry.register({ name: "browser_navigate", toolset: "browser", schema: { description: "b" }, handler: () => "", checkFn: () => false });
    const runtime = {
      registry,
      discovery: {
        imported: [],
        skipped: [],
        failed: [{ file: "/x/tools/image_gen.js", error: "Cannot find package 'fal-client'", tools: [{ name: "image_generate", toolset: "image_gen" }] }],
      },
    } as unknown as Runtime;
    const all = collectToolStatus(runtime);
    // Every built-in toolset is listed; those with no tools say why (test/cli-reserved-toolsets.test.ts).
    expect(all.find((s) => s.name === "todo")).toMatchObject({ tools: [], note: "no tools registered: todo is handled by the agent loop" });
    expect(all.find((s) => s.name === "browser")!.unregistered).toContain("browser_click");
    const status = all.filter((s) => s.tools.length > 0);
    expect(status.map((s) => [s.name, s.available])).toEqual([
      ["browser", false],
      ["image_gen", false],
      ["terminal", true],
      ["web", false],
    ]);
    const reasons = Object.fromEntries(status.flatMap((s) => s.tools.map((t) => [t.name, t.reason])));
    expect(reasons).toEqual({
      browser_navigate: "availability check failed",
      image_generate: "missing dependency: Cannot find package 'fal-client'",
      terminal: null,
      web_search: "missing environment variable MIBYAN_TEST_SERP_KEY",
    });
    const text = renderToolStatus(status);
    expect(text).toContain("✓ terminal");
    expect(text).toMatch(/image_generate\s+unavailable: missing dependency/);
  });
});
