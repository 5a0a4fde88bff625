/**
 * `mibyan chat -q` with what the profile configures around it, as real CLI processes against the
 * scripted endpoint: an MCP server's tool called by the model (and the server gone afterwards),
 * `approvals.non_interactive: allow` letting a flagged command run, 5xx after the retries, Ctrl-C.
 */
import { spawn } from "node:child_process";
import { pathToFileURL } from "node:url";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

import { openSessionStore } from "../src/agent/stores/sessions/sqlite-store.js";
import { BIN, ROOT, cliEnv, spawnCollect, type CliRun } from "./support/cli-run.js";
import { FIXTURE, pidAlive } from "./support/mcp.js";
import { hangWhenReached, reply, type Json, type ScriptedOpenAI } from "./support/scripted-openai.js";
import { useScriptedServers, useTempDirs } from "./support/test-resources.js";

const tempDir = useTempDirs();
const serve = useScriptedServers();

function profile(configYaml = ""): string {
  const home = tempDir("mibyan-chat-rt-");
  if (configYaml !== "") writeFileSync(path.join(home, "config.yaml"), configYaml);
  return home;
}

function env(home: string): NodeJS.ProcessEnv {
  const vars: NodeJS.ProcessEnv = { ...cliEnv(home, tempDir("mibyan-chat-rt-user-")) };
  for (const name of ["OPENAI_API_KEY", "OPENAI_BASE_URL"]) delete vars[name];
  return vars;
}

function chatArgs(server: ScriptedOpenAI, ...args: string[]): string[] {
  return [BIN, "chat", "--model", "m", "--base-url", server.baseURL, ...args];
}

function chat(home: string, server: ScriptedOpenAI, ...args: string[]): Promise<CliRun> {
  return spawnCollect(process.execPath, chatArgs(server, ...args), { env: env(home), cwd: home });
}

describe("mibyan chat -q with the profile's runtime", () => {
  it("offers and runs an MCP server's tool from config.yaml; no server outlives the command", async () => {
    const spawns = path.join(tempDir("mibyan-chat-rt-spawns-"), "spawns.txt");
    writeFileSync(spawns, "");
    const args = [FIXTURE, `--spawn-file=${spawns}`, "--tools=echo"].map((a) => JSON.stringify(a)).join(", ");
    const home = profile(`mcp_servers:\n  demo:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${args}]\n`);
    const server = await serve([reply.toolCalls([{ name: "mcp__demo__echo", args: { text: "hello through mcp" } }]), reply.text("The server said hello.")]);
    const run = await chat(home, server, "-q", "use the echo tool", "--json");
    expect(run.status, run.stderr).toBe(0);
    expect((server.requests[0]!.body.tools as Json[]).map((t) => t.function.name)).toContain("mcp__demo__echo");
    // No key configured anywhere (a local server): a placeholder, since the client refuses an empty one.
    expect(server.requests[0]!.headers.authorization).toBe("Bearer no-key");
    const tool = (server.requests[1]!.body.messages as Json[]).find((m) => m.role === "tool");
    expect(tool.content).toContain("hello through mcp");
    expect(JSON.parse(run.stdout).toolCalls).toEqual([expect.objectContaining({ name: "mcp__demo__echo", status: "ok" })]);
    const pids = readFileSync(spawns, "utf8").split("\n").filter(Boolean).map(Number);
    expect(pids.length).toBeGreaterThan(0);
    expect(pids.filter(pidAlive)).toEqual([]);
  });

  it("approvals.non_interactive: allow lets a flagged (not hardline) command run in -q mode", async () => {
    const home = profile("approvals:\n  non_interactive: allow\n");
    const scratch = path.join(home, "scratch");
    mkdirSync(scratch);
    writeFileSync(path.join(scratch, "junk.txt"), "junk\n");
    const server = await serve([reply.toolCalls([{ name: "terminal", args: { command: `rm -rf ${scratch}` } }]), reply.text("Removed.")]);
    const run = await chat(home, server, "-q", "remove the scratch folder", "--json");
    expect(run.status, run.stderr).toBe(0);
    expect(existsSync(scratch)).toBe(false);
    expect(JSON.parse(run.stdout).refused).toEqual([]);
  });

  it("5xx after the retries: exit 1 with the status, the session keeps the prompt", async () => {
    const home = profile();
    const busy = reply.error(503, "overloaded", { "retry-after-ms": "1" });
    const server = await serve([busy, busy, busy, busy]);
    const run = await chat(home, server, "-q", "are you there?");
    expect(run.status).toBe(1);
    expect(server.requests).toHaveLength(4);
    expect(run.stderr).toMatch(/mibyan chat: .*503/);
    const session = /session (\S+) keeps what was said/.exec(run.stderr)?.[1];
    expect(session).toBeDefined();
    const store = openSessionStore({ home });
    try {
      expect(store.getMessages(session!).map((m) => m.content)).toEqual(["are you there?"]);
    } finally {
      store.close();
    }
  });

  it("Ctrl-C during a request: the run stops, exit 130, the session is saved", async () => {
    const home = profile();
    const hanging = hangWhenReached();
    const server = await serve([hanging.step]);
    const child = spawn(process.execPath, chatArgs(server, "-q", "a long question"), { env: env(home), cwd: home, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    await hanging.reached;
    child.kill("SIGINT");
    const code = await Promise.race([exited, new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), 10_000))]);
    if (code === "timeout") child.kill("SIGKILL");
    expect(code).toBe(130);
    const session = /session (\S+) \(interrupted\)/.exec(stderr)?.[1];
    expect(session, stderr).toBeDefined();
    const store = openSessionStore({ home });
    try {
      expect(store.getMessages(session!).map((m) => m.content)).toEqual(["a long question"]);
    } finally {
      store.close();
    }
  });
});

describe("mibyan chat: toolsets and the todo list across --resume", () => {
  it("--toolsets limits what is offered; a resumed session gets its todo list back from its history", async () => {
    const home = profile();
    const plan = [
      { id: "1", content: "survey the herons", status: "completed" },
      { id: "2", content: "count the egrets", status: "in_progress" },
    ];
    const first = await serve([reply.toolCalls([{ name: "todo", args: { todos: plan } }]), reply.text("Planned.")]);
    const run = await chat(home, first, "-q", "plan the bird count", "--toolsets", "todo,file", "--json");
    expect(run.status, run.stderr).toBe(0);
    const offered = (first.requests[0]!.body.tools as Json[]).map((t) => t.function.name);
    expect(offered).toContain("todo");
    expect(offered).not.toContain("terminal");
    expect(offered).not.toContain("memory");
    const session = JSON.parse(run.stdout).sessionId as string;

    // A new process: the in-memory list is gone unless rebuilt from the stored todo result.
    const second = await serve([reply.toolCalls([{ name: "todo", args: {} }]), reply.text("Resumed.")]);
    const resumed = await chat(home, second, "-q", "where were we?", "--toolsets", "todo", "--resume", session, "--json");
    expect(resumed.status, resumed.stderr).toBe(0);
    const read = (second.requests[1]!.body.messages as Json[]).filter((m) => m.role === "tool").at(-1);
    expect(JSON.parse(read.content).todos).toEqual(plan);
  });
});

describe("mibyan chat --max-turns", () => {
  it("stops a model that keeps calling tools after N rounds, asks for a summary with tools refused, exit 0", async () => {
    const home = profile();
    const again = () => reply.toolCalls([{ name: "todo", args: {} }]);
    const server = await serve([again(), again(), reply.text("Summary: nothing left to do.")]);
    const run = await chat(home, server, "-q", "loop forever", "--max-turns", "2");
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toBe("Summary: nothing left to do.\n");
    expect(server.requests).toHaveLength(3);
    expect(server.requests[2]!.body.tool_choice).toBe("none");
    // One activity line per tool call on stderr, and the status with the session id.
    expect(run.stderr.match(/^📋 todo \(ok, \d+ ms\)$/gm)).toHaveLength(2);
    expect(run.stderr).toMatch(/^session \S+ \(max_turns\)$/m);
    const bad = await chat(home, server, "-q", "x", "--max-turns", "0");
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("--max-turns 0: expected a whole number from 1 to 10000");
  });
});

describe("what mibyan chat loads, and what other commands do not", () => {
  /** The dist/ modules and packages a command loaded (a loader hook notes every file: URL). */
  async function loaded(args: string[], home: string): Promise<{ run: CliRun; modules: string[] }> {
    const dir = tempDir("mibyan-chat-hook-");
    const hook = path.join(dir, "hook.mjs");
    writeFileSync(hook, `export async function load(url, context, next) { if (url.startsWith("file:")) process.stderr.write("\\nMODULE " + url + "\\n"); return next(url, context); }\n`);
    const register = path.join(dir, "register.mjs");
    writeFileSync(register, `import { register } from "node:module"; register(${JSON.stringify(pathToFileURL(hook).href)});\n`);
    const run = await spawnCollect(process.execPath, ["--import", register, BIN, ...args], { env: env(home), cwd: home });
    const root = pathToFileURL(ROOT).href;
    const modules = [...run.stderr.matchAll(/\nMODULE (\S+)\n/g)].map((m) => m[1]!.replace(root, ""));
    return { run, modules };
  }
  const heavy = (modules: string[]) => modules.filter((m) => /dist\/agent\/(loop\/run-agent|session-wiring|stores\/sessions\/sqlite-store)\.js$|node_modules\/(better-sqlite3|openai)\//.test(m));

  it("definitions (through commander) loads neither the loop, the session store, better-sqlite3 nor openai; chat does", async () => {
    const home = profile();
    const other = await loaded(["definitions", "--enable", "file"], home);
    expect(other.run.status).toBe(0);
    expect(other.modules.some((m) => m.endsWith("dist/cli/chat-command.js"))).toBe(true);
    expect(heavy(other.modules)).toEqual([]);

    const server = await serve([reply.text("hi")]);
    const chatRun = await loaded(["chat", "-q", "hi", "--model", "m", "--base-url", server.baseURL], home);
    expect(chatRun.run.status, chatRun.run.stderr).toBe(0);
    expect(heavy(chatRun.modules).length).toBeGreaterThanOrEqual(4);
  });
});

describe("mibyan chat -q on a terminal", () => {
  // With stdin and stderr on a terminal, the default approval surface is a prompt that waits for an
  // answer (approvals.timeout_seconds, 60 s by default). -q must not ask: the refusal is immediate.
  it.skipIf(!existsSync("/usr/bin/script"))("refuses a dangerous command at once instead of prompting (run under a pseudo-terminal)", async () => {
    const home = profile();
    const victim = path.join(home, "keep");
    mkdirSync(victim);
    writeFileSync(path.join(victim, "data.txt"), "keep me\n");
    const server = await serve([reply.toolCalls([{ name: "terminal", args: { command: `rm -rf ${victim}` } }]), reply.text("Refused.")]);
    const quote = (word: string) => `'${word.replace(/'/g, "'\\''")}'`;
    const command = [process.execPath, ...chatArgs(server, "-q", "delete keep", "--json")].map(quote).join(" ");
    const started = Date.now();
    const run = await spawnCollect("/usr/bin/script", ["-qec", command, "/dev/null"], { env: env(home), cwd: home });
    expect(run.status, run.stdout).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(run.stdout).not.toMatch(/\[o\]nce|approve\?/i);
    expect(readFileSync(path.join(victim, "data.txt"), "utf8")).toBe("keep me\n");
    const line = run.stdout.split(/\r?\n/).find((l) => l.startsWith("{"));
    expect(JSON.parse(line!).refused).toHaveLength(1);
  });
});
