/**
 * mibyan-tools/openai-agents across a process boundary and under the SDK's time limit:
 *
 * - a run stopped for approval is saved (`state.toString()`) and resumed in a second, real Node
 *   process (fresh module instances of the SDK and of mibyan-tools, a gate with nobody to ask):
 *   approved, the command runs exactly once and that gate never asks; rejected with "no", the
 *   model reads "no" and nothing runs;
 * - a tool's time limit is the SDK's `timeoutMs`: on expiry the model reads the SDK's
 *   "Tool 'terminal' timed out after Nms." and the command's process is gone.
 */

import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { Agent, run, setTracingDisabled } from "@openai/agents-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { getApprovalGate, setApprovalGate } from "../src/approval/default-gate.js";
import type { ApprovalRequest } from "../src/approval/flow/types.js";
import { ToolRegistry } from "../src/index.js";
import { toOpenAIAgentsTools } from "../src/openai-agents.js";
import { TERMINAL_SCHEMA, terminalHandler } from "../src/tools/terminal.js";
import { createMemoryLogger } from "../src/util/logger.js";
import { buildForNode, type BuiltScripts } from "./fixtures/approval-build.js";
import { ScriptedModel, terminalArgs, toolOutputIn } from "./fixtures/agents/scripted-model.js";

const scratch = mkdtempSync(path.join(tmpdir(), "mibyan-agents-resume-"));
const previousGate = getApprovalGate();
let built: BuiltScripts;
const asked: ApprovalRequest[] = [];
beforeAll(() => {
  setTracingDisabled(true);
  built = buildForNode(["test/fixtures/agents/resume-run.ts"]);
  setApprovalGate({
    home: mkdtempSync(path.join(scratch, "home-")),
    settings: { mode: "manual" },
    surface: { kind: "test", ask: async (r) => (asked.push(r), { scope: "deny", reason: "the gate's own prompt said no" }) },
    logger: createMemoryLogger(),
  });
}, 60_000);
afterAll(() => {
  setApprovalGate(previousGate);
  rmSync(built.dir, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

/** Runs the resume script in a fresh Node process with the saved state on stdin. */
function resumeElsewhere(decision: "approve" | "reject" | "none", command: string, state: string, home: string) {
  return new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    const child = spawn(process.execPath, [built.path("test/fixtures/agents/resume-run.ts"), decision, command], {
      // Its own profile home: manual approvals, no terminal to ask on (stdin is a pipe), so its gate's own answer is "deny".
      env: { ...process.env, MIBYAN_HOME: home },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("close", (code) => resolve({ code, out, err }));
    child.stdin.end(state);
  });
}

/** A directory to delete, and a command that deletes it and counts its own runs. */
function target() {
  const project = mkdtempSync(path.join(scratch, "proj-"));
  const dir = path.join(project, "build");
  mkdirSync(dir);
  writeFileSync(path.join(dir, "out.js"), "x");
  const counter = path.join(project, "runs.txt");
  return { dir, counter, command: `rm -rf ${dir} && echo ran >> ${counter}` };
}

async function stoppedRun(command: string) {
  const model = new ScriptedModel("terminal", terminalArgs(command));
  const agent = new Agent({ name: "cleaner", instructions: "clean", model, tools: toOpenAIAgentsTools({ names: ["terminal"], session: { id: "agents-resume" } }) });
  const first = await run(agent, "clean up");
  return first;
}

describe("a RunState resumed in another process", () => {
  it("approved there: the command runs exactly once, and that process's gate never asks", async () => {
    const { dir, counter, command } = target();
    const first = await stoppedRun(command);
    expect(first.interruptions).toHaveLength(1);
    expect(existsSync(dir)).toBe(true);
    const home = mkdtempSync(path.join(scratch, "home-b-"));
    const resumed = await resumeElsewhere("approve", command, first.state.toString(), home);
    expect(resumed.code, resumed.err).toBe(0);
    const result = JSON.parse(resumed.out) as { seen: string; finalOutput: string; interruptions: number };
    expect(result.interruptions).toBe(0);
    expect(JSON.parse(result.seen)).toMatchObject({ exit_code: 0, error: null });
    expect(existsSync(dir)).toBe(false);
    expect(readFileSync(counter, "utf8")).toBe("ran\n");
    // This process's gate was never asked either: the state carried the approval, not a grant of ours.
    expect(asked).toEqual([]);
  }, 30_000);

  it("resumed there without an answer: still interrupted, nothing runs", async () => {
    const { dir, counter, command } = target();
    const first = await stoppedRun(command);
    const resumed = await resumeElsewhere("none", command, first.state.toString(), mkdtempSync(path.join(scratch, "home-b-")));
    expect(resumed.code, resumed.err).toBe(0);
    expect(JSON.parse(resumed.out)).toMatchObject({ interruptions: 1, seen: null });
    expect(existsSync(dir)).toBe(true);
    expect(existsSync(counter)).toBe(false);
  }, 30_000);

  it("rejected there with a message: the model reads it, nothing runs", async () => {
    const { dir, counter, command } = target();
    const first = await stoppedRun(command);
    const resumed = await resumeElsewhere("reject", command, first.state.toString(), mkdtempSync(path.join(scratch, "home-b-")));
    expect(resumed.code, resumed.err).toBe(0);
    const result = JSON.parse(resumed.out) as { seen: string; finalOutput: string };
    expect(result.seen).toBe("no");
    expect(result.finalOutput).toBe("saw: no");
    expect(existsSync(dir)).toBe(true);
    expect(existsSync(counter)).toBe(false);
  }, 30_000);
});

describe("the tool's time limit is the SDK's timeoutMs", () => {
  it("expiry: the model reads the SDK's timeout text and the command's process is gone", async () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    registry.register({ name: "terminal", toolset: "terminal", schema: TERMINAL_SCHEMA, handler: terminalHandler, timeoutMs: 1_500 });
    const [tool] = toOpenAIAgentsTools({ registry, names: ["terminal"] });
    expect(tool!.timeoutMs).toBe(1_500);
    const pidFile = path.join(scratch, "timeout-sleeper.pid");
    const model = new ScriptedModel("terminal", terminalArgs(`sh -c 'echo $$ > ${pidFile}; exec sleep 30'`));
    const agent = new Agent({ name: "waiter", instructions: "wait", model, tools: [tool!] });
    const started = Date.now();
    const result = await run(agent, "wait");
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(toolOutputIn(model.requests.at(-1)!.input)).toBe("Tool 'terminal' timed out after 1500ms.");
    expect(result.finalOutput).toBe("saw: Tool 'terminal' timed out after 1500ms.");
    // The SDK aborted the signal our handler ran with: the terminal killed the process group.
    const pid = Number(readFileSync(pidFile, "utf8").trim());
    const deadline = Date.now() + 4_000;
    let alive = true;
    while (alive && Date.now() < deadline) {
      try {
        process.kill(pid, 0);
        await new Promise((r) => setTimeout(r, 50));
      } catch {
        alive = false;
      }
    }
    expect(alive).toBe(false);
  }, 20_000);

  it("a tool without a time limit gets none from the SDK either", () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    registry.register({ name: "plain", toolset: "t", schema: { description: "plain", parameters: { type: "object", properties: {} } }, handler: () => "ok" });
    const [tool] = toOpenAIAgentsTools({ registry });
    expect(tool!.timeoutMs).toBeUndefined();
  });
});
