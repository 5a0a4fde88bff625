/**
 * `mibyan mcp serve` over real stdio (the built CLI; `npm run build` first), driven by the SDK's own
 * Client: the tool list is getToolDefinitions', stdout carries only JSON-RPC, dangerous commands are
 * put to a client with elicitation and refused to one without, the hardline floor holds, the client's
 * cancellation ends the command's process tree, secrets in output are redacted.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

import { discoverBuiltinTools, getToolDefinitions, registry } from "../src/index.js";
import { openSessionStore } from "../src/agent/stores/sessions/sqlite-store.js";
import { BIN, cliEnv } from "./support/cli-run.js";

const base = mkdtempSync(path.join(tmpdir(), "mcp-serve-stdio-"));
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

let counter = 0;
/** A fresh profile home (with `config` as its config.yaml) and working directory. */
function place(config = ""): { home: string; work: string } {
  const dir = path.join(base, String(counter++));
  const home = path.join(dir, "home");
  const work = path.join(dir, "work");
  mkdirSync(home, { recursive: true });
  mkdirSync(work, { recursive: true });
  if (config !== "") writeFileSync(path.join(home, "config.yaml"), config);
  return { home, work };
}

type ElicitAnswer = (message: string) => ElicitResult;

async function start(options: { args?: string[]; config?: string; elicit?: ElicitAnswer; home?: { home: string; work: string } } = {}): Promise<{ client: Client; work: string; stderr: () => string; asked: string[] }> {
  const { home, work } = options.home ?? place(options.config);
  const env = cliEnv(home, home) as Record<string, string>;
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, "mcp", "serve", ...(options.args ?? [])], env, cwd: work, stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const asked: string[] = [];
  const client = new Client({ name: "test", version: "1" }, { capabilities: options.elicit ? { elicitation: {} } : {} });
  if (options.elicit) {
    const answer = options.elicit;
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params.message);
      return answer(request.params.message);
    });
  }
  await client.connect(transport);
  clients.push(client);
  return { client, work, stderr: () => stderr, asked };
}

const text = (result: unknown): string => (((result as { content?: unknown }).content as { type: string; text?: string }[]) ?? []).map((b) => b.text ?? "").join("\n");

beforeAll(async () => {
  await discoverBuiltinTools();
});

describe("mibyan mcp serve --with-session (stdio)", () => {
  it("serves todo, memory and session_search bound to the stored session: memory on disk, another session found, the session stored", async () => {
    const where = place();
    // A conversation stored earlier, for session_search to find.
    const earlier = openSessionStore({ home: where.home });
    const old = earlier.createSession({ source: "cli" });
    earlier.appendMessages(old.id, [
      { role: "user", content: "how do we rotate the staging database password?" },
      { role: "assistant", content: "Run the vault-rotate job for pgstaging, then restart the api pods." },
    ]);
    earlier.close();

    const { client } = await start({ home: where, args: ["--with-session", "desk-1", "--tools", "read_file,todo,memory,session_search"] });
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(["memory", "read_file", "session_search", "todo"]);

    const added = await client.callTool({ name: "memory", arguments: { action: "add", target: "memory", content: "Staging passwords rotate through the vault-rotate job." } });
    expect(added.isError ?? false).toBe(false);
    expect(readFileSync(path.join(where.home, "memories", "MEMORY.md"), "utf8")).toContain("vault-rotate job");

    await client.callTool({ name: "todo", arguments: { todos: [{ id: "1", content: "rotate pgstaging", status: "pending" }] } });
    expect(text(await client.callTool({ name: "todo", arguments: {} }))).toContain("rotate pgstaging");

    const found = text(await client.callTool({ name: "session_search", arguments: { query: "vault-rotate pgstaging" } }));
    expect(found).toContain(old.id);
    await client.close();

    const store = openSessionStore({ home: where.home });
    try {
      expect(store.getSession("desk-1")?.source).toBe("mcp");
    } finally {
      store.close();
    }
  });

  it("without it the agent-loop tools are refused, and --tools cannot name them", async () => {
    const { client } = await start({ args: ["--tools", "read_file"] });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["read_file"]);
    expect((await client.callTool({ name: "todo", arguments: {} })).isError).toBe(true);
  });
});

describe("mibyan mcp serve (stdio)", () => {
  it("lists exactly getToolDefinitions for the same toolsets (deep-equal schemas)", async () => {
    const { client } = await start({ args: ["--toolsets", "terminal,file"] });
    const { tools } = await client.listTools();
    const expected = getToolDefinitions({ registry, enabledToolsets: ["terminal", "file"] });
    expect(tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }))).toEqual(
      expected.map((d) => ({ name: d.function.name, description: d.function.description, inputSchema: d.function.parameters })),
    );
    expect(tools.find((t) => t.name === "read_file")!.annotations).toMatchObject({ readOnlyHint: true });
    expect(tools.find((t) => t.name === "terminal")!.annotations).toMatchObject({ destructiveHint: true });
  });

  it("stdout carries only JSON-RPC: a session of list and three calls; the banner and logs go to stderr", async () => {
    const { home, work } = place();
    // At info level the server's banner is logged: it must land on stderr.
    const child = spawn(process.execPath, [BIN, "mcp", "serve", "--toolsets", "terminal,file"], { env: { ...cliEnv(home, home), MIBYAN_LOG_LEVEL: "info" }, cwd: work, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
    const send = (message: object): boolean => child.stdin.write(`${JSON.stringify(message)}\n`);
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "terminal", arguments: { command: "echo to-stdout; echo to-stderr >&2" } } });
    send({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "read_file", arguments: { path: "nope.txt" } } });
    send({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "terminal", arguments: { command: "printf 'a\\nb\\n'" } } });
    await expect.poll(() => out.split("\n").filter((l) => l.includes('"id":5')).length, { timeout: 10_000 }).toBe(1);
    child.stdin.end();
    await new Promise((resolve) => child.on("close", resolve));
    const lines = out.split("\n").filter((l) => l !== "");
    expect(lines.length).toBeGreaterThanOrEqual(5);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: "2.0" });
    expect(err).toMatch(/mibyan mcp serve: serving \d+ tools on stdio/);
  });

  it("a line that is not JSON-RPC gets a JSON-RPC error, and the session goes on", async () => {
    const { home, work } = place();
    const child = spawn(process.execPath, [BIN, "mcp", "serve", "--toolsets", "file"], { env: cliEnv(home, home), cwd: work, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    child.stdin.write("this is not json\n");
    child.stdin.write('{"hello":"world"}\n');
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } })}\n`);
    await expect.poll(() => out.includes('"id":1'), { timeout: 10_000 }).toBe(true);
    child.stdin.end();
    await new Promise((resolve) => child.on("close", resolve));
    const messages = out.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as { id?: unknown; error?: { code: number }; result?: unknown });
    expect(messages[0]).toMatchObject({ id: null, error: { code: -32700 } });
    expect(messages[1]).toMatchObject({ id: null, error: { code: -32600 } });
    expect(messages[2]).toMatchObject({ id: 1, result: { serverInfo: { name: "mibyan-tools" } } });
  });

  it("a dangerous command is put to a client with elicitation: approve runs it", async () => {
    const { client, work, asked } = await start({ elicit: () => ({ action: "accept", content: { approve: true } }) });
    mkdirSync(path.join(work, "build"));
    const result = await client.callTool({ name: "terminal", arguments: { command: "rm -rf build" } });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain("rm -rf build");
    expect(asked[0]).toMatch(/recursive/i);
    expect(result.isError ?? false, text(result)).toBe(false);
    expect(existsSync(path.join(work, "build"))).toBe(false);
  });

  it.each([
    ["decline", { action: "decline" }],
    ["cancel", { action: "cancel" }],
    ["accept without approve", { action: "accept", content: { approve: false } }],
  ] as const)("%s: blocked, and the command never ran", async (_label, answer) => {
    const { client, work, asked } = await start({ elicit: () => answer as ElicitResult });
    mkdirSync(path.join(work, "build"));
    const result = await client.callTool({ name: "terminal", arguments: { command: "rm -rf build" } });
    expect(asked).toHaveLength(1);
    expect(text(result)).toMatch(/denied|not run|dismissed/i);
    expect(existsSync(path.join(work, "build"))).toBe(true);
  });

  it("a client without elicitation: blocked, never run", async () => {
    const { client, work } = await start();
    mkdirSync(path.join(work, "build"));
    const result = await client.callTool({ name: "terminal", arguments: { command: "rm -rf build" } });
    expect(text(result)).toMatch(/needs approval.*elicitation|not run/is);
    expect(existsSync(path.join(work, "build"))).toBe(true);
  });

  it("approvals.mode off: runs without asking", async () => {
    const { client, work } = await start({ config: 'approvals:\n  mode: "off"\n' });
    mkdirSync(path.join(work, "build"));
    await client.callTool({ name: "terminal", arguments: { command: "rm -rf build" } });
    expect(existsSync(path.join(work, "build"))).toBe(false);
  });

  it("the hardline floor holds even when the client would approve; nobody is asked", async () => {
    const { client, asked } = await start({ elicit: () => ({ action: "accept", content: { approve: true } }) });
    const result = await client.callTool({ name: "terminal", arguments: { command: "rm -rf /" } });
    expect(asked).toHaveLength(0);
    expect(text(result)).toMatch(/never allowed|Blocked/);
  });

  it("the client's cancellation ends the command's process tree within 2 s", async () => {
    const { client, work } = await start();
    const controller = new AbortController();
    const call = client.callTool(
      { name: "terminal", arguments: { command: "sh -c 'echo $$ > outer.pid; sleep 30 & echo $! > inner.pid; wait'", timeout: 60 } },
      undefined,
      { signal: controller.signal },
    );
    call.catch(() => undefined);
    const inner = path.join(work, "inner.pid");
    await expect.poll(() => existsSync(inner) && readFileSync(inner, "utf8").trim() !== "", { timeout: 10_000 }).toBe(true);
    const pids = [readFileSync(path.join(work, "outer.pid"), "utf8"), readFileSync(inner, "utf8")].map((p) => Number(p.trim()));
    const alive = (pid: number): boolean => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    expect(pids.every(alive)).toBe(true);
    const cancelledAt = Date.now();
    controller.abort("stop");
    await expect(call).rejects.toThrow();
    await expect.poll(() => pids.some(alive), { timeout: 2_000, interval: 50 }).toBe(false);
    expect(Date.now() - cancelledAt).toBeLessThan(2_000);
  });

  it("a long command sends progress notifications with the client's token", async () => {
    const { client } = await start({ args: ["--tools", "terminal"] });
    const progress: number[] = [];
    const result = await client.callTool({ name: "terminal", arguments: { command: "sleep 2.5; echo done" } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
      resetTimeoutOnProgress: true,
    });
    expect(text(result)).toContain("done");
    expect(progress.length).toBeGreaterThanOrEqual(1);
  });

  it("secrets in a command's output are redacted", async () => {
    const { client } = await start();
    const secret = "sk-proj-" + "Zq7".repeat(14);
    const result = await client.callTool({ name: "terminal", arguments: { command: `echo OPENAI_API_KEY=${secret}` } });
    expect(JSON.stringify(result)).not.toContain(secret);
    expect(text(result)).toContain("OPENAI_API_KEY");
  });

  it("a plugin's console output goes to stderr, its tool is served and its pre_tool_call hook blocks MCP calls", async () => {
    const config = "plugins:\n  enabled: [noisy]\n";
    const { home, work } = place(config);
    mkdirSync(path.join(home, "plugins/noisy"), { recursive: true });
    writeFileSync(path.join(home, "plugins/noisy/plugin.yaml"), "name: noisy\n");
    writeFileSync(
      path.join(home, "plugins/noisy/index.js"),
      `console.log("noisy: loading");
export function register(ctx) {
  console.log("noisy: registering");
  ctx.registerTool({ name: "noisy_hello", toolset: "noisy", schema: { description: "Say hello loudly", parameters: { type: "object", properties: {} } },
    handler: () => { console.log("noisy: called"); console.info("noisy: info"); return "hello"; } });
  ctx.registerHook("pre_tool_call", ({ toolName, args }) =>
    toolName === "terminal" && /\\brm\\b/.test(String(args.command)) ? { action: "block", message: "noisy: no rm here" } : undefined);
}
`,
    );
    const child = spawn(process.execPath, [BIN, "mcp", "serve"], { env: cliEnv(home, home), cwd: work, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
    const send = (message: object): boolean => child.stdin.write(`${JSON.stringify(message)}\n`);
    mkdirSync(path.join(work, "build"));
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: { elicitation: {} }, clientInfo: { name: "raw", version: "1" } } });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "noisy_hello", arguments: {} } });
    send({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "terminal", arguments: { command: "rm -rf build" } } });
    await expect.poll(() => out.split("\n").filter((l) => l.includes('"id":4')).length, { timeout: 10_000 }).toBe(1);
    child.stdin.end();
    await new Promise((resolve) => child.on("close", resolve));
    const messages = out.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as { id?: number; result?: { tools?: { name: string }[]; content?: { text: string }[]; isError?: boolean } });
    expect(messages.every((m) => (m as { jsonrpc?: string }).jsonrpc === "2.0")).toBe(true);
    expect(err).toContain("noisy: registering");
    expect(err).toContain("noisy: called");
    expect(messages.find((m) => m.id === 2)!.result!.tools!.map((t) => t.name)).toContain("noisy_hello");
    expect(messages.find((m) => m.id === 3)!.result!.content![0]!.text).toBe("hello");
    const blocked = messages.find((m) => m.id === 4)!.result!;
    expect(blocked.isError).toBe(true);
    expect(blocked.content![0]!.text).toContain("noisy: no rm here");
    expect(existsSync(path.join(work, "build"))).toBe(true);
  });

  it("a typo in --exclude (or --tools) is a usage error, never a served tool", async () => {
    const { home, work } = place();
    const child = spawn(process.execPath, [BIN, "mcp", "serve", "--exclude", "termnal"], { env: cliEnv(home, home), cwd: work });
    let err = "";
    let out = "";
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    child.stdin.end();
    const status = await new Promise((resolve) => child.on("close", resolve));
    expect(status).toBe(2);
    expect(err).toMatch(/--exclude: no tool named termnal \(did you mean terminal/);
    expect(out).toBe("");
  });

  it("--print-tools prints the list as tools/list gives it", async () => {
    const { home, work } = place();
    const child = spawn(process.execPath, [BIN, "mcp", "serve", "--print-tools", "--tools", "read_file,terminal"], { env: cliEnv(home, home), cwd: work });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    const status = await new Promise((resolve) => child.on("close", resolve));
    expect(status).toBe(0);
    const tools = JSON.parse(out) as { name: string }[];
    expect(tools.map((t) => t.name)).toEqual(["read_file", "terminal"]);
  });
});
