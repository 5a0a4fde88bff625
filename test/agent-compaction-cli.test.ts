/**
 * `mibyan chat -q` with config.yaml's compaction section, end to end (the built CLI: `npm run build`
 * first) against the scripted OpenAI-compatible server on 127.0.0.1: the section reaches the loop
 * (a small context_tokens makes one big tool result cross the threshold), the summary request goes
 * out without tools, stderr says the context was compacted, and the session reported is the
 * continuation, whose parent the store ended with end_reason compaction.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

import { openSessionStore } from "../src/agent/stores/sessions/sqlite-store.js";
import { BIN, cliEnv, spawnCollect } from "./support/cli-run.js";
import { reply, startScriptedOpenAI, type Json, type RecordedRequest, type ScriptedOpenAI, type Step } from "./support/scripted-openai.js";
import { isSummaryRequest } from "./support/compaction-script.js";

const scratch = mkdtempSync(path.join(tmpdir(), "mibyan-compaction-cli-"));
let server: ScriptedOpenAI | undefined;
afterAll(async () => {
  await server?.close();
  rmSync(scratch, { recursive: true, force: true });
});


describe("mibyan chat -q with compaction", () => {
  it("config.yaml's compaction section: the big round is summarised by a request without tools, the continuation reported", async () => {
    const home = mkdtempSync(path.join(scratch, "home-"));
    const work = mkdtempSync(path.join(scratch, "work-"));
    const big = path.join(work, "big.txt");
    writeFileSync(big, `${"lorem ipsum dolor sit amet ".repeat(40)}\n`.repeat(40)); // ~43,000 characters
    writeFileSync(path.join(work, "small.txt"), "small\n");
    // 16,000 tokens of context: the compaction threshold is 8,000; the big file alone is ~11,000.
    writeFileSync(path.join(home, "config.yaml"), "compaction:\n  context_tokens: 16000\n  keep_first: 1\n  keep_last: 2\n");

    const agent: Step[] = [
      reply.toolCalls([{ id: "r1", name: "read_file", args: { path: big } }], null, { input: 0 }),
      reply.toolCalls([{ id: "r2", name: "read_file", args: { path: path.join(work, "small.txt") } }], null, { input: 0 }),
      reply.text("read both", { input: 0 }),
    ];
    let a = 0;
    const route = (request: RecordedRequest): Step => (isSummaryRequest(request) ? reply.text("SUMMARY: the big file is lorem ipsum.") : (agent[a++] ?? reply.error(400, "no more steps")));
    server = await startScriptedOpenAI(Array.from({ length: 6 }, () => route));

    const env: NodeJS.ProcessEnv = { ...cliEnv(home, mkdtempSync(path.join(scratch, "user-"))), CHAT_TEST_KEY: "sk-chat-test-0123456789" };
    for (const name of ["OPENAI_API_KEY", "OPENAI_BASE_URL"]) delete env[name];
    const run = await spawnCollect(
      process.execPath,
      [BIN, "chat", "--model", "scripted-model", "--base-url", server.baseURL, "--api-key-env", "CHAT_TEST_KEY", "--toolsets", "file", "-q", "read the files", "--json"],
      { env, cwd: work },
    );
    expect(run.status, run.stderr).toBe(0);
    const out: Json = JSON.parse(run.stdout);
    expect(out.answer).toBe("read both");

    expect(server.requests.map((r) => (isSummaryRequest(r) ? "summary" : "agent"))).toEqual(["agent", "agent", "summary", "agent"]);
    const summary = server.requests[2]!.body;
    expect(summary.tools).toBeUndefined();
    expect(summary.messages[1].content).toContain("lorem ipsum");
    const after: Json[] = server.requests[3]!.body.messages;
    expect(after.map((m) => m.role)).toEqual(["system", "user", "user", "assistant", "tool"]);
    expect(after[2].content).toContain("SUMMARY: the big file is lorem ipsum.");
    expect(JSON.stringify(after)).not.toContain("dolor sit amet lorem");

    // The reported session is the continuation; its parent was ended by compaction.
    const store = openSessionStore({ home });
    try {
      const continuation = store.getSession(out.sessionId)!;
      expect(continuation.parent_session_id).not.toBeNull();
      expect(store.getSession(continuation.parent_session_id!)).toMatchObject({ end_reason: "compaction" });
      expect(store.getMessages(out.sessionId).map((m) => m.role)).toEqual(["user", "user", "assistant", "tool", "assistant"]);
    } finally {
      store.close();
    }
  });

  it("without --json, stderr says the context was compacted and stdout keeps only the answer", async () => {
    const home = mkdtempSync(path.join(scratch, "home-"));
    const work = mkdtempSync(path.join(scratch, "work-"));
    const big = path.join(work, "big.txt");
    writeFileSync(big, `${"lorem ipsum dolor sit amet ".repeat(40)}\n`.repeat(40));
    writeFileSync(path.join(home, "config.yaml"), "compaction:\n  context_tokens: 16000\n  keep_first: 1\n  keep_last: 2\n");
    const agent: Step[] = [
      reply.toolCalls([{ id: "r1", name: "read_file", args: { path: big } }], null, { input: 0 }),
      reply.toolCalls([{ id: "r2", name: "read_file", args: { path: big, limit: 1 } }], null, { input: 0 }),
      reply.text("done", { input: 0 }),
    ];
    let a = 0;
    await server?.close();
    server = await startScriptedOpenAI(Array.from({ length: 6 }, () => (request: RecordedRequest): Step => (isSummaryRequest(request) ? reply.text("S") : (agent[a++] ?? reply.error(400, "no more steps")))));
    const env: NodeJS.ProcessEnv = { ...cliEnv(home, mkdtempSync(path.join(scratch, "user-"))), CHAT_TEST_KEY: "sk-chat-test-0123456789" };
    for (const name of ["OPENAI_API_KEY", "OPENAI_BASE_URL"]) delete env[name];
    const run = await spawnCollect(process.execPath, [BIN, "chat", "--model", "scripted-model", "--base-url", server.baseURL, "--api-key-env", "CHAT_TEST_KEY", "--toolsets", "file", "-q", "go"], { env, cwd: work });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toBe("done\n");
    expect(run.stderr).toMatch(/context compacted/);
  });
});
