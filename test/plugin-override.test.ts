import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { clearConfigCache, createMemoryLogger, registry, type MemoryLogger } from "../src/index.js";

const originalHome = process.env.MIBYAN_HOME;
afterEach(() => {
  if (originalHome === undefined) delete process.env.MIBYAN_HOME;
  else process.env.MIBYAN_HOME = originalHome;
  clearConfigCache();
});

function home(config: string | undefined): void {
  const dir = mkdtempSync(path.join(tmpdir(), "mibyan-home-"));
  if (config !== undefined) writeFileSync(path.join(dir, "config.yaml"), config);
  process.env.MIBYAN_HOME = dir;
  clearConfigCache();
}

const builtin = { toolset: "web", schema: { description: "built-in" }, handler: () => "builtin", source: { kind: "builtin" } } as const;
const plugin = (id: string) => ({ toolset: "web", schema: { description: "plugin" }, handler: () => "plugin", override: true, source: { kind: "plugin", id } }) as const;

describe("the singleton registry reads the operator's opt-in from config.yaml", () => {
  it("refuses a plugin override of a built-in without allow_tool_override", async () => {
    registry.logger = createMemoryLogger();
    home("plugins:\n  entries:\n    acme:\n      enabled: true\n");
    registry.register({ name: "fetch_page", ...builtin });
    expect(registry.register({ name: "fetch_page", ...plugin("acme") })).toBeUndefined();
    expect(await registry.dispatch("fetch_page")).toBe("builtin");
    expect((registry.logger as MemoryLogger).messages.at(-1)?.message).toMatch(/plugins\.entries\.acme\.allow_tool_override: true/);
  });

  it("allows it when config.yaml opts that plugin in, and only that plugin", async () => {
    registry.logger = createMemoryLogger();
    home("plugins:\n  entries:\n    acme:\n      allow_tool_override: true\n");
    registry.register({ name: "fetch_page2", ...builtin });
    expect(registry.register({ name: "fetch_page2", ...plugin("other") })).toBeUndefined();
    expect(registry.register({ name: "fetch_page2", ...plugin("acme") })).toBeDefined();
    expect(await registry.dispatch("fetch_page2")).toBe("plugin");
  });

  it("refuses (and logs why) when config.yaml is broken", () => {
    const logger = createMemoryLogger();
    registry.logger = logger;
    home("plugins: [unclosed\n  - x: 1\n");
    registry.register({ name: "fetch_page3", ...builtin });
    expect(registry.register({ name: "fetch_page3", ...plugin("acme") })).toBeUndefined();
    expect(logger.messages.some((m) => /cannot read config\.yaml/.test(m.message))).toBe(true);
  });
});
