/**
 * `mibyan chat -q` with a scripted model that delegates (the built CLI: `npm run build` first): the
 * parent calls delegate_task, the child runs a dangerous terminal command and answers, the parent
 * answers with the child's summary. With `approvals.non_interactive: allow`, the parent's own commands
 * would run; the child's is still refused by its subagent surface, so the directory survives. The child
 * session is stored with source `subagent` under the parent, and a `subagent_stop` shell hook from
 * config.yaml gets the child's status.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";

import { openSessionStore } from "../src/agent/stores/sessions/sqlite-store.js";
import { HIDDEN_SESSION_SOURCES } from "../src/agent/stores/sessions/types.js";
import { BIN, cliEnv, spawnCollect } from "./support/cli-run.js";
import { reply, startScriptedOpenAI, type Json, type RecordedRequest, type ScriptedOpenAI } from "./support/scripted-openai.js";

const KEY = "sk-delegation-cli-7f3c9a1b2d4e6f80";
const dirs: string[] = [];
let server: ScriptedOpenAI | undefined;

function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const systemOf = (request: RecordedRequest): string => String(request.body.messages[0]?.content ?? "");
const turnOf = (request: RecordedRequest): number => request.body.messages.filter((m: Json) => m.role === "assistant").length;
const lastTool = (request: RecordedRequest): Json => request.body.messages.filter((m: Json) => m.role === "tool").at(-1);
const toolNames = (request: RecordedRequest): string[] => (request.body.tools ?? []).map((t: Json) => t.function.name);

describe("mibyan chat -q delegating", () => {
  it("the parent delegates; the child's rm -rf is refused without asking; the child is a subagent session; the subagent_stop hook fires", async () => {
    const home = tempDir("mibyan-deleg-home-");
    const work = tempDir("mibyan-deleg-work-");
    const victim = path.join(work, "victim");
    mkdirSync(victim);
    const hookOut = path.join(work, "hook.json");
    const hookScript = path.join(work, "hook.mjs");
    writeFileSync(hookScript, `import { readFileSync, writeFileSync } from "node:fs";\nwriteFileSync(process.argv[2], readFileSync(0, "utf8"));\n`);
    writeFileSync(
      path.join(home, "config.yaml"),
      [
        "approvals:",
        "  non_interactive: allow",
        "delegation:",
        "  max_iterations: 5",
        "hooks:",
        "  subagent_stop:",
        `    - command: ${JSON.stringify(`${process.execPath} ${hookScript} ${hookOut}`)}`,
        "",
      ].join("\n"),
    );

    const route = (request: RecordedRequest) => {
      if (systemOf(request).includes("YOUR TASK:\nclean the victim directory")) {
        if (turnOf(request) === 0) return reply.toolCalls([{ id: "rm", name: "terminal", args: { command: `rm -rf ${victim}` } }]);
        return reply.text(`child summary: ${JSON.parse(lastTool(request).content).status}`);
      }
      if (turnOf(request) === 0) return reply.toolCalls([{ id: "d1", name: "delegate_task", args: { goal: "clean the victim directory", context: `it is ${victim}` } }]);
      const results = JSON.parse(lastTool(request).content).results;
      return reply.text(`parent got: ${results[0].summary} (${results[0].status})`);
    };
    server = await startScriptedOpenAI(Array.from({ length: 10 }, () => route));
    const env: NodeJS.ProcessEnv = { ...cliEnv(home, tempDir("mibyan-deleg-user-")), CHAT_TEST_KEY: KEY };
    for (const name of ["OPENAI_API_KEY", "OPENAI_BASE_URL"]) delete env[name];
    const run = await spawnCollect(process.execPath, [BIN, "chat", "--model", "scripted-model", "--base-url", server.baseURL, "--api-key-env", "CHAT_TEST_KEY", "-q", "clean up please", "--json"], { env, cwd: work });

    expect(run.status, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out.answer).toBe("parent got: child summary: blocked (completed)");
    expect(existsSync(victim)).toBe(true);
    expect(server.requests).toHaveLength(4);
    expect(toolNames(server.requests[0]!)).toContain("delegate_task");
    const child = server.requests.find((r) => systemOf(r).includes("YOUR TASK:"))!;
    expect(toolNames(child)).toContain("terminal");
    for (const blocked of ["delegate_task", "memory", "execute_code"]) expect(toolNames(child)).not.toContain(blocked);
    expect(child.headers.authorization).toBe(`Bearer ${KEY}`);

    const store = openSessionStore({ home });
    try {
      const sessions = store.listSessions({ limit: 10 });
      const childSession = sessions.find((s) => s.source === "subagent")!;
      expect(childSession).toMatchObject({ parent_session_id: out.sessionId, end_reason: "completed" });
      expect(store.getMessages(childSession.id).map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
      // session_search's discovery leaves subagent sessions out.
      expect(store.listSessions({ limit: 10, excludeSources: HIDDEN_SESSION_SOURCES }).map((s) => s.id)).toEqual([out.sessionId]);
      const hook = JSON.parse(readFileSync(hookOut, "utf8"));
      expect(hook).toMatchObject({ hook_event_name: "subagent_stop", session_id: out.sessionId, child_session_id: childSession.id, child_role: "leaf", child_status: "completed", child_summary: "child summary: blocked" });
      expect(hook.duration_ms).toBeGreaterThanOrEqual(0);
    } finally {
      store.close();
    }
  });
});
