/**
 * Approvals by elicitation, in a program: createMcpServer over the built-in terminal, the SDK's
 * Client over InMemoryTransport. A "session" answer covers the same command later in that MCP
 * session only; a "once" answer does not carry over; a client that never answers is denied when
 * approvalTimeoutMs passes; calls that do not come through the server get the fallback surface.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ElicitRequestSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

import {
  ApprovalGate,
  createMcpServer,
  createMemoryLogger,
  discoverBuiltinTools,
  getApprovalGate,
  MemoryAllowlist,
  setApprovalGate,
  type ApprovalAnswer,
  type ApprovalSurface,
  type MibyanMcpServer,
} from "../src/index.js";

const dir = mkdtempSync(path.join(tmpdir(), "mcp-server-approvals-"));
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(async () => {
  await discoverBuiltinTools();
});

function freshGate(): ApprovalGate {
  return setApprovalGate(new ApprovalGate({ home: dir, settings: { mode: "manual" }, allowlist: new MemoryAllowlist(), logger: createMemoryLogger() }));
}

async function client(server: MibyanMcpServer, answer: (message: string) => ElicitResult | Promise<ElicitResult>): Promise<{ client: Client; asked: string[] }> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const c = new Client({ name: "test", version: "1" }, { capabilities: { elicitation: {} } });
  const asked: string[] = [];
  c.setRequestHandler(ElicitRequestSchema, (request) => {
    asked.push(request.params.message);
    return answer(request.params.message);
  });
  await c.connect(clientSide);
  open.push(c);
  return { client: c, asked };
}

let n = 0;
function target(): string {
  const build = path.join(dir, `build${n++}`);
  mkdirSync(build);
  return build;
}

describe("approvals through elicitation", () => {
  it("scope session: the same command later in the session is not asked again; another session is", async () => {
    freshGate();
    const server = await createMcpServer({ tools: ["terminal"] });
    open.push(server);
    const first = await client(server, () => ({ action: "accept", content: { approve: true, scope: "session" } }));
    const build = target();
    await first.client.callTool({ name: "terminal", arguments: { command: `rm -rf ${build}` } });
    expect(existsSync(build)).toBe(false);
    mkdirSync(build);
    await first.client.callTool({ name: "terminal", arguments: { command: `rm -rf ${build}` } });
    expect(existsSync(build)).toBe(false);
    expect(first.asked).toHaveLength(1);

    // A second client of the same server is another session: asked, and its "no" holds.
    const second = await client(server, () => ({ action: "decline" }));
    mkdirSync(build);
    await second.client.callTool({ name: "terminal", arguments: { command: `rm -rf ${build}` } });
    expect(second.asked).toHaveLength(1);
    expect(existsSync(build)).toBe(true);
  });

  it("scope once (the default): the next run of the command is asked again", async () => {
    freshGate();
    const server = await createMcpServer({ tools: ["terminal"], sessionId: "mcp-once" });
    open.push(server);
    const { client: c, asked } = await client(server, () => ({ action: "accept", content: { approve: true } }));
    const build = target();
    await c.callTool({ name: "terminal", arguments: { command: `rm -rf ${build}` } });
    mkdirSync(build);
    await c.callTool({ name: "terminal", arguments: { command: `rm -rf ${build}` } });
    expect(asked).toHaveLength(2);
  });

  it("a client that never answers is denied when approvalTimeoutMs passes; the command never runs", async () => {
    freshGate();
    const server = await createMcpServer({ tools: ["terminal"], approvalTimeoutMs: 300, sessionId: "mcp-timeout" });
    open.push(server);
    const { client: c, asked } = await client(server, () => new Promise<ElicitResult>(() => undefined));
    const build = target();
    const started = Date.now();
    const result = await c.callTool({ name: "terminal", arguments: { command: `rm -rf ${build}` } });
    expect(asked).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(JSON.stringify(result.content)).toMatch(/in time|not run/);
    expect(existsSync(build)).toBe(true);
  });

  it("a call that does not come through the server gets the fallback surface", async () => {
    const gate = freshGate();
    const answers: string[] = [];
    const fallback: ApprovalSurface = {
      kind: "scripted",
      ask: async (request): Promise<ApprovalAnswer> => {
        answers.push(request.command);
        return { scope: "deny", by: "user" };
      },
    };
    const server = await createMcpServer({ tools: ["terminal"], approvalFallback: fallback });
    open.push(server);
    expect(getApprovalGate()).toBe(gate);
    const decision = await gate.check("rm -rf /tmp/somewhere", { sessionId: "local", backend: "local" });
    expect(decision.allowed).toBe(false);
    expect(answers).toEqual(["rm -rf /tmp/somewhere"]);
  });
});
