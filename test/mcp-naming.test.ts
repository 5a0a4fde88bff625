// MCP tool names: `mcp__<server>__<tool>`, sanitised, and shortened deterministically past 64
// characters (spec 1.5 item 2; the registry refuses longer names).
import { describe, expect, it } from "vitest";

import { MCP_TOOL_NAME_MAX, mcpToolName, mcpToolsetName, mcpUtilityToolNames, sanitizeNamePart } from "../src/mcp/client/naming.js";
import { ToolRegistry } from "../src/registry/tool-registry.js";

describe("MCP tool names", () => {
  it("server my-api + tool list-items.v2 → mcp__my_api__list_items_v2", () => {
    expect(mcpToolName("my-api", "list-items.v2")).toEqual({ name: "mcp__my_api__list_items_v2", shortened: false });
  });

  it("replaces every character outside [A-Za-z0-9_], one _ per code point", () => {
    expect(sanitizeNamePart("a b/c:d@e😀f")).toBe("a_b_c_d_e_f");
    expect(sanitizeNamePart("Ünïcode")).toBe("_n_code");
    expect(sanitizeNamePart("ok_NAME_09")).toBe("ok_NAME_09");
  });

  it("keeps a name of exactly 64 characters and shortens a 65-character one deterministically", () => {
    const tool64 = "t".repeat(64 - "mcp__s__".length);
    expect(mcpToolName("s", tool64)).toEqual({ name: `mcp__s__${tool64}`, shortened: false });
    const long = mcpToolName("s", `${tool64}x`);
    expect(long.shortened).toBe(true);
    expect(long.name).toHaveLength(MCP_TOOL_NAME_MAX);
    expect(long.name).toMatch(/^mcp__s__t+_[0-9a-f]{8}$/);
    expect(mcpToolName("s", `${tool64}x`)).toEqual(long);
  });

  it("two long names sharing the first 55 characters stay distinct", () => {
    const base = "get_the_really_long_resource_description_for_";
    const a = mcpToolName("analytics-warehouse", `${base}customers`).name;
    const b = mcpToolName("analytics-warehouse", `${base}invoices`).name;
    expect(a).not.toBe(b);
    expect(a.slice(0, 55)).toBe(b.slice(0, 55));
    for (const name of [a, b]) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });

  it("the hash covers the sanitised name: foo-bar and foo_bar collide when long just as when short", () => {
    const tool = "x".repeat(80);
    expect(mcpToolName("foo-bar", tool).name).toBe(mcpToolName("foo_bar", tool).name);
    expect(mcpToolName("foo-bar", "search").name).toBe(mcpToolName("foo_bar", "search").name);
  });

  it("every generated name registers (the registry's own name rule)", () => {
    const registry = new ToolRegistry();
    const names = [mcpToolName("my server.v2", "ツール".repeat(40)), mcpToolName("a", "b"), mcpToolName("x".repeat(100), "y")];
    for (const { name } of names) {
      registry.register({ name, toolset: mcpToolsetName("my server.v2"), schema: { description: "d", parameters: { type: "object", properties: {} } }, handler: () => "ok" });
      expect(registry.get(name)?.name).toBe(name);
    }
  });

  it("toolset mcp-<server> keeps real names and replaces separators", () => {
    expect(mcpToolsetName("github")).toBe("mcp-github");
    expect(mcpToolsetName("my-api.v2_x")).toBe("mcp-my-api.v2_x");
    expect(mcpToolsetName("a,b c")).toBe("mcp-a_b_c");
  });

  it("utility tool names", () => {
    expect(mcpUtilityToolNames("fx")).toEqual({
      listResources: "mcp__fx__list_resources",
      readResource: "mcp__fx__read_resource",
      listPrompts: "mcp__fx__list_prompts",
      getPrompt: "mcp__fx__get_prompt",
    });
  });
});
