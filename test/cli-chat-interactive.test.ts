/**
 * `mibyan chat` without -q, its prompts piped in: one turn per line in one session, /exit and end
 * of input end it, Ctrl-C interrupts the turn running and the session goes on. Real CLI processes
 * (the built CLI) against the scripted endpoint.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

import { openSessionStore } from "../src/agent/stores/sessions/sqlite-store.js";
import { BIN, cliEnv, spawnCollect } from "./support/cli-run.js";
import { hangWhenReached, reply, type Json } from "./support/scripted-openai.js";
import { useScriptedServers, useTempDirs } from "./support/test-resources.js";

const tempDir = useTempDirs();
const serve = useScriptedServers();

function env(home: string): NodeJS.ProcessEnv {
  const vars: NodeJS.ProcessEnv = { ...cliEnv(home, tempDir("mibyan-chat-i-user-")) };
  for (const name of ["OPENAI_API_KEY", "OPENAI_BASE_URL"]) delete vars[name];
  return vars;
}

function storedMessages(home: string, session: string): { role: string; content: string | null }[] {
  const store = openSessionStore({ home });
  try {
    return store.getMessages(session).map(({ role, content }) => ({ role, content }));
  } finally {
    store.close();
  }
}

describe("mibyan chat (interactive, prompts from a pipe)", () => {
  it("one turn per line in one session; the second turn's request carries the first; /exit ends it", async () => {
    const home = tempDir("mibyan-chat-i-");
    const server = await serve([reply.text("First answer."), reply.text("Second answer.")]);
    const run = await spawnCollect(process.execPath, [BIN, "chat", "--model", "m", "--base-url", server.baseURL], { env: env(home), cwd: home, input: "first question\n\nsecond question\n/exit\nnever sent\n" });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toBe("First answer.\nSecond answer.\n");
    expect(server.requests).toHaveLength(2);
    const sent = (server.requests[1]!.body.messages as Json[]).slice(1).map((m) => [m.role, m.content]);
    expect(sent).toEqual([["user", "first question"], ["assistant", "First answer."], ["user", "second question"]]);
    const session = /^session (\S+)$/m.exec(run.stderr)?.[1];
    expect(storedMessages(home, session!)).toHaveLength(4);
  });

  it("end of input ends the session (exit 0); --json needs -q", async () => {
    const home = tempDir("mibyan-chat-i-");
    const server = await serve([reply.text("Only answer.")]);
    const run = await spawnCollect(process.execPath, [BIN, "chat", "--model", "m", "--base-url", server.baseURL], { env: env(home), cwd: home, input: "only question\n" });
    expect(run).toMatchObject({ status: 0, stdout: "Only answer.\n" });
    const json = await spawnCollect(process.execPath, [BIN, "chat", "--model", "m", "--base-url", server.baseURL, "--json"], { env: env(home), cwd: home, input: "" });
    expect(json.status).toBe(2);
    expect(json.stderr).toContain("--json needs -q");
  });

  it("Ctrl-C interrupts the turn running, not the session: the next prompt is answered in the same session", async () => {
    const home = tempDir("mibyan-chat-i-");
    const hanging = hangWhenReached();
    const server = await serve([hanging.step, reply.text("Answer after the interrupt.")]);
    const child = spawn(process.execPath, [BIN, "chat", "--model", "m", "--base-url", server.baseURL], { env: env(home), cwd: home, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    child.stdin.write("a slow question\n");
    await hanging.reached;
    child.kill("SIGINT");
    child.stdin.end("the next question\n/exit\n");
    const code = await Promise.race([exited, new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), 10_000))]);
    if (code === "timeout") child.kill("SIGKILL");
    expect(code, stderr).toBe(0);
    expect(stdout).toBe("Answer after the interrupt.\n");
    expect(stderr).toContain("(interrupted)");
    const session = /^session (\S+)$/m.exec(stderr)?.[1];
    expect(storedMessages(home, session!)).toEqual([
      { role: "user", content: "a slow question" },
      { role: "user", content: "the next question" },
      { role: "assistant", content: "Answer after the interrupt." },
    ]);
  });
});

describe("mibyan chat (interactive, on a terminal)", () => {
  // Under a pseudo-terminal (util-linux script): the gate's approval prompt shares the terminal with
  // the chat's own line reader; the answer typed there must reach the prompt, not become a message.
  it.skipIf(!existsSync("/usr/bin/script"))("a dangerous command asks on the terminal; 'd' denies it, the files stay, the session goes on", async () => {
    const home = tempDir("mibyan-chat-i-tty-");
    const victim = path.join(home, "keep");
    mkdirSync(victim);
    writeFileSync(path.join(victim, "data.txt"), "keep me\n");
    writeFileSync(path.join(home, "config.yaml"), "approvals:\n  timeout_seconds: 8\n");
    const server = await serve([reply.toolCalls([{ name: "terminal", args: { command: `rm -rf ${victim}` } }]), reply.text("Left it alone."), reply.text("Bye for now.")]);
    const quote = (word: string) => `'${word.replace(/'/g, "'\\''")}'`;
    const command = [process.execPath, BIN, "chat", "--model", "m", "--base-url", server.baseURL].map(quote).join(" ");
    const child = spawn("/usr/bin/script", ["-qec", command, "/dev/null"], { env: env(home), cwd: home, stdio: ["pipe", "pipe", "pipe"] });
    let screen = "";
    const seen = (text: string) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`never saw ${JSON.stringify(text)} in:\n${screen}`)), 8_000);
        const check = () => {
          if (!screen.includes(text)) return;
          clearTimeout(timer);
          child.stdout.off("data", check);
          resolve();
        };
        child.stdout.on("data", check);
        check();
      });
    child.stdout.on("data", (chunk: Buffer) => (screen += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    try {
      await seen("> ");
      child.stdin.write("delete the keep folder\r");
      await seen("[d]eny");
      child.stdin.write("d\r");
      await seen("Reason");
      child.stdin.write("\r");
      await seen("Left it alone.");
      child.stdin.write("and now?\r");
      await seen("Bye for now.");
      child.stdin.write("/exit\r");
      const code = await Promise.race([exited, new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), 8_000))]);
      expect(code, screen).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
    expect(readFileSync(path.join(victim, "data.txt"), "utf8")).toBe("keep me\n");
    // Three requests: the answer "d" and the empty reason were not sent as messages.
    expect(server.requests).toHaveLength(3);
    const users = (server.requests[2]!.body.messages as Json[]).filter((m) => m.role === "user").map((m) => m.content);
    expect(users).toEqual(["delete the keep folder", "and now?"]);
  }, 30_000);
});
