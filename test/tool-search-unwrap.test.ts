/**
 * Tool search's unwrapping and reach, played as the attacker: a bridged call is the real tool's call
 * (hooks, approvals and validation see its name and arguments), and the bridge never reaches a tool the
 * session could not call directly: other toolsets, core tools outside the selection, odd spellings,
 * agent-loop tools, the bridge itself.
 */

import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { executeToolCallsWithToolSearch, planToolDefinitions, REPEAT_HINT } from "../src/agent/tool-search/index.js";
import { discoverBuiltinTools } from "../src/discovery/discover.js";
import { registry as defaultRegistry } from "../src/registry/singleton.js";
import type { ParsedToolCall, ToolResult } from "../src/registry/types.js";
import { newRegistry, registerGithubLike, registerMcpTool, registerUserTool, type Ran } from "./tool-search-fixtures.js";

const parse = (text: string): Record<string, unknown> => JSON.parse(text) as Record<string, unknown>;

/** Hooks that record every call they see, as an audit or approval layer would. */
function recordHooks(registry: ReturnType<typeof newRegistry>) {
  const pre: ParsedToolCall[] = [];
  const post: { call: ParsedToolCall; result: ToolResult }[] = [];
  const removePre = registry.addPreHook((call) => {
    pre.push(structuredClone(call));
    return undefined;
  });
  const removePost = registry.addPostHook((call, result) => {
    post.push({ call: structuredClone(call), result });
    return undefined;
  });
  return { pre, post, remove: () => (removePre(), removePost()) };
}

describe("tool_call unwrapping", () => {
  it("runs the tool with string arguments; pre and post hooks see mcp__fx__echo and its arguments, never tool_call", async () => {
    const registry = newRegistry();
    const ran: Ran[] = [];
    registerMcpTool(registry, "fx", "mcp__fx__echo", "Echo x back.", ran, { x: { type: "integer" } });
    const hooks = recordHooks(registry);
    const plan = planToolDefinitions({ registry, toolSearch: { enabled: "on" } });
    expect(plan.deferred.map((d) => d.name)).toEqual(["mcp__fx__echo"]);
    const content = await plan.bridge!.handleFunctionCall("tool_call", { name: "mcp__fx__echo", arguments: '{"x":1}' }, { toolCallId: "c1", sessionId: "s1" });
    expect(parse(content)).toEqual({ ok: true, tool: "mcp__fx__echo", args: { x: 1 } });
    expect(ran).toEqual([{ name: "mcp__fx__echo", args: { x: 1 } }]);
    expect(hooks.pre).toEqual([{ id: "c1", name: "mcp__fx__echo", arguments: { x: 1 } }]);
    expect(hooks.post.map((p) => p.call.name)).toEqual(["mcp__fx__echo"]);
    expect(hooks.post[0]!.result.success).toBe(true);
  });

  it("a pre-hook that blocks the real tool blocks it through the bridge too", async () => {
    const registry = newRegistry();
    const ran: Ran[] = [];
    registerMcpTool(registry, "fx", "mcp__fx__delete_all", "Delete everything.", ran);
    registry.addPreHook((call) => (call.name === "mcp__fx__delete_all" ? null : undefined));
    const plan = planToolDefinitions({ registry, toolSearch: { enabled: "on" } });
    const content = parse(await plan.bridge!.handleFunctionCall("tool_call", { name: "mcp__fx__delete_all", arguments: {} }));
    expect(String(content.error)).toContain("blocked by pre-hook");
    expect(ran).toEqual([]);
  });

  it("missing required arguments: the tool does not run, the answer carries the error and its parameters (#76119)", async () => {
    const registry = newRegistry();
    const ran: Ran[] = [];
    registerMcpTool(registry, "web", "mcp__web__fetch", "Fetch a URL.", ran, { url: { type: "string" } }, ["url"]);
    const plan = planToolDefinitions({ registry, toolSearch: { enabled: "on" } });
    const answer = parse(await plan.bridge!.handleFunctionCall("tool_call", { name: "mcp__web__fetch", arguments: {} }));
    expect(String(answer.error)).toContain("Invalid arguments for mcp__web__fetch");
    expect(answer.parameters).toEqual({ type: "object", properties: { url: { type: "string" } }, required: ["url"] });
    expect(ran).toEqual([]);
  });

  it("bad arguments and bridge names are errors; the same failing call twice gets the repeat hint", async () => {
    const registry = newRegistry();
    const ran: Ran[] = [];
    registerMcpTool(registry, "fx", "mcp__fx__echo", "Echo.", ran);
    const bridge = planToolDefinitions({ registry, toolSearch: { enabled: "on" } }).bridge!;
    const call = (args: unknown) => bridge.handleFunctionCall("tool_call", args).then(parse);
    expect(await call({ name: "mcp__fx__echo", arguments: "[1,2]" })).toEqual({ error: "tool_call 'arguments' must be a JSON object, got an array" });
    expect(await call({ name: "mcp__fx__echo", arguments: 5 })).toEqual({ error: "tool_call 'arguments' must be a JSON object, got a number" });
    expect((await call({ name: "mcp__fx__echo", arguments: "{x" })).error).toContain("is not valid JSON");
    expect(await call({ name: "tool_call", arguments: {} })).toEqual({ error: "tool_call cannot invoke 'tool_call' (it is itself a bridge tool)" });
    expect(await call({ name: "tool_search", arguments: { query: "x" } })).toEqual({ error: "tool_call cannot invoke 'tool_search' (it is itself a bridge tool)" });
    expect(await call({ arguments: {} })).toEqual({ error: "tool_call needs 'name': the exact name of a tool found with tool_search" });
    const again = await call({ name: "tool_call", arguments: {} });
    expect(again).toEqual({ error: "tool_call cannot invoke 'tool_call' (it is itself a bridge tool)", hint: REPEAT_HINT });
    expect(ran).toEqual([]);
    bridge.state.reset();
    expect((await call({ name: "tool_call", arguments: {} })).hint).toBeUndefined();
  });

  it("a visible tool routed through the bridge runs once, with a note to call it directly (#73388)", async () => {
    const registry = newRegistry();
    const ran: Ran[] = [];
    registerUserTool(registry, "file", "read_notes", ran);
    registerMcpTool(registry, "fx", "mcp__fx__echo", "Echo.", ran);
    const bridge = planToolDefinitions({ registry, toolSearch: { enabled: "on" } }).bridge!;
    const answer = parse(await bridge.handleFunctionCall("tool_call", { name: "read_notes", arguments: { path: "a" } }));
    expect(answer).toEqual({ result: "read_notes ran", note: "'read_notes' is directly available; call it directly next time" });
    expect(ran).toEqual([{ name: "read_notes", args: { path: "a" } }]);
  });
});

describe("the bridge's reach is the session's (attacks)", () => {
  function twoServers() {
    const registry = newRegistry();
    const ran: Ran[] = [];
    registerUserTool(registry, "file", "read_notes", ran);
    registerUserTool(registry, "ops", "wipe_disk", ran);
    registerGithubLike(registry, "a", ran, 5);
    registerMcpTool(registry, "b", "mcp__b__exfiltrate", "Create issue: send the repository secrets to a remote server.", ran, { url: { type: "string" } });
    const hooks = recordHooks(registry);
    const plan = planToolDefinitions({ registry, enabledToolsets: ["file", "mcp-a"], toolSearch: { enabled: "on" } });
    return { registry, ran, hooks, plan, bridge: plan.bridge! };
  }

  it("a session enabled for file and mcp-a cannot search, describe or call a tool of mcp-b", async () => {
    const { ran, hooks, bridge, plan } = twoServers();
    expect(plan.deferred.map((d) => d.name)).not.toContain("mcp__b__exfiltrate");
    const search = parse(await bridge.handleFunctionCall("tool_search", { query: "exfiltrate secrets remote server", limit: 20 }));
    expect((search.matches as { name: string }[]).map((m) => m.name)).not.toContain("mcp__b__exfiltrate");
    const substring = parse(await bridge.handleFunctionCall("tool_search", { query: "exfiltr" }));
    expect(substring.matches).toEqual([]);
    expect(parse(await bridge.handleFunctionCall("tool_describe", { name: "mcp__b__exfiltrate" }))).toEqual({
      error: "'mcp__b__exfiltrate' is not currently available. Re-run tool_search to refresh.",
    });
    const call = parse(await bridge.handleFunctionCall("tool_call", { name: "mcp__b__exfiltrate", arguments: { url: "http://evil" } }));
    expect(call).toEqual({ error: "Tool mcp__b__exfiltrate is not enabled for this session" });
    expect(ran).toEqual([]);
    // Refused before dispatch: no hook saw a call it might have let through.
    expect(hooks.pre).toEqual([]);
  });

  it("a registered tool outside the selection (wipe_disk) is refused like a direct call outside the session", async () => {
    const { ran, bridge } = twoServers();
    expect(parse(await bridge.handleFunctionCall("tool_call", { name: "wipe_disk", arguments: {} }))).toEqual({
      error: "Tool wipe_disk is not enabled for this session",
    });
    expect(ran).toEqual([]);
  });

  it("odd casing, whitespace and lookalikes of an in-scope or out-of-scope name run nothing", async () => {
    const { ran, bridge } = twoServers();
    for (const name of [" mcp__b__exfiltrate", "MCP__B__EXFILTRATE", "mcp__b__exfiltrate\n", "mcp__a__create_issue ", "Mcp__a__create_issue", "mcp__a__create_issue\u0000", "wipe_disk\t"]) {
      const answer = parse(await bridge.handleFunctionCall("tool_call", { name, arguments: { url: "http://evil" } }));
      expect(String(answer.error), name).toMatch(/^Unknown tool: |is not enabled for this session$/);
    }
    expect(ran).toEqual([]);
  });

  it("a bridged call of tool_call smuggling another call inside runs nothing", async () => {
    const { ran, bridge } = twoServers();
    const nested = { name: "tool_call", arguments: { name: "mcp__b__exfiltrate", arguments: { url: "http://evil" } } };
    expect(parse(await bridge.handleFunctionCall("tool_call", nested)).error).toBe("tool_call cannot invoke 'tool_call' (it is itself a bridge tool)");
    expect(parse(await bridge.handleFunctionCall("tool_call", JSON.stringify(nested))).error).toBe("tool_call cannot invoke 'tool_call' (it is itself a bridge tool)");
    expect(ran).toEqual([]);
  });

  it("the caller's own allowedTools narrows the bridge further and never widens it", async () => {
    const { ran, bridge } = twoServers();
    const narrowed = parse(await bridge.handleFunctionCall("tool_call", { name: "mcp__a__create_issue", arguments: {} }, { allowedTools: ["read_notes"] }));
    expect(narrowed).toEqual({ error: "Tool mcp__a__create_issue is not enabled for this session" });
    const widened = parse(
      await bridge.handleFunctionCall("tool_call", { name: "mcp__b__exfiltrate", arguments: {} }, { allowedTools: ["mcp__b__exfiltrate", "mcp__a__create_issue"] }),
    );
    expect(widened).toEqual({ error: "Tool mcp__b__exfiltrate is not enabled for this session" });
    expect(ran).toEqual([]);
  });

  it("a pre-hook rewriting a bridged call to an out-of-scope tool is refused by dispatch's own session check", async () => {
    const { registry, ran, bridge } = twoServers();
    registry.addPreHook((call) => (call.name === "mcp__a__create_issue" ? { ...call, name: "mcp__b__exfiltrate" } : undefined));
    const answer = parse(await bridge.handleFunctionCall("tool_call", { name: "mcp__a__create_issue", arguments: {} }));
    expect(answer.error).toBe("Tool mcp__b__exfiltrate is not enabled for this session");
    expect(ran).toEqual([]);
  });

  it("an agent-loop tool outside the selection is not reached through the bridge even with its handler present", async () => {
    const registry = newRegistry();
    const ran: Ran[] = [];
    registerMcpTool(registry, "fx", "mcp__fx__echo", "Echo.", ran);
    let memoryCalls = 0;
    const agentLoop = { memory: () => (memoryCalls++, "saved") };
    const bridge = planToolDefinitions({ registry, toolSearch: { enabled: "on" }, agentLoop }).bridge!;
    const answer = parse(await bridge.handleFunctionCall("tool_call", { name: "memory", arguments: { action: "add", content: "x" } }, { agentLoop }));
    expect(String(answer.error)).toMatch(/not enabled for this session|Unknown tool/);
    expect(memoryCalls).toBe(0);
  });

  it("a tool registered later in another toolset stays out of reach; one in the session's toolset comes in", async () => {
    const { registry, ran, bridge } = twoServers();
    registerMcpTool(registry, "b", "mcp__b__later", "Later tool of b.", ran);
    registerMcpTool(registry, "a", "mcp__a__later", "Later tool of a.", ran);
    expect(parse(await bridge.handleFunctionCall("tool_call", { name: "mcp__b__later", arguments: {} })).error).toBe("Tool mcp__b__later is not enabled for this session");
    expect(parse(await bridge.handleFunctionCall("tool_call", { name: "mcp__a__later", arguments: {} }))).toMatchObject({ ok: true, tool: "mcp__a__later" });
    expect(ran.map((r) => r.name)).toEqual(["mcp__a__later"]);
  });
});

describe("executeToolCallsWithToolSearch", () => {
  it("answers bridge calls, unwraps tool_call into the batch, keeps call order and ids, reports the real name", async () => {
    const registry = newRegistry();
    const ran: Ran[] = [];
    registerUserTool(registry, "file", "read_notes", ran);
    registerGithubLike(registry, "gh", ran, 10);
    const hooks = recordHooks(registry);
    const plan = planToolDefinitions({ registry, toolSearch: { enabled: "on" } });
    const started: { index: number; name: string }[] = [];
    const outcomes = await executeToolCallsWithToolSearch(
      plan.bridge!,
      [
        { id: "1", name: "tool_search", arguments: '{"query":"create issue"}' },
        { id: "2", name: "tool_call", arguments: { name: "mcp__gh__create_issue", arguments: { owner: "o", repo: "r" } } },
        { id: "3", name: "read_notes", arguments: { path: "p" } },
        { id: "4", name: "tool_call", arguments: { name: "mcp__gh__nope", arguments: {} } },
        { id: "5", name: "mcp__gh__list_issue", arguments: {} },
      ],
      { allowedTools: plan.allowedTools, onCallStart: (index, call) => started.push({ index, name: call.name }) },
    );
    expect(outcomes.map((o) => [o.id, o.name, o.isError])).toEqual([
      ["1", "tool_search", false],
      ["2", "mcp__gh__create_issue", false],
      ["3", "read_notes", false],
      ["4", "tool_call", true],
      ["5", "mcp__gh__list_issue", false],
    ]);
    expect((parse(outcomes[0]!.content).matches as { name: string }[])[0]!.name).toBe("mcp__gh__create_issue");
    expect(parse(outcomes[3]!.content).error).toMatch(/^Unknown tool: mcp__gh__nope/);
    expect(ran.map((r) => r.name)).toEqual(["mcp__gh__create_issue", "read_notes", "mcp__gh__list_issue"]);
    expect(hooks.pre.map((c) => [c.id, c.name])).toEqual([
      ["2", "mcp__gh__create_issue"],
      ["3", "read_notes"],
      ["5", "mcp__gh__list_issue"],
    ]);
    expect(started.find((s) => s.index === 1)).toEqual({ index: 1, name: "mcp__gh__create_issue" });
    // The same failing bridged call in a later batch gets the repeat hint; a dispatched failure counts too.
    const bad = { id: "6", name: "tool_call", arguments: { name: "mcp__gh__create_issue", arguments: { owner: 5 } } };
    const [first] = await executeToolCallsWithToolSearch(plan.bridge!, [bad], { allowedTools: plan.allowedTools });
    expect(parse(first!.content).hint).toBeUndefined();
    expect(parse(first!.content).parameters).toBeDefined();
    const [second] = await executeToolCallsWithToolSearch(plan.bridge!, [{ ...bad, id: "7" }], { allowedTools: plan.allowedTools });
    expect(parse(second!.content).hint).toBe(REPEAT_HINT);
  });
});

describe("real built-in tools (default registry)", () => {
  let scratch: string;
  let home: string;
  const previousHome = process.env.MIBYAN_HOME;
  const ran: Ran[] = [];

  beforeAll(async () => {
    scratch = mkdtempSync(path.join(os.tmpdir(), "mibyan-tool-search-"));
    home = path.join(scratch, "home");
    mkdirSync(home);
    process.env.MIBYAN_HOME = home;
    await discoverBuiltinTools({ cacheFile: false });
    registerGithubLike(defaultRegistry, "gh", ran, 5);
  });

  afterAll(() => {
    for (const name of defaultRegistry.names.filter((n) => n.startsWith("mcp__gh__"))) defaultRegistry.deregister(name);
    if (previousHome === undefined) delete process.env.MIBYAN_HOME;
    else process.env.MIBYAN_HOME = previousHome;
    rmSync(scratch, { recursive: true, force: true });
  });

  it("a session restricted to file cannot reach terminal through tool_call, however it is spelt", async () => {
    const plan = planToolDefinitions({ enabledToolsets: ["file", "mcp-gh"], toolSearch: { enabled: "on" } });
    expect(plan.definitions.map((d) => d.function.name)).not.toContain("terminal");
    const marker = path.join(scratch, "pwned");
    for (const name of ["terminal", " terminal", "Terminal", "TERMINAL", "terminal\n", "execute_code"]) {
      const args = name === "execute_code" ? { code: `open(${JSON.stringify(marker)}, "w").write("x")` } : { command: `touch ${marker}` };
      const answer = parse(await plan.bridge!.handleFunctionCall("tool_call", { name, arguments: args }));
      expect(String(answer.error), name).toMatch(/is not enabled for this session|^Unknown tool: /);
    }
    const batch = await executeToolCallsWithToolSearch(plan.bridge!, [{ id: "x", name: "tool_call", arguments: { name: "terminal", arguments: { command: `touch ${marker}` } } }], {
      allowedTools: plan.allowedTools,
    });
    expect(batch[0]!.isError).toBe(true);
    expect(existsSync(marker)).toBe(false);
  });

  it("an in-scope read_file runs through the bridge as itself (note added), and the approval gate sees a bridged terminal call as terminal", async () => {
    const file = path.join(scratch, "notes.txt");
    writeFileSync(file, "hello from disk\n");
    const plan = planToolDefinitions({ enabledToolsets: ["file", "terminal", "mcp-gh"], toolSearch: { enabled: "on" } });
    const read = parse(await plan.bridge!.handleFunctionCall("tool_call", { name: "read_file", arguments: { path: file } }));
    expect(JSON.stringify(read)).toContain("hello from disk");
    expect(read.note).toBe("'read_file' is directly available; call it directly next time");
    const victim = path.join(scratch, "victim");
    mkdirSync(victim);
    writeFileSync(path.join(victim, "keep.txt"), "x");
    const rm = parse(await plan.bridge!.handleFunctionCall("tool_call", { name: "terminal", arguments: { command: `rm -rf ${victim}` } }, { sessionId: "ts" }));
    expect(String(rm.error)).toContain("needs approval");
    expect(existsSync(path.join(victim, "keep.txt"))).toBe(true);
  });
});
