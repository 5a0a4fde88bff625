/**
 * mibyan-tools/langchain driven by LangChain itself: `langchain@1`'s `createAgent` with
 * `humanInTheLoopMiddleware` and a checkpointer, a fake chat model (`fakeModel` of
 * `@langchain/core/testing`) scripted to call our tools, real files, real commands and the real
 * approval gate (a recording surface stands for the person it would ask).
 */

import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createAgent, humanInTheLoopMiddleware } from "langchain";
import { describe, expect, it } from "vitest";

import { handleFunctionCall } from "../src/index.js";
import { langChainInterruptOn, toLangChainTools } from "../src/langchain.js";
import "../src/tools/execute-code.js";
import "../src/tools/read-file.js";
import "../src/tools/terminal.js";
import "../src/tools/write-file.js";
import { useRecordingGate } from "./support/recording-gate.js";

const { scratch, asked, decisions } = useRecordingGate("langchain-agent");

/** The ToolMessages of a run's messages. */
function toolMessages(messages: readonly BaseMessage[]): ToolMessage[] {
  return messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m));
}

/** A model that calls `name` with `args` (call id `id`), then answers with the text of the tool message it got. */
function scripted(name: string, args: Record<string, unknown>, id = "call-1") {
  return fakeModel()
    .respondWithTools([{ name, args, id }])
    .respond((messages) => new AIMessage(`saw: ${String(toolMessages(messages).at(-1)?.content ?? "nothing")}`));
}

describe("createAgent runs our tools", () => {
  it("reads a real file: the ToolMessage is exactly what handleFunctionCall returns", async () => {
    const file = path.join(scratch, "notes.txt");
    writeFileSync(file, "alpha\nbeta\n");
    const model = scripted("read_file", { path: file });
    const agent = createAgent({ model, tools: toLangChainTools({ names: ["read_file"] }) });
    const result = await agent.invoke({ messages: [{ role: "user", content: "read it" }] });
    const expected = await handleFunctionCall("read_file", { path: file });
    expect(expected).toContain("beta");
    const [message] = toolMessages(result.messages);
    expect(message!.content).toBe(expected);
    expect(message!.tool_call_id).toBe("call-1");
    expect(message!.status).not.toBe("error");
    expect(String(result.messages.at(-1)!.content)).toBe(`saw: ${expected}`);
  });

  it("a failing call: the model reads our error text in a ToolMessage with status error, the run goes on", async () => {
    const missing = path.join(scratch, "missing.txt");
    const model = scripted("read_file", { path: missing });
    const agent = createAgent({ model, tools: toLangChainTools({ names: ["read_file"] }) });
    const result = await agent.invoke({ messages: [{ role: "user", content: "read it" }] });
    const expected = await handleFunctionCall("read_file", { path: missing });
    expect(JSON.parse(expected)).toHaveProperty("error");
    const [message] = toolMessages(result.messages);
    expect(message!.content).toBe(expected);
    expect(message!.status).toBe("error");
    expect(String(result.messages.at(-1)!.content)).toBe(`saw: ${expected}`);
  });

  it("errors: throw: ToolNode's handleToolErrors turns our Error into a ToolMessage with status error and our text", async () => {
    const missing = path.join(scratch, "missing-too.txt");
    const model = scripted("read_file", { path: missing });
    const agent = createAgent({ model, tools: toLangChainTools({ names: ["read_file"], errors: "throw" }) });
    const result = await agent.invoke({ messages: [{ role: "user", content: "read it" }] });
    const expected = await handleFunctionCall("read_file", { path: missing });
    const [message] = toolMessages(result.messages);
    expect(message!.status).toBe("error");
    expect(String(message!.content)).toContain(expected);
  });
});

describe("a dangerous command goes through humanInTheLoopMiddleware", () => {
  function project(): string {
    const dir = path.join(mkdtempSync(path.join(scratch, "proj-")), "build");
    mkdirSync(dir);
    writeFileSync(path.join(dir, "out.js"), "x");
    return dir;
  }
  /** An agent whose model asks for `rm -rf <build>` (then `echo` runs of its own), our interruptOn, a checkpointer. */
  function setup(build: string, marker: string) {
    // The command leaves a line in `marker` when it runs, so the test can count the runs.
    const command = `rm -rf ${build} && echo ran >> ${marker}`;
    const model = scripted("terminal", { command });
    const tools = toLangChainTools({ names: ["terminal"], session: { id: "langchain-approval" } });
    const agent = createAgent({
      model,
      tools,
      middleware: [humanInTheLoopMiddleware({ interruptOn: langChainInterruptOn(tools) })],
      checkpointer: new MemorySaver(),
    });
    return { agent, model, command };
  }
  const thread = (id: string) => ({ configurable: { thread_id: id } });
  const runs = (marker: string) => (existsSync(marker) ? readFileSync(marker, "utf8").split("\n").filter(Boolean).length : 0);

  it("stops with an interrupt and runs nothing; rejected, the folder is still there; a new request approved runs it once, unasked by our gate", async () => {
    const build = project();
    const marker = path.join(path.dirname(build), "runs.txt");
    const { agent, command } = setup(build, marker);
    const config = thread("t-deny-approve");

    const first = await agent.invoke({ messages: [{ role: "user", content: "clean up" }] }, config);
    const interrupts = (first as { __interrupt__?: { value: { actionRequests: { name: string; args: { command: string }; description?: string }[] } }[] }).__interrupt__;
    expect(interrupts).toHaveLength(1);
    const request = interrupts![0]!.value.actionRequests[0]!;
    expect(request.name).toBe("terminal");
    expect(request.args.command).toBe(command);
    expect(request.description).toContain(command);
    expect(existsSync(build)).toBe(true);

    const rejected = await agent.invoke(new Command({ resume: { decisions: [{ type: "reject", message: "not now" }] } }), config);
    expect(existsSync(build)).toBe(true);
    expect(runs(marker)).toBe(0);
    expect(toolMessages(rejected.messages).map((m) => m.content)).toContain("not now");
    expect(asked).toEqual([]);
    expect(decisions).toEqual([]);

    // The same request again, in a new thread; this time the person approves.
    const again = setup(build, marker);
    const second = thread("t-approve");
    const stopped = await again.agent.invoke({ messages: [{ role: "user", content: "clean up" }] }, second);
    expect((stopped as { __interrupt__?: unknown[] }).__interrupt__).toHaveLength(1);
    expect(existsSync(build)).toBe(true);
    const approved = await again.agent.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), second);
    expect(existsSync(build)).toBe(false);
    expect(runs(marker)).toBe(1);
    expect(asked).toEqual([]);
    expect(decisions).toHaveLength(1);
    expect(decisions[0]).toMatchObject({ allowed: true, by: "user", scope: "once", sessionId: "langchain-approval" });
    const [message] = toolMessages(approved.messages);
    expect(JSON.parse(String(message!.content))).toMatchObject({ exit_code: 0, error: null });
  });

  it("in one thread: rejected, the model asks again (same call id), approved: runs once", async () => {
    const build = project();
    const marker = path.join(path.dirname(build), "runs.txt");
    const command = `rm -rf ${build} && echo ran >> ${marker}`;
    // A provider that numbers its calls per turn reuses `call_0`: the second request must still be asked and bound on its own.
    const model = fakeModel()
      .respondWithTools([{ name: "terminal", args: { command }, id: "call_0" }])
      .respondWithTools([{ name: "terminal", args: { command }, id: "call_0" }])
      .respond(new AIMessage("cleaned"));
    const tools = toLangChainTools({ names: ["terminal"], session: { id: "langchain-same-thread" } });
    const agent = createAgent({ model, tools, middleware: [humanInTheLoopMiddleware({ interruptOn: langChainInterruptOn(tools) })], checkpointer: new MemorySaver() });
    const config = thread("t-same");
    const first = await agent.invoke({ messages: [{ role: "user", content: "clean up" }] }, config);
    expect((first as { __interrupt__?: unknown[] }).__interrupt__).toHaveLength(1);
    const again = await agent.invoke(new Command({ resume: { decisions: [{ type: "reject", message: "not yet" }] } }), config);
    expect(existsSync(build)).toBe(true);
    expect(runs(marker)).toBe(0);
    // The model read the refusal and asked again: a new interrupt, nothing run.
    expect((again as { __interrupt__?: unknown[] }).__interrupt__).toHaveLength(1);
    expect(existsSync(build)).toBe(true);
    const done = await agent.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), config);
    expect(existsSync(build)).toBe(false);
    expect(runs(marker)).toBe(1);
    expect(asked).toEqual([]);
    expect(decisions.map((d) => [d.by, d.allowed])).toEqual([["user", true]]);
    expect(String(done.messages.at(-1)!.content)).toBe("cleaned");
  });

  it("a command nothing flags runs without an interrupt", async () => {
    const model = scripted("terminal", { command: "echo quiet" });
    const tools = toLangChainTools({ names: ["terminal"] });
    const agent = createAgent({ model, tools, middleware: [humanInTheLoopMiddleware({ interruptOn: langChainInterruptOn(tools) })], checkpointer: new MemorySaver() });
    const result = await agent.invoke({ messages: [{ role: "user", content: "say" }] }, thread("t-quiet"));
    expect((result as { __interrupt__?: unknown[] }).__interrupt__).toBeUndefined();
    expect(JSON.parse(String(toolMessages(result.messages)[0]!.content))).toMatchObject({ output: "quiet\n", exit_code: 0 });
  });

  it("the hardline floor holds: a command no person may approve is never offered, and our gate blocks it", async () => {
    const model = scripted("terminal", { command: "rm -rf /" });
    const tools = toLangChainTools({ names: ["terminal"] });
    const agent = createAgent({ model, tools, middleware: [humanInTheLoopMiddleware({ interruptOn: langChainInterruptOn(tools) })], checkpointer: new MemorySaver() });
    const result = await agent.invoke({ messages: [{ role: "user", content: "wipe" }] }, thread("t-hardline"));
    expect((result as { __interrupt__?: unknown[] }).__interrupt__).toBeUndefined();
    expect(JSON.parse(String(toolMessages(result.messages)[0]!.content))).toMatchObject({ status: "blocked" });
    expect(decisions[0]).toMatchObject({ allowed: false });
  });

  it("without the middleware, the same tools never run a flagged command unasked: refused, the model told it needs the user", async () => {
    const build = project();
    const model = scripted("terminal", { command: `rm -rf ${build}` });
    const agent = createAgent({ model, tools: toLangChainTools({ names: ["terminal"] }) });
    const result = await agent.invoke({ messages: [{ role: "user", content: "clean up" }] });
    expect(existsSync(build)).toBe(true);
    expect(asked).toEqual([]);
    expect(decisions).toMatchObject([{ allowed: false, by: "framework" }]);
    expect(String(toolMessages(result.messages)[0]!.content)).toMatch(/call terminal again with the same arguments/);
  });
});

describe("other questions of our gate, through the same middleware", () => {
  const thread = (id: string) => ({ configurable: { thread_id: id } });
  const interruptsOf = (state: unknown) => (state as { __interrupt__?: { value: { actionRequests: { name: string; description?: string }[] } }[] }).__interrupt__ ?? [];

  it("execute_code: the program is foreseen, interrupts, and approved runs once without our gate asking", async () => {
    const marker = path.join(mkdtempSync(path.join(scratch, "code-")), "marker.txt");
    const code = `import { appendFileSync } from "node:fs";\nappendFileSync(${JSON.stringify(marker)}, "ran\\n");\n`;
    const model = scripted("execute_code", { code });
    const tools = toLangChainTools({ names: ["execute_code"], session: { id: "lc-code" } });
    const agent = createAgent({ model, tools, middleware: [humanInTheLoopMiddleware({ interruptOn: langChainInterruptOn(tools) })], checkpointer: new MemorySaver() });
    const first = await agent.invoke({ messages: [{ role: "user", content: "run it" }] }, thread("t-code"));
    expect(interruptsOf(first)).toHaveLength(1);
    expect(interruptsOf(first)[0]!.value.actionRequests[0]!.description).toContain("appendFileSync");
    expect(existsSync(marker)).toBe(false);
    await agent.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), thread("t-code"));
    expect(readFileSync(marker, "utf8")).toBe("ran\n");
    expect(asked).toEqual([]);
    expect(decisions.map((d) => [d.by, d.allowed])).toEqual([["user", true]]);
  }, 30_000);

  it("write_file to a .env file: refused for now on the first call, the same call again interrupts, approved it writes once", async () => {
    const file = path.join(mkdtempSync(path.join(scratch, "env-")), ".env");
    const args = { path: file, content: "TOKEN=abc\n" };
    const model = fakeModel()
      .respondWithTools([{ name: "write_file", args, id: "w1" }])
      .respondWithTools([{ name: "write_file", args, id: "w2" }])
      .respond(new AIMessage("written"));
    const tools = toLangChainTools({ names: ["write_file"], session: { id: "lc-env" } });
    const agent = createAgent({ model, tools, middleware: [humanInTheLoopMiddleware({ interruptOn: langChainInterruptOn(tools) })], checkpointer: new MemorySaver() });
    const first = await agent.invoke({ messages: [{ role: "user", content: "write it" }] }, thread("t-env"));
    const [refusal] = toolMessages(first.messages);
    expect(JSON.parse(String(refusal!.content)).error).toMatch(/call write_file again with the same arguments/);
    expect(existsSync(file)).toBe(false);
    expect(interruptsOf(first)).toHaveLength(1);
    expect(interruptsOf(first)[0]!.value.actionRequests[0]!.name).toBe("write_file");
    const done = await agent.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), thread("t-env"));
    expect(readFileSync(file, "utf8")).toBe("TOKEN=abc\n");
    expect(asked).toEqual([]);
    expect(decisions.map((d) => [d.by, d.allowed])).toEqual([["framework", false], ["user", true]]);
    expect(String(done.messages.at(-1)!.content)).toBe("written");
  }, 30_000);
});

describe("abort", () => {
  it("the run's signal stops a long command and its process tree within 2 s", async () => {
    const pidFile = path.join(scratch, "langchain-sleeper.pid");
    const model = scripted("terminal", { command: `sh -c 'echo $$ > ${pidFile}; exec sleep 30'` });
    const agent = createAgent({ model, tools: toLangChainTools({ names: ["terminal"] }) });
    const controller = new AbortController();
    const started = Date.now();
    // Abort once the command is running `sleep` (past the shell's exec), so the test times a kill, not an exec.
    const running = (): boolean => {
      try {
        return readFileSync(`/proc/${readFileSync(pidFile, "utf8").trim()}/comm`, "utf8").trim() === "sleep";
      } catch {
        return false;
      }
    };
    const watcher = setInterval(() => {
      if (running()) {
        clearInterval(watcher);
        controller.abort();
      }
    }, 20);
    await agent.invoke({ messages: [{ role: "user", content: "wait" }] }, { signal: controller.signal }).catch(() => undefined);
    clearInterval(watcher);
    const aborted = Date.now();
    expect(aborted - started).toBeLessThan(10_000);
    const pid = Number(readFileSync(pidFile, "utf8").trim());
    let alive = true;
    while (alive && Date.now() - aborted < 2_000) {
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
