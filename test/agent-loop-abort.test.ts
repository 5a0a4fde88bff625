/**
 * Cancelling a run through its AbortSignal: mid-tool (a real `sleep` started by the terminal tool
 * is killed, the cancelled result is recorded so the history stays valid, the run returns
 * `interrupted`), while the endpoint hangs, while the loop waits out a Retry-After, and mid-stream
 * (what had streamed is kept and saved).
 */

import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

import { describe, expect, it } from "vitest";

import { runAgent } from "../src/agent/loop/run-agent.js";
import type { AgentEvent, AgentMessage, RunAgentOptions, SessionRecorder } from "../src/agent/types.js";
import { ToolRegistry, createMemoryLogger } from "../src/index.js";
import "../src/tools/terminal.js";
import { useLoopFixture } from "./support/loop-fixture.js";
import { reply, type ScriptedOpenAI } from "./support/scripted-openai.js";

const { scratch, tools, serve } = useLoopFixture("loop-abort");
let server: ScriptedOpenAI | undefined;

function recorder(id: string): SessionRecorder & { stored: AgentMessage[]; ended: string[] } {
  const stored: AgentMessage[] = [];
  const ended: string[] = [];
  return { id, stored, ended, append: (m) => void stored.push(...m), runEnded: (info) => void ended.push(info.status) };
}

/** Whether a pid is gone (or only a zombie waiting to be reaped). */
function gone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

const base = (baseURL: string, extra: Partial<RunAgentOptions>): RunAgentOptions => ({ model: "m", apiKey: "k", baseURL, systemPrompt: false, prompt: "go", ...extra });

describe("abort", () => {
  it("mid-tool: the terminal's sleep is killed, the cancelled result is recorded, the run returns interrupted", async () => {
    const pidFile = path.join(scratch, "sleep.pid");
    server = await serve([reply.toolCalls([{ id: "long", name: "terminal", args: { command: `sleep 45 & echo $! > ${pidFile}; wait` } }]), reply.text("never asked")]);
    const controller = new AbortController();
    const session = recorder("abort-tool");
    const events: AgentEvent[] = [];
    const started = Date.now();
    const run = runAgent(base(server.baseURL, { toolsets: ["terminal"], signal: controller.signal, session, onEvent: (e) => events.push(e) }));
    for (let i = 0; i < 200 && !(existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== ""); i++) await sleep(25);
    const pid = Number(readFileSync(pidFile, "utf8").trim());
    expect(gone(pid)).toBe(false);
    controller.abort();
    const result = await run;
    expect(Date.now() - started).toBeLessThan(15_000);
    for (let i = 0; i < 100 && !gone(pid); i++) await sleep(50);
    expect(gone(pid)).toBe(true);

    expect(result.status).toBe("interrupted");
    expect(server.requests).toHaveLength(1);
    expect(session.stored.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    const tool = session.stored[2] as { tool_call_id: string; content: string };
    expect(tool.tool_call_id).toBe("long");
    expect(tool.content).toMatch(/cancel/i);
    expect(session.ended).toEqual(["interrupted"]);
    expect(events.find((e) => e.type === "tool_end")).toMatchObject({ status: "cancelled", name: "terminal" });
    expect(events.at(-1)).toMatchObject({ type: "done", status: "interrupted" });
  });

  it("while the endpoint hangs: the request is dropped and the run returns at once", async () => {
    server = await serve([reply.hang()]);
    const controller = new AbortController();
    const session = recorder("abort-request");
    const run = runAgent(base(server.baseURL, { registry: new ToolRegistry({ logger: createMemoryLogger() }), signal: controller.signal, session }));
    for (let i = 0; i < 100 && server.requests.length === 0; i++) await sleep(10);
    const started = Date.now();
    controller.abort();
    const result = await run;
    expect(Date.now() - started).toBeLessThan(1000);
    expect(result.status).toBe("interrupted");
    expect(session.stored.map((m) => m.role)).toEqual(["user"]);
  });

  it("while waiting out a Retry-After: the wait ends with the signal", async () => {
    server = await serve([reply.error(429, "wait", { "retry-after": "30" }), reply.text("never")]);
    const controller = new AbortController();
    const run = runAgent(base(server.baseURL, { registry: new ToolRegistry({ logger: createMemoryLogger() }), signal: controller.signal, onEvent: (e) => e.type === "retry" && controller.abort() }));
    const started = Date.now();
    const result = await run;
    expect(Date.now() - started).toBeLessThan(2000);
    expect(result.status).toBe("interrupted");
    expect(server.requests).toHaveLength(1);
  });

  it("mid-stream: the text streamed so far is the final text and is saved", async () => {
    server = await serve([reply.streamText(["first part, ", "second part, ", "third part"], undefined, 300)]);
    const controller = new AbortController();
    const session = recorder("abort-stream");
    const result = await runAgent(
      base(server.baseURL, {
        registry: new ToolRegistry({ logger: createMemoryLogger() }),
        stream: true,
        signal: controller.signal,
        session,
        onEvent: (e) => {
          if (e.type === "text_delta") controller.abort();
        },
      }),
    );
    expect(result.status).toBe("interrupted");
    expect(result.finalText).toBe("first part, ");
    expect(session.stored.at(-1)).toMatchObject({ role: "assistant", content: "first part, " });
  });

  it("a signal already aborted: nothing is sent", async () => {
    server = await serve([reply.text("no")]);
    const result = await runAgent(base(server.baseURL, { registry: new ToolRegistry({ logger: createMemoryLogger() }), signal: AbortSignal.abort() }));
    expect(result.status).toBe("interrupted");
    expect(server.requests).toHaveLength(0);
  });
});
