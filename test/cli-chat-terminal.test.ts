/**
 * Interactive `mibyan chat` on a real pseudo-terminal (@lydell/node-pty): the live activity line
 * (spinner, elapsed time, final line), Ctrl-C typed while a tool runs, the approval prompt with the
 * line paused, the streamed answer, the memory-write question, and plain lines when stderr is not a
 * terminal. The built CLI against the scripted endpoint.
 */
import { existsSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import path from "node:path";

import pty from "@lydell/node-pty";
import { afterEach, describe, expect, it } from "vitest";

import { PROMPT_TEXT } from "../src/approval/surfaces/terminal.js";
import { MEMORY_PROMPT_TEXT } from "../src/cli/chat/terminal-questions.js";
import { BIN, cliEnv } from "./support/cli-run.js";
import { alive } from "./support/proc.js";
import { reply, type Json } from "./support/scripted-openai.js";
import { useScriptedServers, useTempDirs } from "./support/test-resources.js";

const tempDir = useTempDirs();
const serve = useScriptedServers();
const children: pty.IPty[] = [];
const strays: number[] = [];

afterEach(async () => {
  for (const pid of strays.splice(0)) {
    try {
      if (alive(pid)) process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  for (const child of children.splice(0)) {
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
  }
});

const FRAME = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/;
const FRAMES = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/g;

/** `mibyan chat` (or `sh -c` around it) on a pty; `waitFor` resolves once the screen shows the text. */
function chatInPty(home: string, baseURL: string, options: { extraEnv?: Record<string, string>; shell?: (command: string) => string } = {}) {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(cliEnv(home, tempDir("mibyan-chat-tty-user-")))) if (value !== undefined) env[name] = value;
  for (const name of ["OPENAI_API_KEY", "OPENAI_BASE_URL"]) delete env[name];
  Object.assign(env, options.extraEnv);
  const args = [BIN, "chat", "--model", "m", "--base-url", baseURL];
  const quote = (word: string) => `'${word.replace(/'/g, "'\\''")}'`;
  const child = options.shell
    ? pty.spawn("/bin/sh", ["-c", options.shell([process.execPath, ...args].map(quote).join(" "))], { name: "xterm-256color", cols: 160, rows: 40, cwd: home, env })
    : pty.spawn(process.execPath, args, { name: "xterm-256color", cols: 160, rows: 40, cwd: home, env });
  children.push(child);
  let screen = "";
  const watchers: { test: () => boolean; resolve: () => void }[] = [];
  child.onData((data) => {
    screen += data;
    for (const w of watchers.splice(0)) {
      if (w.test()) w.resolve();
      else watchers.push(w);
    }
  });
  const exited = new Promise<number>((resolve) => child.onExit(({ exitCode }) => resolve(exitCode)));
  const waitUntil = (what: string, test: () => boolean, ms = 10_000): Promise<void> =>
    new Promise((resolve, reject) => {
      if (test()) return resolve();
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; screen:\n${JSON.stringify(screen)}`)), ms);
      watchers.push({ test, resolve: () => (clearTimeout(timer), resolve()) });
    });
  /** Waits for `text` in what the screen showed from offset `from` on. */
  const waitFor = (text: string | RegExp, from = 0): Promise<void> =>
    waitUntil(String(text), () => (typeof text === "string" ? screen.slice(from).includes(text) : text.test(screen.slice(from))));
  const exitCode = async (ms = 10_000): Promise<number | "timeout"> => Promise.race([exited, new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), ms).unref())]);
  return { child, waitFor, screen: () => screen, exitCode };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("mibyan chat on a terminal: the activity line", () => {
  it("shows a spinner with the elapsed time while `sleep 1` runs, then the call's final line", async () => {
    const home = tempDir("mibyan-chat-tty-");
    const server = await serve([reply.toolCalls([{ name: "terminal", args: { command: "sleep 1" } }]), reply.text("Slept well.")]);
    const run = chatInPty(home, server.baseURL);
    await run.waitFor("> ");
    run.child.write("take a nap\r");
    await run.waitFor("Slept well.");
    const screen = run.screen();
    // Redrawn in place: erase, a spinner frame, the call and its elapsed time; several frames over the second.
    const live = [...screen.matchAll(/\r\x1b\[2K([⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]) 💻 terminal {2}(\d+\.\d)s/g)];
    expect(live.length, JSON.stringify(screen)).toBeGreaterThanOrEqual(3);
    expect(new Set(live.map((m) => m[1])).size).toBeGreaterThanOrEqual(2);
    expect(Math.max(...live.map((m) => Number(m[2])))).toBeGreaterThanOrEqual(0.5);
    expect(screen).toMatch(/\r\x1b\[2K[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] thinking {2}\d+\.\ds/);
    // The final line: ok in green, the time dimmed; then the answer, after it.
    const final = /💻 terminal \x1b\[32mok\x1b\[0m \x1b\[2m(\d+\.\d)s\x1b\[0m\r\n/.exec(screen);
    expect(final, JSON.stringify(screen)).not.toBeNull();
    expect(Number(final![1])).toBeGreaterThanOrEqual(0.9);
    expect(screen.indexOf("Slept well.")).toBeGreaterThan(final!.index);
    // Nothing live is left behind the answer: no frame after it.
    expect(screen.slice(screen.indexOf("Slept well."))).not.toMatch(FRAME);
    run.child.write("/exit\r");
    expect(await run.exitCode()).toBe(0);
  }, 30_000);

  it("Ctrl-C while a tool runs interrupts that turn (its process is killed), the session goes on, /exit ends it with 0", async () => {
    const home = tempDir("mibyan-chat-tty-");
    const pidFile = path.join(home, "sleep.pid");
    const server = await serve([reply.toolCalls([{ name: "terminal", args: { command: `sh -c 'echo $$ > ${pidFile}; exec sleep 30'` } }]), reply.text("Still here.")]);
    const run = chatInPty(home, server.baseURL, { extraEnv: { NO_COLOR: "1" } });
    await run.waitFor("> ");
    run.child.write("sleep a long time\r");
    await run.waitFor(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] 💻 terminal {2}\d/);
    for (let i = 0; i < 100 && !existsSync(pidFile); i++) await sleep(50);
    const pid = Number(readFileSync(pidFile, "utf8").trim());
    // Its own process group: killing chat would not take it along, should the test fail before Ctrl-C did.
    strays.push(pid);
    expect(alive(pid)).toBe(true);
    const typedAt = Date.now();
    run.child.write("\x03");
    await run.waitFor("(interrupted)");
    for (let i = 0; i < 100 && alive(pid); i++) await sleep(50);
    expect(alive(pid)).toBe(false);
    expect(Date.now() - typedAt).toBeLessThan(10_000);
    // The call's final line says so, without colours (NO_COLOR).
    expect(run.screen()).toMatch(/💻 terminal cancelled \d+\.\ds\r\n/);
    run.child.write("are you there?\r");
    await run.waitFor("Still here.");
    run.child.write("/exit\r");
    expect(await run.exitCode()).toBe(0);
    expect(server.requests).toHaveLength(2);
    const users = (server.requests[1]!.body.messages as Json[]).filter((m) => m.role === "user").map((m) => m.content);
    expect(users).toEqual(["sleep a long time", "are you there?"]);
  }, 30_000);

  it("the approval prompt is not garbled by the spinner: the line pauses while it is open; 'n' denies and the turn goes on", async () => {
    const home = tempDir("mibyan-chat-tty-");
    const victim = path.join(home, "keep");
    mkdirSync(victim);
    writeFileSync(path.join(victim, "data.txt"), "keep me\n");
    writeFileSync(path.join(home, "config.yaml"), "approvals:\n  timeout_seconds: 20\n");
    const server = await serve([reply.toolCalls([{ name: "terminal", args: { command: `rm -rf ${victim}` } }]), reply.text("Left it alone.")]);
    const run = chatInPty(home, server.baseURL);
    await run.waitFor("> ");
    run.child.write("delete the keep folder\r");
    await run.waitFor(PROMPT_TEXT);
    // Long enough for several redraws, were the line still drawn.
    await sleep(700);
    const screen = run.screen();
    const opened = screen.indexOf("! Approval needed");
    expect(opened).toBeGreaterThan(0);
    const prompt = screen.slice(opened);
    expect(prompt, JSON.stringify(prompt)).not.toMatch(FRAME);
    expect(prompt).not.toContain("\x1b[2K");
    expect(prompt).toContain(`$ rm -rf ${victim}`);
    run.child.write("n\r");
    await run.waitFor("Reason");
    // The answer is echoed once (chat's own reader is quiet while a turn runs).
    const answered = run.screen().slice(run.screen().indexOf(PROMPT_TEXT) + PROMPT_TEXT.length, run.screen().indexOf("Reason"));
    expect(answered.replace(/\x1b\[[0-9;]*[A-Za-z]/g, "").replace(/\s/g, "")).toBe("n");
    run.child.write("\r");
    await run.waitFor("Left it alone.");
    expect(readFileSync(path.join(victim, "data.txt"), "utf8")).toBe("keep me\n");
    // The line came back after the prompt (the call's final line), and the model got the denial.
    expect(run.screen().slice(opened)).toMatch(/💻 terminal \S+ /);
    expect(JSON.stringify(server.requests[1]!.body.messages.at(-1))).toMatch(/denied|refused|not approved/i);
    run.child.write("/exit\r");
    expect(await run.exitCode()).toBe(0);
  }, 30_000);

  it("streams the answer: deltas appear as they arrive, in order, once", async () => {
    const home = tempDir("mibyan-chat-tty-");
    const server = await serve([reply.streamText(["Hel", "lo, ", "streamed ", "world."], undefined, 400)]);
    const run = chatInPty(home, server.baseURL);
    await run.waitFor("> ");
    run.child.write("say hello\r");
    await run.waitFor("Hel");
    // The first piece is on the screen before the last one was sent.
    expect(run.screen()).not.toContain("world.");
    await run.waitFor(/world\.\r\n/);
    const screen = run.screen();
    expect(screen.split("Hello, streamed world.").length - 1, JSON.stringify(screen)).toBe(1);
    expect(screen).toMatch(/Hello, streamed world\.\r\n/);
    expect(server.requests[0]!.body.stream).toBe(true);
    run.child.write("/exit\r");
    expect(await run.exitCode()).toBe(0);
  }, 30_000);

  it("memory.write_approval: the write is asked on the terminal; y writes MEMORY.md, n does not", async () => {
    const home = tempDir("mibyan-chat-tty-");
    writeFileSync(path.join(home, "config.yaml"), "memory:\n  write_approval: true\napprovals:\n  timeout_seconds: 20\n");
    const server = await serve([
      reply.toolCalls([{ name: "memory", args: { action: "add", target: "memory", content: "The user prefers pnpm." } }]),
      reply.text("Noted."),
      reply.toolCalls([{ name: "memory", args: { action: "add", target: "memory", content: "Secret plan \x1b[2J here." } }]),
      reply.text("Not noted."),
    ]);
    const run = chatInPty(home, server.baseURL);
    await run.waitFor("> ");
    run.child.write("remember pnpm\r");
    await run.waitFor(MEMORY_PROMPT_TEXT);
    expect(run.screen()).toContain("Memory write (memory): add to memory");
    expect(run.screen()).toContain("  The user prefers pnpm.");
    run.child.write("y\r");
    await run.waitFor("Noted.");
    const memoryFile = path.join(home, "memories", "MEMORY.md");
    expect(readFileSync(memoryFile, "utf8")).toContain("The user prefers pnpm.");
    expect(server.requests[1]!.body.messages.at(-1).content).toContain('"success":true');

    const before = run.screen().length;
    run.child.write("remember the plan\r");
    await run.waitFor(MEMORY_PROMPT_TEXT, before);
    const second = run.screen().slice(before);
    expect(second).toContain(MEMORY_PROMPT_TEXT);
    // The model's content is shown inert: the escape sequence made visible, not sent to the terminal.
    expect(second).toContain("Secret plan \\x1b[2J here.");
    expect(second).not.toContain("\x1b[2J");
    run.child.write("n\r");
    await run.waitFor("Not noted.");
    expect(readFileSync(memoryFile, "utf8")).not.toContain("Secret plan");
    expect(server.requests[3]!.body.messages.at(-1).content).toContain("not approved");
    run.child.write("/exit\r");
    expect(await run.exitCode()).toBe(0);
  }, 30_000);

  it("stderr not a terminal (stdin and stdout are): plain lines per finished call, no escape codes", async () => {
    const home = tempDir("mibyan-chat-tty-");
    const errFile = path.join(home, "stderr.txt");
    const server = await serve([reply.toolCalls([{ name: "terminal", args: { command: "sleep 0.5; echo done" } }]), reply.text("Plain it is.")]);
    const run = chatInPty(home, server.baseURL, { shell: (command) => `exec ${command} 2>'${errFile}'` });
    run.child.write("run it\r");
    await run.waitFor("Plain it is.");
    run.child.write("/exit\r");
    expect(await run.exitCode()).toBe(0);
    const stderr = readFileSync(errFile, "utf8");
    expect(stderr).toMatch(/^💻 terminal \(ok, \d+ ms\)$/m);
    expect(stderr).not.toContain("\x1b");
    expect(stderr).not.toMatch(FRAME);
    expect(run.screen()).not.toMatch(FRAMES);
  }, 30_000);
});
