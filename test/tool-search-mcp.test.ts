/**
 * Tool search over a real MCP server (test/fixtures/mcp/server.mjs over stdio): its tools are deferred,
 * found and called through the bridge with hooks seeing the real tool, a tool the server adds with
 * `list_changed` is found by the next search, and `mibyan tools --plan` shows the plan from config.yaml.
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { afterAll, describe, expect, it } from "vitest";

import { planToolDefinitions } from "../src/agent/tool-search/index.js";
import type { ParsedToolCall } from "../src/registry/types.js";
import { BIN, cliEnv, spawnCollect } from "./support/cli-run.js";
import { discover, FIXTURE, fixtureServer, pidAlive, waitFor } from "./support/mcp.js";

const parse = (text: string): Record<string, unknown> => JSON.parse(text) as Record<string, unknown>;

describe("tool search over a real MCP server", () => {
  it("defers the server's tools, finds and runs echo through tool_call; hooks see mcp__fx__echo", async () => {
    const { registry } = await discover({ fx: fixtureServer(["--tools=echo", "--extra=30"]) });
    const seen: ParsedToolCall[] = [];
    registry.addPreHook((call) => void seen.push(structuredClone(call)));
    const plan = planToolDefinitions({ registry, toolSearch: { enabled: "on" } });
    expect(plan.deferred.map((d) => d.name)).toContain("mcp__fx__echo");
    expect(plan.definitions.map((d) => d.function.name)).not.toContain("mcp__fx__echo");
    const bridge = plan.bridge!;
    const found = parse(await bridge.handleFunctionCall("tool_search", { query: "echo the text back" }));
    expect((found.matches as { name: string; source: string; source_name: string }[])[0]).toMatchObject({ name: "mcp__fx__echo", source: "mcp", source_name: "fx" });
    const described = parse(await bridge.handleFunctionCall("tool_describe", { name: "mcp__fx__echo" }));
    expect(described.parameters).toMatchObject({ properties: { text: { type: "string" } }, required: ["text"] });
    const answer = await bridge.handleFunctionCall("tool_call", { name: "mcp__fx__echo", arguments: '{"text":"hi there"}' }, { toolCallId: "c9" });
    expect(answer).toContain("hi there");
    expect(seen).toEqual([{ id: "c9", name: "mcp__fx__echo", arguments: { text: "hi there" } }]);
    const missing = parse(await bridge.handleFunctionCall("tool_call", { name: "mcp__fx__echo", arguments: {} }));
    expect(String(missing.error)).toContain("Invalid arguments for mcp__fx__echo");
    expect(missing.parameters).toMatchObject({ required: ["text"] });
  });

  it("a tool the server adds (list_changed) is found by the next tool_search; a removed one is not available", async () => {
    const { registry } = await discover({ dyn: fixtureServer(["--dynamic", "--extra=5"]) });
    const plan = planToolDefinitions({ registry, toolSearch: { enabled: "on" } });
    const bridge = plan.bridge!;
    expect(parse(await bridge.handleFunctionCall("tool_search", { query: "zebra" })).matches).toEqual([]);
    const added = await bridge.handleFunctionCall("tool_call", { name: "mcp__dyn__add_tool", arguments: { name: "zebra" } });
    expect(added).toContain("added zebra");
    await waitFor(() => registry.has("mcp__dyn__zebra"), 5_000, "the new tool to be registered");
    const found = parse(await bridge.handleFunctionCall("tool_search", { query: "zebra" }));
    expect((found.matches as { name: string }[]).map((m) => m.name)).toEqual(["mcp__dyn__zebra"]);
    expect(await bridge.handleFunctionCall("tool_call", { name: "mcp__dyn__zebra", arguments: {} })).toContain("zebra ok");
    await bridge.handleFunctionCall("tool_call", { name: "mcp__dyn__remove_tool", arguments: { name: "zebra" } });
    await waitFor(() => !registry.has("mcp__dyn__zebra"), 5_000, "the tool to be removed");
    expect(parse(await bridge.handleFunctionCall("tool_describe", { name: "mcp__dyn__zebra" }))).toEqual({
      error: "'mcp__dyn__zebra' is not currently available. Re-run tool_search to refresh.",
    });
  });
});

describe("mibyan tools --plan", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  function home(toolSearch: string): { dir: string; spawns: string } {
    const dir = mkdtempSync(path.join(tmpdir(), "mibyan-tool-plan-"));
    dirs.push(dir);
    const spawns = path.join(dir, "spawns.txt");
    writeFileSync(spawns, "");
    const args = [FIXTURE, `--spawn-file=${spawns}`, "--tools=echo", "--extra=20"].map((a) => JSON.stringify(a)).join(", ");
    writeFileSync(path.join(dir, "config.yaml"), `mcp_servers:\n  demo:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${args}]\n${toolSearch}`);
    return { dir, spawns };
  }
  const run = (dir: string, args: string[]) => spawnCollect(process.execPath, [BIN, ...args], { env: cliEnv(dir, tmpdir()), cwd: dir });
  const allGone = (spawns: string): boolean => readFileSync(spawns, "utf8").split("\n").filter(Boolean).map(Number).every((pid) => !pidAlive(pid));

  it("--json: with tool_search.enabled on, the server's tools are deferred with the reason; built-ins stay visible", async () => {
    const h = home("tool_search:\n  enabled: on\n");
    const result = await run(h.dir, ["tools", "--plan", "--json"]);
    expect(result.status, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { activated: boolean; visible: string[]; deferred: { name: string; reason: string }[]; mode: string };
    expect(report.activated).toBe(true);
    expect(report.mode).toBe("on");
    expect(report.visible).toEqual(expect.arrayContaining(["terminal", "read_file", "tool_search", "tool_describe", "tool_call"]));
    expect(report.visible.filter((n) => n.startsWith("mcp__"))).toEqual([]);
    expect(report.deferred.map((d) => d.name)).toEqual(expect.arrayContaining(["mcp__demo__echo", "mcp__demo__t0", "mcp__demo__t19"]));
    expect(report.deferred[0]!.reason).toContain('MCP server "demo" tool; tool search is on');
    await waitFor(() => allGone(h.spawns), 5_000, "the server to be gone");
  });

  it("text: auto with a large --context passes through; a small one defers, naming the threshold", async () => {
    const h = home("tool_search:\n  threshold_pct: 10\n");
    const large = await run(h.dir, ["tools", "--plan", "--context", "1000000"]);
    expect(large.status, large.stderr).toBe(0);
    expect(large.stdout).toMatch(/^Tool search: not active \(mode auto\): MCP and plugin tool schemas take ~[\d,]+ tokens, under 10% of a 1,000,000-token context \(100,000\)/);
    expect(large.stdout).toContain("Deferred (0)");
    const small = await run(h.dir, ["tools", "--plan", "--context", "2000"]);
    expect(small.stdout).toMatch(/^Tool search: active \(mode auto\): .*at least 10% of a 2,000-token context \(200\)/);
    expect(small.stdout).toMatch(/Deferred \(2[0-9]\):/);
    expect(small.stdout).toContain('mcp__demo__echo');
  });

  it("a bad tool_search value in config.yaml is a located error (exit 2); a bad --context a usage error", async () => {
    const h = home("tool_search:\n  threshold_pct: 250\n");
    const bad = await run(h.dir, ["tools", "--plan"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/tool_search\.threshold_pct/);
    expect(bad.stderr).toMatch(/a number from 0 to 100/);
    const mode = home("tool_search:\n  enabled: sometimes\n");
    const badMode = await run(mode.dir, ["tools", "--plan"]);
    expect(badMode.status).toBe(2);
    expect(badMode.stderr).toMatch(/tool_search\.enabled.*one of auto, on, off/);
    const usage = await run(h.dir, ["tools", "--plan", "--context", "-5"]);
    expect(usage.status).toBe(2);
  });
});
