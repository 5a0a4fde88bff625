/**
 * mibyan-tools/openai-agents driven by the Agents SDK's own runner (`run`, `RunState`) with a
 * scripted model: real files, real commands, the real approval gate (a recording surface stands
 * for the person it would ask).
 */

import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

import { Agent, RunState, Usage, run, setTracingDisabled, type AgentInputItem, type Model, type ModelRequest, type ModelResponse } from "@openai/agents-core";
import { beforeAll, describe, expect, it } from "vitest";

import { toOpenAIStrict } from "../src/adapters/strict.js";
import { getToolDefinitions, handleFunctionCall, registry } from "../src/index.js";
import { toOpenAIAgentsTools } from "../src/openai-agents.js";
import "../src/tools/read-file.js";
import "../src/tools/terminal.js";
import { useRecordingGate } from "./support/recording-gate.js";

const { scratch, asked, decisions } = useRecordingGate("agents");
beforeAll(() => setTracingDisabled(true));

/** A model that calls `toolName` once, then ends with the text of the tool output it got back. */
class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = [];
  constructor(
    private readonly toolName: string,
    private readonly input: unknown,
  ) {}
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const seen = toolOutputIn(request.input);
    if (seen === undefined) {
      return { usage: new Usage(), responseId: "r1", output: [{ type: "function_call", callId: "call-1", name: this.toolName, arguments: JSON.stringify(this.input), status: "completed" }] };
    }
    return { usage: new Usage(), responseId: "r2", output: [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: `saw: ${seen}` }] }] };
  }
  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("not used");
  }
}

/** The text of the function call result the model was given, if any. */
function toolOutputIn(input: string | AgentInputItem[]): string | undefined {
  if (typeof input === "string") return undefined;
  for (const item of input) {
    if (item.type !== "function_call_result") continue;
    const output = item.output as unknown;
    if (typeof output === "string") return output;
    if (output && typeof output === "object" && "text" in output) return String((output as { text: unknown }).text);
    return JSON.stringify(output);
  }
  return undefined;
}

describe("the tools", () => {
  it("are FunctionTools with the registry's names and descriptions, strict parameters from our converter", () => {
    const tools = toOpenAIAgentsTools({ enabledToolsets: ["terminal", "file"] });
    const definitions = getToolDefinitions({ enabledToolsets: ["terminal", "file"] });
    expect(tools.map((t) => t.name)).toEqual(definitions.map((d) => d.function.name));
    for (const d of definitions) {
      const tool = tools.find((t) => t.name === d.function.name)!;
      expect(tool.type).toBe("function");
      expect(tool.description).toBe(d.function.description);
      expect(tool.strict).toBe(true);
      expect(tool.parameters).toEqual(toOpenAIStrict(d.function).function.parameters);
    }
  });

  it("strict: false keeps the registry's schema (open to extra properties, as the SDK's non-strict type says)", () => {
    const [tool] = toOpenAIAgentsTools({ names: ["read_file"], strict: false });
    const [definition] = getToolDefinitions({ enabledToolsets: ["file"] }).filter((d) => d.function.name === "read_file");
    expect(tool!.strict).toBe(false);
    expect(tool!.parameters).toEqual({ ...definition!.function.parameters, additionalProperties: true });
  });
});

describe("a run", () => {
  it("reads a file: the model gets exactly what handleFunctionCall returns (strict-mode nulls dropped)", async () => {
    const file = path.join(scratch, "notes.txt");
    writeFileSync(file, "alpha\nbeta\n");
    // Strict mode makes the model send every parameter, null for those it leaves out.
    const model = new ScriptedModel("read_file", { path: file, offset: null, limit: null });
    const agent = new Agent({ name: "reader", instructions: "read", model, tools: toOpenAIAgentsTools({ names: ["read_file"] }) });
    const surfaces: (string | undefined)[] = [];
    const off = registry.addPreHook((_call, ctx) => void surfaces.push(ctx.surface));
    const result = await run(agent, "read it").finally(off);
    expect(surfaces).toEqual(["openai-agents"]);
    const expected = await handleFunctionCall("read_file", { path: file });
    expect(expected).toContain("beta");
    expect(toolOutputIn(model.requests.at(-1)!.input)).toBe(expected);
    expect(result.finalOutput).toBe(`saw: ${expected}`);
  });

  it("a failure is the model's text, the run goes on", async () => {
    const missing = path.join(scratch, "missing.txt");
    const model = new ScriptedModel("read_file", { path: missing, offset: null, limit: null });
    const agent = new Agent({ name: "reader", instructions: "read", model, tools: toOpenAIAgentsTools({ names: ["read_file"] }) });
    const result = await run(agent, "read it");
    const expected = await handleFunctionCall("read_file", { path: missing });
    expect(JSON.parse(expected)).toHaveProperty("error");
    expect(result.finalOutput).toBe(`saw: ${expected}`);
  });
});

describe("approvals through interruptions", () => {
  function project(): string {
    const dir = path.join(mkdtempSync(path.join(scratch, "proj-")), "build");
    mkdirSync(dir);
    writeFileSync(path.join(dir, "out.js"), "x");
    return dir;
  }
  function setup(dir: string) {
    const model = new ScriptedModel("terminal", { command: `rm -rf ${dir}`, timeout: null, workdir: null, background: null, notify_on_complete: null, watch_patterns: null, pty: null });
    const agent = new Agent({ name: "cleaner", instructions: "clean", model, tools: toOpenAIAgentsTools({ names: ["terminal"], session: { id: "agents-approval" } }) });
    return { model, agent };
  }

  it("stops with one interruption and runs nothing; approved after a round trip through a string, it runs once, unasked by our gate", async () => {
    const dir = project();
    const { model, agent } = setup(dir);
    const first = await run(agent, "clean up");
    expect(first.interruptions).toHaveLength(1);
    expect(first.interruptions[0]!.name).toBe("terminal");
    expect(existsSync(dir)).toBe(true);
    const saved = first.state.toString();
    const state = await RunState.fromString(agent, saved);
    state.approve(state.getInterruptions()[0]!);
    const second = await run(agent, state);
    expect(existsSync(dir)).toBe(false);
    expect(asked).toEqual([]);
    expect(decisions).toHaveLength(1);
    expect(decisions[0]).toMatchObject({ allowed: true, by: "user", scope: "once", sessionId: "agents-approval" });
    expect(JSON.parse(toolOutputIn(model.requests.at(-1)!.input)!)).toMatchObject({ exit_code: 0, error: null });
    expect(second.finalOutput).toMatch(/^saw: /);
  });

  it("rejected with a message: the model sees it and the directory is intact", async () => {
    const dir = project();
    const { model, agent } = setup(dir);
    const first = await run(agent, "clean up");
    first.state.reject(first.interruptions[0]!, { message: "no" });
    const second = await run(agent, first.state);
    expect(existsSync(dir)).toBe(true);
    expect(toolOutputIn(model.requests.at(-1)!.input)).toBe("no");
    expect(second.finalOutput).toBe("saw: no");
    expect(asked).toEqual([]);
    expect(decisions).toEqual([]);
  });
});

describe("abort", () => {
  it("the run's signal stops a long command and its process tree", async () => {
    const pidFile = path.join(scratch, "agents-sleeper.pid");
    const model = new ScriptedModel("terminal", { command: `sh -c 'echo $$ > ${pidFile}; exec sleep 30'`, timeout: null, workdir: null, background: null, notify_on_complete: null, watch_patterns: null, pty: null });
    const agent = new Agent({ name: "waiter", instructions: "wait", model, tools: toOpenAIAgentsTools({ names: ["terminal"] }) });
    const controller = new AbortController();
    const started = Date.now();
    const watcher = setInterval(() => {
      if (existsSync(pidFile)) {
        clearInterval(watcher);
        controller.abort();
      }
    }, 20);
    await run(agent, "wait", { signal: controller.signal }).catch(() => undefined);
    clearInterval(watcher);
    expect(Date.now() - started).toBeLessThan(10_000);
    const pid = Number(readFileSync(pidFile, "utf8").trim());
    const deadline = Date.now() + 2_000;
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
  });
});
