/**
 * A framework call's approval scope travels with the call (`CallOptions.approvalScope`), not in an
 * async context: real AI SDK tools (`toAiSdkTools`), a real ApprovalGate, real commands and real
 * `execute_code` children. What a person approved for one call is spent by that call only, even
 * with another call of the same session in flight at the same time; and the calls an
 * `execute_code` program makes carry the scope of the program's own call.
 */

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

import type { ModelMessage, ToolExecutionOptions } from "ai";
import { describe, expect, it } from "vitest";

import { toAiSdkTools } from "../src/ai-sdk.js";
import "../src/tools/execute-code.js";
import "../src/tools/terminal.js";
import { useRecordingGate } from "./support/recording-gate.js";

const { scratch, asked, decisions } = useRecordingGate("call-approval");

type Input = Record<string, unknown>;
interface AiTool {
  execute: (input: Input, options: ToolExecutionOptions) => Promise<unknown>;
  needsApproval: (input: Input, options: { toolCallId: string; messages: ModelMessage[] }) => Promise<boolean>;
}

/** The messages the AI SDK executes a call with after a person approved it (`tool-approval-response`). */
function approvedMessages(toolName: string, input: Input, toolCallId: string): ModelMessage[] {
  const approvalId = `approval-${toolCallId}`;
  return [
    { role: "user", content: "go" },
    {
      role: "assistant",
      content: [
        { type: "tool-call", toolCallId, toolName, input },
        { type: "tool-approval-request", approvalId, toolCallId },
      ],
    },
    { role: "tool", content: [{ type: "tool-approval-response", approvalId, approved: true }] },
  ];
}

/** Asks for approval of the call as the SDK does (`needsApproval`), then runs it with the person's yes. */
async function approvedCall(tool: AiTool, toolName: string, input: Input, toolCallId: string): Promise<unknown> {
  expect(await tool.needsApproval(input, { toolCallId, messages: [] })).toBe(true);
  return tool.execute(input, { toolCallId, messages: approvedMessages(toolName, input, toolCallId) });
}

function victimDir(name: string): string {
  const dir = path.join(scratch, name);
  mkdirSync(dir);
  writeFileSync(path.join(dir, "keep.txt"), "keep");
  return dir;
}

describe("a call's approval scope is the call's own", () => {
  it("two calls of the same session in flight at once: only the approved one runs the command", async () => {
    const tools = toAiSdkTools({ names: ["terminal"], session: { id: "race" } });
    const terminal = tools.terminal as unknown as AiTool;
    const victim = victimDir("race-victim");
    const log = path.join(scratch, "race.log");
    const input = { command: `rm -rf ${victim} && echo ran >> ${log}` };
    // The person is asked about call `a` and says yes.
    expect(await terminal.needsApproval(input, { toolCallId: "a", messages: [] })).toBe(true);
    // `b` (same command, same session, never approved) is started first, so its check comes while a's grant is unspent.
    const [b, a] = await Promise.all([
      terminal.execute(input, { toolCallId: "b", messages: [] }),
      terminal.execute(input, { toolCallId: "a", messages: approvedMessages("terminal", input, "a") }),
    ]);
    expect(JSON.parse(a as string)).toMatchObject({ exit_code: 0, error: null });
    expect(JSON.parse(b as string)).toMatchObject({ status: "blocked", exit_code: -1 });
    expect(JSON.parse(b as string).error).toMatch(/call terminal again with the same arguments/);
    expect(readFileSync(log, "utf8")).toBe("ran\n");
    expect(existsSync(victim)).toBe(false);
    // a: the person's yes (through the framework); b: the framework's route, never the gate's own prompt.
    expect(decisions.map((d) => d.by).sort()).toEqual(["framework", "user"]);
    expect(asked).toEqual([]);
  });

  it("a nested call of an execute_code program carries the program's scope: asked through the framework, then granted", async () => {
    const tools = toAiSdkTools({ names: ["execute_code", "terminal"], session: { id: "nested" } });
    const executeCode = tools.execute_code as unknown as AiTool;
    const victim = victimDir("nested-victim");
    const command = `rm -rf ${victim}`;
    const input = { code: `const r = JSON.parse(await tools.terminal({ command: ${JSON.stringify(command)} }));\nconsole.log(r.status ?? r.exit_code);` };

    // First call: the person approves the program; the nested command was not foreseen, so the
    // gate's question about it goes back to the framework (not the gate's own prompt) and is refused for now.
    const first = JSON.parse((await approvedCall(executeCode, "execute_code", input, "c1")) as string) as { output: string; tool_calls: number };
    expect(first).toMatchObject({ output: "blocked\n", tool_calls: 1 });
    expect(existsSync(path.join(victim, "keep.txt"))).toBe(true);
    expect(asked).toEqual([]);
    expect(decisions.map((d) => [d.by, d.command])).toEqual([
      ["user", input.code],
      ["framework", command],
    ]);

    // Second call with the same arguments: the person is asked about the program and the learned
    // command, approves, and both run under that call's grants; our gate never prompts.
    decisions.length = 0;
    const second = JSON.parse((await approvedCall(executeCode, "execute_code", input, "c2")) as string) as { output: string; tool_calls: number };
    expect(second).toMatchObject({ output: "0\n", tool_calls: 1 });
    expect(existsSync(victim)).toBe(false);
    expect(asked).toEqual([]);
    expect(decisions.map((d) => [d.by, d.command])).toEqual([
      ["user", input.code],
      ["user", command],
    ]);
  });
});
