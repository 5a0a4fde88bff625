import { existsSync } from "node:fs";

import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { MemoryAllowlist } from "../src/approval/flow/allowlist.js";
import { setApprovalGate } from "../src/approval/default-gate.js";
import { NonInteractiveSurface } from "../src/approval/surfaces/non-interactive.js";
import { createMemoryLogger } from "../src/util/logger.js";
import { getToolDefinitions, registry } from "../src/index.js";
import type { OpenAIToolDefinition, ToolContext } from "../src/index.js";
import "../src/tools/terminal.js";
import { TERMINAL_SCHEMA } from "../src/tools/terminal.js";
import { EXECUTE_CODE_SCHEMA, executeCodeHandler } from "../src/tools/execute-code.js";
import { DEFAULT_MAX_TOOL_CALLS, SANDBOX_TOOLS, runCode, sandboxEnv } from "../src/code-execution/run-code.js";
import { FALLBACK_SUMMARIES, firstSentence } from "../src/code-execution/schema.js";
import { alive } from "./support/proc.js";

interface Parsed {
  output: string;
  exit_code: number;
  tool_calls: number;
  error: string | null;
  status?: string;
}

function ctx(extra: Partial<ToolContext> = {}): ToolContext {
  return { signal: new AbortController().signal, toolName: "execute_code", ...extra };
}

async function handle(args: Record<string, unknown>, context: ToolContext = ctx()): Promise<Parsed> {
  return JSON.parse(await executeCodeHandler(args, context)) as Parsed;
}


async function waitDead(pid: number, ms = 3_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return !alive(pid);
}

function executeCodeDefinition(enabledToolsets: string[]): OpenAIToolDefinition {
  const definitions = getToolDefinitions({ enabledToolsets, quiet: true });
  const found = definitions.find((d) => d.function.name === "execute_code");
  expect(found).toBeDefined();
  return found!;
}

/** Every tool name mentioned in `text` among `names`, as a whole word. */
function mentioned(text: string, names: readonly string[]): string[] {
  return names.filter((name) => new RegExp(`(?<![A-Za-z0-9_-])${name}(?![A-Za-z0-9_-])`).test(text));
}

const ECHO = "test_echo";

beforeAll(() => {
  // Programs here run as if the user had approved execute_code for good; nested commands still
  // pass the gate as usual. The approval itself is tested in execute-code-approval.test.ts.
  setApprovalGate({
    settings: { mode: "manual" },
    surface: new NonInteractiveSurface("deny"),
    allowlist: new MemoryAllowlist([{ rule: "execute-code", prefix: "execute_code", backend: "local" }]),
    logger: createMemoryLogger(),
  });
  registry.register({
    name: ECHO,
    toolset: "test_echo",
    schema: {
      description: "Echo the call's context back.",
      parameters: { type: "object", properties: { text: { type: "string" } }, additionalProperties: false },
    },
    handler: (args, context) =>
      JSON.stringify({ text: args.text ?? null, sessionId: context.sessionId ?? null, taskId: context.taskId ?? null }),
  });
});

afterAll(() => {
  registry.deregister(ECHO);
});

describe("execute_code: running programs", () => {
  it("registers as a built-in of the code_execution toolset", () => {
    const entry = registry.get("execute_code");
    expect(entry).toMatchObject({ toolset: "code_execution", parallelSafe: false, source: { kind: "builtin" } });
    expect(entry?.patchSchema).toBeTypeOf("function");
  });

  it("returns what the program printed, stdout and stderr in order", async () => {
    const result = await handle({ code: 'console.log("a"); console.error("b"); console.log("c" + (40 + 2));' });
    expect(result).toEqual({ output: "a\nb\nc42\n", exit_code: 0, tool_calls: 0, error: null });
  });

  it("cleans escape sequences from the output", async () => {
    const result = await handle({ code: 'console.log("\\u001b[31mred\\u001b[0m")' });
    expect(result.output).toBe("red\n");
  });

  it("calls tools.terminal and uses its result (end to end through dispatch)", async () => {
    const content = await registry.dispatch("execute_code", {
      code: [
        'const r = JSON.parse(await tools.terminal({ command: "echo hi-from-terminal" }));',
        'console.log("got:", r.output.trim(), r.exit_code, typeof tools.terminal);',
      ].join("\n"),
    });
    const result = JSON.parse(content) as Parsed;
    expect(result.output).toBe("got: hi-from-terminal 0 function\n");
    expect(result.exit_code).toBe(0);
    expect(result.tool_calls).toBe(1);
    // The program ended on its own once its call was answered (no timeout).
    expect(result.status).toBeUndefined();
  });

  it("passes the caller's session and task to nested calls", async () => {
    const run = await runCode({
      code: [
        'const first = JSON.parse(await tools.test_echo({ text: "one" }));',
        "const second = JSON.parse(await tools.test_echo({}));",
        "console.log(JSON.stringify([first, second]));",
      ].join("\n"),
      sessionId: "session-1",
      taskId: "task-1",
      extraSandboxTools: [ECHO],
    });
    expect(run.exitCode).toBe(0);
    expect(run.toolCalls).toBe(2);
    expect(run.callableTools).toContain(ECHO);
    expect(JSON.parse(run.output)).toEqual([
      { text: "one", sessionId: "session-1", taskId: "task-1" },
      { text: null, sessionId: "session-1", taskId: "task-1" },
    ]);
  });

  it("runs nested calls through the hooks, with the outer call's session, task and surface", async () => {
    const seen: { name: string; sessionId?: string; taskId?: string; surface?: string; command?: unknown }[] = [];
    const remove = registry.addPreHook((call, context) => {
      seen.push({ name: call.name, sessionId: context.sessionId, taskId: context.taskId, surface: context.surface, command: call.arguments.command });
      if (call.name === "terminal" && call.arguments.command === "echo forbidden") return null;
      return undefined;
    });
    try {
      const content = await registry.dispatch(
        "execute_code",
        {
          code: [
            'const ok = JSON.parse(await tools.terminal({ command: "echo allowed" }));',
            'const blocked = JSON.parse(await tools.terminal({ command: "echo forbidden" }));',
            "console.log(ok.output.trim());",
            "console.log(blocked.error);",
          ].join("\n"),
        },
        // Nested calls come from where the program's call came from (an MCP client here).
        { sessionId: "s-42", taskId: "t-7", surface: "mcp" },
      );
      const result = JSON.parse(content) as Parsed;
      const [first, second] = result.output.trim().split("\n");
      expect(first).toBe("allowed");
      expect(second).toMatch(/blocked by pre-hook/);
      expect(result.tool_calls).toBe(2);
      expect(seen).toEqual([
        { name: "execute_code", sessionId: "s-42", taskId: "t-7", surface: "mcp", command: undefined },
        { name: "terminal", sessionId: "s-42", taskId: "t-7", surface: "mcp", command: "echo allowed" },
        { name: "terminal", sessionId: "s-42", taskId: "t-7", surface: "mcp", command: "echo forbidden" },
      ]);
    } finally {
      remove();
    }
  });

  it("rejects calls to tools outside the allow-list, to unregistered tools and to itself", async () => {
    const result = await handle({
      code: [
        "const results = {};",
        'for (const name of ["read_file", "execute_code", "test_echo", "no_such_tool"]) {',
        "  try { await tools[name]({}); results[name] = 'resolved'; } catch (e) { results[name] = e.message; }",
        "}",
        "console.log(JSON.stringify({ results, keys: Object.keys(tools) }));",
        // Bypassing the prelude: the parent refuses on its own.
        "const raw = await new Promise((resolve) => {",
        '  process.on("message", function h(m) { process.off("message", h); resolve(m); });',
        '  process.send({ type: "mibyan:tool_call", id: 999, name: "test_echo", args: {} });',
        "});",
        "console.log(JSON.stringify(raw));",
      ].join("\n"),
    });
    expect(result.exit_code).toBe(0);
    const [line1, line2] = result.output.trim().split("\n");
    const { results, keys } = JSON.parse(line1!) as { results: Record<string, string>; keys: string[] };
    expect(keys).toEqual(["terminal"]);
    expect(results.read_file).toBe("tools.read_file is not available in this run (callable tools: terminal).");
    expect(results.execute_code).toMatch(/execute_code cannot call itself/);
    expect(results.test_echo).toMatch(/tools\.test_echo is not available/);
    expect(results.no_such_tool).toMatch(/tools\.no_such_tool is not available/);
    expect(JSON.parse(line2!)).toEqual({
      type: "mibyan:tool_result",
      id: 999,
      ok: false,
      error: "tools.test_echo is not available in this run (callable tools: terminal).",
    });
    expect(result.tool_calls).toBe(0);
  });

  it("restricts callable tools to allowedTools when the embedder passes them", async () => {
    const run = await runCode({
      code: 'try { await tools.terminal({ command: "true" }); } catch (e) { console.log(e.message); }',
      allowedTools: ["execute_code"],
    });
    expect(run.callableTools).toEqual([]);
    expect(run.output).toBe("tools.terminal is not available in this run (no tools can be called from code in this run).\n");
  });

  it("inherits the session's allowedTools from dispatch, so code cannot reach a tool the model was not offered", async () => {
    const content = await registry.dispatch(
      "execute_code",
      { code: 'try { await tools.terminal({ command: "true" }); } catch (e) { console.log(e.message); }' },
      { allowedTools: ["execute_code"] },
    );
    expect(JSON.parse(content).output).toBe("tools.terminal is not available in this run (no tools can be called from code in this run).\n");
  });

  it("reports a thrown error as a non-zero exit with its stack in the output", async () => {
    const result = await handle({ code: 'const x = 1;\nthrow new Error("boom-" + (x + 41));' });
    expect(result.exit_code).not.toBe(0);
    expect(result.error).toBeNull();
    expect(result.output).toContain("Error: boom-42");
    // Line numbers are the program's own (the prelude import shares line 1).
    expect(result.output).toMatch(/program\.mjs:2:\d+/);
  });

  it("points a rejected tool call's stack at the program's line", async () => {
    const result = await handle({ code: "\n\nawait tools.nope();" });
    expect(result.exit_code).not.toBe(0);
    expect(result.output).toContain("Error: tools.nope is not available in this run");
    expect(result.output).toMatch(/program\.mjs:3:\d+/);
  });

  it("kills the program and everything it started on timeout", async () => {
    const result = await handle({
      code: [
        'import { spawn } from "node:child_process";',
        'const sleeper = spawn("sleep", ["30"], { stdio: "ignore" });',
        'console.log("pids", process.pid, sleeper.pid);',
        "setInterval(() => {}, 1000);",
      ].join("\n"),
      timeout: 1,
    });
    expect(result.status).toBe("timeout");
    expect(result.exit_code).toBe(124);
    expect(result.error).toMatch(/timed out after 1 seconds/);
    const match = /pids (\d+) (\d+)/.exec(result.output);
    expect(match).not.toBeNull();
    expect(await waitDead(Number(match![1]))).toBe(true);
    expect(await waitDead(Number(match![2]))).toBe(true);
  });

  it("is cancelled by the caller's signal, along with a running nested call", async () => {
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 600);
    const result = await handle(
      { code: 'console.log("before"); await tools.terminal({ command: "sleep 30" }); console.log("after");' },
      ctx({ signal: controller.signal }),
    );
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.status).toBe("cancelled");
    expect(result.exit_code).toBe(130);
    expect(result.output).toBe("before\n");
    expect(result.tool_calls).toBe(1);
  });

  it("does not start when the signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await handle({ code: 'console.log("never")' }, ctx({ signal: controller.signal }));
    expect(result).toMatchObject({ output: "", exit_code: 130, status: "cancelled" });
  });

  it("limits the number of nested calls per run", async () => {
    expect(DEFAULT_MAX_TOOL_CALLS).toBe(50);
    const run = await runCode({
      code: [
        "const out = [];",
        "for (let i = 0; i < 5; i++) {",
        "  try { await tools.test_echo({ text: String(i) }); out.push('ok'); } catch (e) { out.push(e.message); }",
        "}",
        "console.log(JSON.stringify(out));",
      ].join("\n"),
      extraSandboxTools: [ECHO],
      maxToolCalls: 3,
    });
    const out = JSON.parse(run.output) as string[];
    expect(out.slice(0, 3)).toEqual(["ok", "ok", "ok"]);
    expect(out[3]).toMatch(/at most 3 tool calls/);
    expect(out[4]).toMatch(/at most 3 tool calls/);
    expect(run.toolCalls).toBe(3);
  });

  it("runs with a stripped environment in an empty temporary directory that is removed afterwards", async () => {
    process.env.MIBYAN_TEST_SECRET = "s3cret";
    try {
      const result = await handle({
        code: [
          'import { readdirSync } from "node:fs";',
          "console.log(JSON.stringify({ keys: Object.keys(process.env), cwd: process.cwd(), files: readdirSync('.') }));",
        ].join("\n"),
      });
      const { keys, cwd, files } = JSON.parse(result.output) as { keys: string[]; cwd: string; files: string[] };
      expect(keys).not.toContain("MIBYAN_TEST_SECRET");
      expect(keys).not.toContain("NODE_OPTIONS");
      expect(keys.filter((k) => !k.startsWith("NODE_CHANNEL_"))).toEqual(
        expect.arrayContaining(Object.keys(sandboxEnv()).filter((k) => k !== "PWD")),
      );
      expect(files).toEqual([]);
      expect(existsSync(cwd)).toBe(false);
    } finally {
      delete process.env.MIBYAN_TEST_SECRET;
    }
    expect(sandboxEnv({ PATH: "/bin", OPENAI_API_KEY: "x", HOME: "/h", NODE_OPTIONS: "--require evil" })).toEqual({
      PATH: "/bin",
      HOME: "/h",
    });
  });

  it("caps long output, keeping the beginning and the end", async () => {
    const run = await runCode({
      code: 'console.log("START" + "x".repeat(20000)); console.log("END");',
      maxOutputChars: 1000,
    });
    expect(run.truncated).toBe(true);
    expect(run.output.startsWith("START")).toBe(true);
    expect(run.output.endsWith("END\n")).toBe(true);
    expect(run.output).toMatch(/characters omitted/);
    expect(run.output.length).toBeLessThan(1100);
  });

  it("refuses bad arguments without running anything", async () => {
    expect(await handle({ code: "   " })).toMatchObject({ exit_code: -1, error: "code must not be empty." });
    expect((await handle({ code: "1", timeout: 301 })).error).toMatch(/from 1 to 300/);
    expect((await handle({ code: 42 })).error).toMatch(/code must be a string/);
  });
});

describe("execute_code: schema patching", () => {
  it("the static schema lists the whole allow-list", () => {
    expect(mentioned(EXECUTE_CODE_SCHEMA.description, SANDBOX_TOOLS)).toEqual([...SANDBOX_TOOLS]);
    expect(registry.get("execute_code")?.schema.description).toBe(EXECUTE_CODE_SCHEMA.description);
  });

  it("mentions no other tool when only code_execution is enabled", () => {
    const definition = executeCodeDefinition(["code_execution"]);
    const text = JSON.stringify(definition.function);
    expect(mentioned(text, [...SANDBOX_TOOLS, ...registry.names.filter((n) => n !== "execute_code")])).toEqual([]);
    expect(definition.function.description).toMatch(/No tools can be called from code in this session/);
    // The registered schema itself is untouched.
    expect(registry.get("execute_code")?.schema).toEqual(EXECUTE_CODE_SCHEMA);
  });

  it("lists terminal, with the first sentence of its description, when terminal is enabled", () => {
    const definition = executeCodeDefinition(["code_execution", "terminal"]);
    const text = JSON.stringify(definition.function);
    expect(mentioned(text, SANDBOX_TOOLS)).toEqual(["terminal"]);
    expect(definition.function.description).toContain(`- tools.terminal(args): ${firstSentence(TERMINAL_SCHEMA.description)}`);
    expect(definition.function.description).toContain("await tools.terminal(");
    const code = (definition.function.parameters as { properties: { code: { description: string } } }).properties.code;
    expect(code.description).toMatch(/callable here: terminal\./);

    // Other export formats get the patched schema too.
    const anthropic = getToolDefinitions({ enabledToolsets: ["code_execution", "terminal"], format: "anthropic", quiet: true });
    const exported = JSON.stringify(anthropic.find((d) => (d as { name?: string }).name === "execute_code"));
    expect(mentioned(exported, SANDBOX_TOOLS)).toEqual(["terminal"]);
  });

  it("leaves out an allow-listed tool whose availability check fails, and lists it once it passes", async () => {
    let available = false;
    registry.register({
      name: "read_file",
      toolset: "file",
      checkFn: () => available,
      schema: { description: "Read a file from disk. Long explanation follows.", parameters: { type: "object", properties: {} } },
      handler: () => "contents",
    });
    try {
      registry.availability.clear();
      let text = JSON.stringify(executeCodeDefinition(["code_execution", "file", "terminal"]).function);
      expect(mentioned(text, SANDBOX_TOOLS)).toEqual(["terminal"]);
      // At run time it is not callable either.
      let run = await runCode({ code: "console.log(Object.keys(tools).join())" });
      expect(run.output).toBe("terminal\n");

      available = true;
      registry.availability.clear();
      const definition = executeCodeDefinition(["code_execution", "file", "terminal"]);
      text = JSON.stringify(definition.function);
      expect(mentioned(text, SANDBOX_TOOLS)).toEqual(["terminal", "read_file"]);
      expect(definition.function.description).toContain("- tools.read_file(args): Read a file from disk.\n");
      run = await runCode({ code: "console.log(Object.keys(tools).join(), await tools.read_file({}))" });
      expect(run.output).toBe("read_file,terminal contents\n");
    } finally {
      registry.deregister("read_file");
      registry.availability.clear();
    }
  });

  it("replaces a summary that names a tool the model cannot call", () => {
    registry.register({
      name: "read_file",
      toolset: "file",
      schema: { description: "Read a file (use search_files to find it first).", parameters: { type: "object", properties: {} } },
      handler: () => "contents",
    });
    try {
      const definition = executeCodeDefinition(["code_execution", "file"]);
      const text = JSON.stringify(definition.function);
      expect(mentioned(text, SANDBOX_TOOLS)).toEqual(["read_file"]);
      expect(definition.function.description).toContain(`- tools.read_file(args): ${FALLBACK_SUMMARIES.read_file}`);
      // No terminal here, so the example does not use it either.
      expect(definition.function.description).toContain("await tools.read_file(");
    } finally {
      registry.deregister("read_file");
    }
  });

  it("takes the first sentence of a description", () => {
    expect(firstSentence("Run it, e.g. like this. Second sentence.")).toBe("Run it, e.g. like this.");
    expect(firstSentence("First paragraph without a stop\n\nSecond.")).toBe("First paragraph without a stop");
    expect(firstSentence("Spans\n  two lines. Then more.")).toBe("Spans two lines.");
    expect(firstSentence("version 1.5 is out. Next.")).toBe("version 1.5 is out.");
    const long = firstSentence(`${"word ".repeat(100)}end.`, 50);
    expect(long.length).toBeLessThanOrEqual(50);
    expect(long.endsWith("…")).toBe(true);
  });
});
