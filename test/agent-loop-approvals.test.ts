/**
 * Approvals inside the loop for an application: `runAgent({ approvalSurface })` with the gate's
 * gateway surface. A scripted model runs a real `rm -rf` on a scratch directory; the question goes
 * to the application's `notify`, its answer (by id, as a later web request would bring it) decides,
 * and the directory is removed or survives. The surface answers for the run's session only and
 * only while the run lasts.
 */

import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

import { describe, expect, it } from "vitest";

import { MemoryPendingStore, type PendingApproval } from "../src/approval/surfaces/pending-store.js";
import { runAgent } from "../src/agent/loop/run-agent.js";
import { AgentConfigError } from "../src/agent/loop/errors.js";
import type { RunAgentOptions } from "../src/agent/types.js";
import { registry } from "../src/registry/singleton.js";
import "../src/tools/terminal.js";
import { useLoopFixture } from "./support/loop-fixture.js";
import { reply, type Json, type RecordedRequest, type ScriptedOpenAI } from "./support/scripted-openai.js";

const { scratch, tools, serve } = useLoopFixture("loop-approvals");

function buildDir(name: string): string {
  const dir = path.join(scratch, name, "build");
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "out.js"), "x");
  return dir;
}

const toolContent = (request: RecordedRequest): Json => JSON.parse((request.body.messages as Json[]).find((m) => m.role === "tool").content);

async function scripted(command: string): Promise<ScriptedOpenAI> {
  return serve([reply.toolCalls([{ id: "rm", name: "terminal", args: { command } }]), (request) => reply.text(JSON.stringify(toolContent(request)))]);
}

const base = (server: ScriptedOpenAI, sessionId: string): RunAgentOptions => ({
  model: "scripted-model",
  baseURL: server.baseURL,
  apiKey: "sk-test",
  prompt: "clean the build",
  registry,
  toolsets: ["terminal"],
  session: { id: sessionId, append: () => undefined },
  systemPrompt: false,
  retry: { maxRetries: 0 },
});

describe("runAgent's approvalSurface", () => {
  it("asks the application through its gateway surface; its answer decides; the question is the run's session's", async () => {
    const asked: PendingApproval[] = [];
    const surface = tools.gate.gatewaySurface({
      store: new MemoryPendingStore(),
      // The application posts the question and, later, a request carries the person's answer.
      notify: (pending) => {
        asked.push(pending);
        setTimeout(() => void surface.resolvePending(pending.id, { scope: "once", approver: "ana" }), 20);
      },
    });

    const approvedDir = buildDir("approved");
    const approvedServer = await scripted(`rm -rf ${approvedDir}`);
    const approved = await runAgent({ ...base(approvedServer, "web-1"), approvalSurface: surface });
    expect(JSON.parse(approved.finalText).exit_code).toBe(0);
    expect(existsSync(approvedDir)).toBe(false);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ sessionId: "web-1", command: `rm -rf ${approvedDir}` });

    // The run is over: the same session's next check goes to the gate's own surface (here: deny, nobody asked).
    const after = await tools.gate.check(`rm -rf ${buildDir("after")}`, { sessionId: "web-1", backend: "local" });
    expect(after).toMatchObject({ allowed: false, by: "non_interactive" });
    expect(asked).toHaveLength(1);
  });

  it("a denial through the gateway reaches the model and the directory survives", async () => {
    const surface = tools.gate.gatewaySurface({
      store: new MemoryPendingStore(),
      notify: (pending) => void setTimeout(() => void surface.resolvePending(pending.id, { scope: "deny", reason: "not on Fridays" }), 20),
    });
    const dir = buildDir("denied");
    const server = await scripted(`rm -rf ${dir}`);
    const result = await runAgent({ ...base(server, "web-2"), approvalSurface: surface });
    expect(JSON.parse(result.finalText).error).toMatch(/not on Fridays/);
    expect(existsSync(dir)).toBe(true);
  });

  it("another session running at the same time is not asked through it", async () => {
    const asked: string[] = [];
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const surface = tools.gate.gatewaySurface({
      store: new MemoryPendingStore(),
      notify: async (pending) => {
        asked.push(pending.sessionId);
        await held;
        await surface.resolvePending(pending.id, { scope: "once" });
      },
    });
    const mine = buildDir("mine");
    const theirs = buildDir("theirs");
    const running = runAgent({ ...base(await scripted(`rm -rf ${mine}`), "web-3"), approvalSurface: surface });
    // A second session without a surface of its own: the gate's surface answers (deny), the application is not asked.
    const other = await runAgent(base(await scripted(`rm -rf ${theirs}`), "web-4"));
    expect(JSON.parse(other.finalText).error).toBeDefined();
    expect(existsSync(theirs)).toBe(true);
    release();
    await running;
    expect(existsSync(mine)).toBe(false);
    expect(asked).toEqual(["web-3"]);
  });

  it("refuses something that is not a surface before sending anything", async () => {
    const server = await scripted("true");
    await expect(runAgent({ ...base(server, "web-5"), approvalSurface: { ask: "yes" } as never })).rejects.toBeInstanceOf(AgentConfigError);
    expect(server.requests).toHaveLength(0);
  });
});
