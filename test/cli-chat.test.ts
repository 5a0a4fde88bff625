/**
 * `mibyan chat -q` end to end: real CLI processes (the built CLI: `npm run build` first) against the
 * scripted OpenAI-compatible server on 127.0.0.1, with stores in temporary profile homes. What the
 * model "does" is the script; what the CLI sent is asserted from the request bodies the server got.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

import { BIN, cliEnv, spawnCollect, type CliRun } from "./support/cli-run.js";
import { reply, startScriptedOpenAI, type ScriptEntry, type ScriptedOpenAI, type Json } from "./support/scripted-openai.js";

const KEY = "sk-chat-test-7f3c9a1b2d4e6f8091a2b3c4";
const dirs: string[] = [];
const servers: ScriptedOpenAI[] = [];

function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

let home: string;
let work: string;
beforeAll(() => {
  home = tempDir("mibyan-chat-home-");
  work = tempDir("mibyan-chat-work-");
});

async function serve(script: ScriptEntry[]): Promise<ScriptedOpenAI> {
  const server = await startScriptedOpenAI(script);
  servers.push(server);
  return server;
}

function env(profile: string): NodeJS.ProcessEnv {
  const vars: NodeJS.ProcessEnv = { ...cliEnv(profile, tempDir("mibyan-chat-user-")), CHAT_TEST_KEY: KEY };
  for (const name of ["OPENAI_API_KEY", "OPENAI_BASE_URL"]) delete vars[name];
  return vars;
}

function chat(server: ScriptedOpenAI | undefined, ...args: string[]): Promise<CliRun> {
  const endpoint = server === undefined ? [] : ["--model", "scripted-model", "--base-url", server.baseURL, "--api-key-env", "CHAT_TEST_KEY"];
  return spawnCollect(process.execPath, [BIN, "chat", ...endpoint, ...args], { env: env(home), cwd: work });
}

function json(run: CliRun): Json {
  try {
    return JSON.parse(run.stdout);
  } catch {
    throw new Error(`stdout is not JSON (exit ${run.status}):\n${run.stdout}\n--- stderr ---\n${run.stderr}`);
  }
}

/** The tool messages the endpoint received in request `index`. */
function toolResults(server: ScriptedOpenAI, index: number): { tool_call_id: string; content: string }[] {
  return (server.requests[index]!.body.messages as Json[]).filter((m) => m.role === "tool");
}

function systemPrompt(server: ScriptedOpenAI, index: number): string {
  const first = server.requests[index]!.body.messages[0];
  expect(first.role).toBe("system");
  return first.content as string;
}

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full) : [full];
  });
}

// The runs below share one profile home, in order: a session stored by one run is what the next ones find.
describe.sequential("mibyan chat -q", () => {
  let birdSession: string;

  it("prints the answer on stdout, exit 0, with the agent-loop tools offered and the key sent", async () => {
    const server = await serve([reply.text("Hello from the scripted model.")]);
    const run = await chat(server, "-q", "say hello");
    expect(run.stderr).toMatch(/^session \S+\n$/);
    expect(run).toMatchObject({ status: 0, stdout: "Hello from the scripted model.\n" });
    const body = server.requests[0]!.body;
    expect(body.model).toBe("scripted-model");
    expect(body.messages.at(-1)).toEqual({ role: "user", content: "say hello" });
    const names = (body.tools as Json[]).map((t) => t.function.name);
    expect(names).toEqual(expect.arrayContaining(["todo", "memory", "session_search", "terminal", "write_file"]));
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it("runs a tool call that writes a real file, and --json gives {answer, sessionId, toolCalls, usage}", async () => {
    const target = path.join(work, "written.txt");
    const server = await serve([reply.toolCalls([{ id: "w1", name: "write_file", args: { path: target, content: "written by the agent\n" } }]), reply.text("Wrote it.", { input: 30, output: 7 })]);
    const run = await chat(server, "-q", "write the file", "--json");
    expect(run.status).toBe(0);
    expect(readFileSync(target, "utf8")).toBe("written by the agent\n");
    const out = json(run);
    expect(out).toMatchObject({ answer: "Wrote it.", status: "completed", turns: 2, refused: [], resumed: false });
    expect(out.sessionId).toMatch(/^\d{8}_\d{6}_[0-9a-f]{6}$/);
    expect(out.toolCalls).toEqual([expect.objectContaining({ id: "w1", name: "write_file", status: "ok", turn: 1 })]);
    expect(out.usage).toMatchObject({ requests: 2, inputTokens: 40, outputTokens: 12 });
    // The tool result went back under the same call id.
    expect(toolResults(server, 1)).toEqual([expect.objectContaining({ tool_call_id: "w1" })]);
  });

  it("saves memory in one run; the next session's system prompt carries it (not the same run's)", async () => {
    const first = await serve([
      reply.toolCalls([{ name: "memory", args: { action: "add", target: "memory", content: "The user's favourite bird is the grey heron." } }]),
      reply.text("Noted: grey heron."),
    ]);
    const run = await chat(first, "-q", "remember that my favourite bird is the grey heron", "--json");
    expect(run.status).toBe(0);
    birdSession = json(run).sessionId;
    expect(JSON.parse(toolResults(first, 1)[0]!.content)).toMatchObject({ success: true });
    // The snapshot of the writing session was taken before the write: both its requests lack the entry.
    expect(systemPrompt(first, 0)).not.toContain("grey heron");
    expect(systemPrompt(first, 1)).toBe(systemPrompt(first, 0));
    expect(readFileSync(path.join(home, "memories", "MEMORY.md"), "utf8")).toContain("grey heron");

    const second = await serve([reply.text("You like grey herons.")]);
    const next = await chat(second, "-q", "what bird do I like?");
    expect(next.status).toBe(0);
    expect(systemPrompt(second, 0)).toContain("The user's favourite bird is the grey heron.");
    expect(systemPrompt(second, 0)).toMatch(/MEMORY \(your personal notes\)/);
  });

  it("finds the earlier session through session_search in a later run, and through mibyan sessions search", async () => {
    const server = await serve([reply.toolCalls([{ name: "session_search", args: { query: "heron" } }]), reply.text("Found it.")]);
    const run = await chat(server, "-q", "what did we say about birds?", "--json");
    expect(run.status).toBe(0);
    const result = JSON.parse(toolResults(server, 1)[0]!.content);
    expect(result.success).toBe(true);
    expect(result.results.map((r: Json) => r.session_id)).toContain(birdSession);
    // The searching session itself is left out of its own discovery.
    expect(result.results.map((r: Json) => r.session_id)).not.toContain(json(run).sessionId);

    const search = await spawnCollect(process.execPath, [BIN, "sessions", "search", "heron", "--json"], { env: env(home), cwd: work });
    expect(search.status).toBe(0);
    expect(JSON.parse(search.stdout).results.map((r: Json) => r.session_id)).toContain(birdSession);
    const show = await spawnCollect(process.execPath, [BIN, "sessions", "show", birdSession, "--json"], { env: env(home), cwd: work });
    const roles = (JSON.parse(show.stdout).messages as Json[]).map((m) => `${m.role}${m.tool_name ? `:${m.tool_name}` : ""}`);
    expect(roles).toEqual(["user", "assistant", "tool:memory", "assistant"]);
  });

  it("--resume continues a stored session: its messages go first, the new ones are appended to it", async () => {
    const server = await serve([reply.text("Still the grey heron.")]);
    const run = await chat(server, "-q", "and which bird was it again?", "--resume", birdSession, "--json");
    expect(run.status).toBe(0);
    expect(json(run)).toMatchObject({ sessionId: birdSession, resumed: true, answer: "Still the grey heron." });
    const messages = (server.requests[0]!.body.messages as Json[]).slice(1);
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user"]);
    expect(messages[0].content).toBe("remember that my favourite bird is the grey heron");
    expect(messages.at(-1)).toEqual({ role: "user", content: "and which bird was it again?" });
    const show = await spawnCollect(process.execPath, [BIN, "sessions", "show", birdSession, "--json"], { env: env(home), cwd: work });
    expect(JSON.parse(show.stdout).messages).toHaveLength(6);

    const unknown = await chat(server, "-q", "hi", "--resume", "20990101_000000_abcdef");
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('no session "20990101_000000_abcdef"');
  });

  it("refuses a dangerous command in -q mode (nobody to ask), says so, and leaves the files intact", async () => {
    const victim = path.join(work, "precious");
    mkdirSync(victim);
    writeFileSync(path.join(victim, "data.txt"), "keep me\n");
    const server = await serve([reply.toolCalls([{ id: "rm1", name: "terminal", args: { command: `rm -rf ${victim}` } }]), reply.text("I could not delete it.")]);
    const run = await chat(server, "-q", "delete the precious folder", "--json");
    expect(run.status).toBe(0);
    expect(readFileSync(path.join(victim, "data.txt"), "utf8")).toBe("keep me\n");
    const out = json(run);
    expect(out.refused).toHaveLength(1);
    expect(out.refused[0].command).toContain("rm -rf");
    expect(out.refused[0].rules.length).toBeGreaterThan(0);
    expect(toolResults(server, 1)[0]!.content).toMatch(/needs approval .* this run is non-interactive, so it was not run/);

    // Without --json the refusal is said on stderr.
    const again = await serve([reply.toolCalls([{ name: "terminal", args: { command: `rm -rf ${victim}` } }]), reply.text("Not deleted.")]);
    const plain = await chat(again, "-q", "delete it anyway");
    expect(plain.status).toBe(0);
    expect(plain.stderr).toMatch(/1 command\(s\) needing approval were refused: nobody can approve in -q mode/);
    expect(existsSync(path.join(victim, "data.txt"))).toBe(true);
  });

  it("keeps the API key away from tools: a command echoing its variable gets nothing", async () => {
    const server = await serve([
      reply.toolCalls([{ name: "terminal", args: { command: 'echo "value<$CHAT_TEST_KEY>"; env | grep -c CHAT_TEST_KEY || true' } }]),
      reply.text("Done."),
    ]);
    const run = await chat(server, "-q", "print the key", "--json");
    expect(run.status).toBe(0);
    const content = toolResults(server, 1)[0]!.content;
    // Empty, and no variable of that name at all (not merely redacted on the way out).
    expect(JSON.parse(content).output).toBe("value<>\n0\n");
    expect(content).not.toContain(KEY);
  });

  it("401: exit 1 and a message naming the endpoint, never the key", async () => {
    const server = await serve([reply.error(401, "Incorrect API key provided")]);
    const run = await chat(server, "-q", "hello");
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`authentication failed for ${server.baseURL}`);
    expect(run.stdout).toBe("");
    expect(run.stdout + run.stderr).not.toContain(KEY);
    expect(server.requests).toHaveLength(1);
  });

  it("an unreachable endpoint: exit 1 with a connection message", async () => {
    const server = await serve([]);
    const url = server.baseURL;
    await server.close();
    servers.splice(servers.indexOf(server), 1);
    const run = await spawnCollect(process.execPath, [BIN, "chat", "-q", "hi", "--model", "m", "--base-url", url, "--api-key-env", "CHAT_TEST_KEY"], { env: env(home), cwd: work });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/mibyan chat: .*127\.0\.0\.1/);
    expect(run.stderr).not.toContain(KEY);
  }, 30_000);

  it("no key in any file under the profile home after all the runs", () => {
    const files = filesUnder(home);
    expect(files.some((file) => file.endsWith("sessions.db"))).toBe(true);
    for (const file of files) expect(readFileSync(file).includes(KEY), file).toBe(false);
  });
});

describe("mibyan chat settings errors", () => {
  it("exit 2 naming what to set when no model or endpoint is configured, before anything starts", async () => {
    const profile = tempDir("mibyan-chat-empty-");
    const noModel = await spawnCollect(process.execPath, [BIN, "chat", "-q", "hi"], { env: env(profile), cwd: profile });
    expect(noModel.status).toBe(2);
    expect(noModel.stderr).toContain("no model configured: pass --model NAME or set model.name in config.yaml");
    const noEndpoint = await spawnCollect(process.execPath, [BIN, "chat", "-q", "hi", "--model", "m"], { env: env(profile), cwd: profile });
    expect(noEndpoint.status).toBe(2);
    expect(noEndpoint.stderr).toContain("no endpoint configured");
    const unsetKey = await spawnCollect(process.execPath, [BIN, "chat", "-q", "hi", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--api-key-env", "NOT_SET_ANYWHERE"], { env: env(profile), cwd: profile });
    expect(unsetKey.status).toBe(2);
    expect(unsetKey.stderr).toContain("--api-key-env names NOT_SET_ANYWHERE, which is not set");
    expect(existsSync(path.join(profile, "sessions"))).toBe(false);
  });

  it("reads the endpoint from config.yaml's model section, the key from the variable it names", async () => {
    const profile = tempDir("mibyan-chat-config-");
    const server = await serve([reply.text("configured")]);
    writeFileSync(path.join(profile, "config.yaml"), `model:\n  base_url: ${server.baseURL}\n  name: from-config\n  api_key_env: CHAT_TEST_KEY\n`);
    const run = await spawnCollect(process.execPath, [BIN, "chat", "-q", "hi"], { env: env(profile), cwd: profile });
    expect(run).toMatchObject({ status: 0, stdout: "configured\n" });
    expect(server.requests[0]!.body.model).toBe("from-config");
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
  });
});
