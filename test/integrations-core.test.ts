/**
 * The framework-free core of the adapters (src/integrations/): selection, one call, results with
 * media, and the approval preview against the real process-wide gate.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { afterAll, beforeEach, describe, expect, it } from "vitest";

import { getApprovalGate, setApprovalGate } from "../src/approval/default-gate.js";
import { MemoryAllowlist, addApprovals } from "../src/approval/flow/allowlist.js";
import { approvalRequired } from "../src/integrations/approval-preview.js";
import { runIntegrationCall } from "../src/integrations/run-call.js";
import { IntegrationSelectionError, selectIntegrationTools } from "../src/integrations/select-tools.js";
import { ToolRegistry, createMemoryLogger } from "../src/index.js";
import "../src/tools/terminal.js";

const scratch = mkdtempSync(path.join(tmpdir(), "mibyan-integrations-"));
const previousGate = getApprovalGate();
afterAll(() => {
  setApprovalGate(previousGate);
  rmSync(scratch, { recursive: true, force: true });
});

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).toString("base64");

function registryWithTools(): ToolRegistry {
  const registry = new ToolRegistry({ logger: createMemoryLogger(), agentLoopTools: ["todo"] });
  const object = { type: "object", properties: { q: { type: "string" } }, additionalProperties: false };
  registry.register({
    name: "chart",
    toolset: "media",
    schema: { description: "draws a chart", parameters: object },
    handler: () => ({ type: "multimodal", parts: [{ type: "text", text: "a chart" }, { type: "image", data: PNG, mimeType: "image/png" }] }),
  });
  registry.register({ name: "echo", toolset: "basic", schema: { description: "echoes", parameters: object }, handler: (args) => `echo ${String(args.q)}` });
  registry.register({ name: "broken", toolset: "basic", schema: { description: "is never available", parameters: object }, handler: () => "x", checkFn: () => false });
  registry.register({ name: "todo", toolset: "basic", schema: { description: "the loop's todo list", parameters: object }, handler: () => "never" });
  return registry;
}

describe("selection", () => {
  it("is getToolDefinitions' selection: toolsets, unavailable tools left out, names narrow it", () => {
    const registry = registryWithTools();
    expect(selectIntegrationTools({ registry }).map((t) => t.name)).toEqual(["chart", "echo"]);
    expect(selectIntegrationTools({ registry, enabledToolsets: ["basic"] }).map((t) => t.name)).toEqual(["echo"]);
    expect(selectIntegrationTools({ registry, disabledToolsets: ["basic"] }).map((t) => t.name)).toEqual(["chart"]);
    expect(selectIntegrationTools({ registry, names: ["chart", "broken"] }).map((t) => t.name)).toEqual(["chart"]);
    expect(() => selectIntegrationTools({ registry, names: ["chrat"] })).toThrow(IntegrationSelectionError);
    expect(() => selectIntegrationTools({ registry, enabledToolsets: ["nope"] })).toThrow(/nope/);
  });

  it("offers an agent-loop tool only with the session's handler for it, and runs it there", async () => {
    const registry = registryWithTools();
    const session = { id: "s1", agentLoop: { todo: () => "1 item" } };
    const names = selectIntegrationTools({ registry, session }).map((t) => t.name);
    expect(names).toContain("todo");
    const result = await runIntegrationCall({ name: "todo", args: { q: "x" } }, { registry, session }, new Set(names));
    expect(result).toEqual({ content: "1 item", isError: false });
  });
});

describe("one call", () => {
  it("a multimodal result comes with its parts (base64 media), the text keeps placeholders only", async () => {
    const registry = registryWithTools();
    const result = await runIntegrationCall({ name: "chart", args: {} }, { registry }, new Set(["chart"]));
    expect(result.isError).toBe(false);
    expect(result.parts).toEqual([
      { type: "text", text: "a chart" },
      { type: "media", data: PNG, mediaType: "image/png" },
    ]);
    expect(result.content).not.toContain(PNG);
    expect(result.content).toContain("[image: image/png, 8 bytes]");
  });

  it("a tool outside the offered set is refused as an error result, not thrown", async () => {
    const registry = registryWithTools();
    const result = await runIntegrationCall({ name: "chart", args: {} }, { registry }, new Set(["echo"]));
    expect(result.isError).toBe(true);
    expect(JSON.parse(result.content)).toHaveProperty("error");
  });

  it("bad arguments are the model's error text", async () => {
    const registry = registryWithTools();
    const result = await runIntegrationCall({ name: "echo", args: "{not json" }, { registry }, new Set(["echo"]));
    expect(result.isError).toBe(true);
    expect(JSON.parse(result.content).error).toMatch(/echo/);
  });
});

describe("which terminal commands need a person", () => {
  let home: string;
  const scope = { sessionId: "preview", taskId: "preview" };
  beforeEach(() => {
    home = mkdtempSync(path.join(scratch, "home-"));
    setApprovalGate({ home, settings: { mode: "manual" }, logger: createMemoryLogger() });
  });

  it("a flagged command does; a safe one, another tool, a hardline command do not", async () => {
    expect(await approvalRequired("terminal", { command: "rm -rf build" }, scope)).toBe(true);
    expect(await approvalRequired("terminal", { command: "ls -la" }, scope)).toBe(false);
    expect(await approvalRequired("read_file", { command: "rm -rf build" }, scope)).toBe(false);
    expect(await approvalRequired("terminal", { command: "rm -rf /" }, scope)).toBe(false);
  });

  it("approvals off, the session's yolo, a deny rule: the gate decides alone", async () => {
    setApprovalGate({ home, settings: { mode: "off" }, logger: createMemoryLogger() });
    expect(await approvalRequired("terminal", { command: "rm -rf build" }, scope)).toBe(false);
    const gate = setApprovalGate({ home, settings: { mode: "manual", deny: [{ rule: "recursive-delete" }] }, logger: createMemoryLogger() });
    expect(await approvalRequired("terminal", { command: "rm -rf build" }, scope)).toBe(false);
    setApprovalGate({ home, settings: { mode: "manual" }, logger: createMemoryLogger() }).setYolo("preview", true);
    expect(await approvalRequired("terminal", { command: "rm -rf build" }, scope)).toBe(false);
    expect(await approvalRequired("terminal", { command: "rm -rf build" }, { ...scope, sessionId: "other" })).toBe(true);
    expect(gate).toBeDefined();
  });

  it("matches approved for the session or in config.yaml's allowlist need nobody", async () => {
    const gate = getApprovalGate();
    const key = { rule: "recursive-delete", prefix: "rm -f -r build", backend: "local" };
    gate.grantSession("preview", [key]);
    expect(await approvalRequired("terminal", { command: "rm -rf build" }, scope)).toBe(false);
    expect(await approvalRequired("terminal", { command: "rm -rf build" }, { ...scope, sessionId: "other" })).toBe(true);
    await addApprovals([key], { home });
    expect(await approvalRequired("terminal", { command: "rm -rf build" }, { ...scope, sessionId: "other" })).toBe(false);
    // A store other than config.yaml is not seen: asking is the safe side.
    setApprovalGate({ home: mkdtempSync(path.join(scratch, "home-")), settings: { mode: "manual" }, allowlist: new MemoryAllowlist([key]), logger: createMemoryLogger() });
    expect(await approvalRequired("terminal", { command: "rm -rf build" }, scope)).toBe(true);
  });
});
