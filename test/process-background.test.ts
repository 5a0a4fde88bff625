/**
 * Background processes and PTY mode on the local backend, with real processes:
 * the registry on its own, `terminal` with `background`/`pty`, and the
 * `process` tool, including that another session never sees a process.
 */

import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { afterAll, afterEach, describe, expect, it, vi } from "vitest";

import { clearConfigCache } from "../src/config/load-config.js";
import { createLocalFactory } from "../src/environments/local.js";
import { EnvironmentManager } from "../src/environments/manager.js";
import { parseStatus, statusScript } from "../src/process/background-scripts.js";
import { ProcessNotFoundError, ProcessRegistry, ProcessStateError } from "../src/process/process-registry.js";
import type { ToolContext } from "../src/registry/types.js";
import { createProcessHandler } from "../src/tools/process.js";
import { createTerminalHandler } from "../src/tools/terminal.js";

vi.mock("../src/registry/singleton.js", () => ({ registry: { register: () => {} } }));

const home = mkdtempSync(path.join(tmpdir(), "mibyan-bg-home-"));
const savedHome = process.env.MIBYAN_HOME;
process.env.MIBYAN_HOME = home;
clearConfigCache();
const scratch = realpathSync(mkdtempSync(path.join(tmpdir(), "mibyan-bg-")));

const managers: EnvironmentManager[] = [];
const registries: ProcessRegistry[] = [];
const pids: number[] = [];

function setup(options: { idleTimeoutMs?: number } = {}) {
  const manager = new EnvironmentManager({
    factories: [createLocalFactory({ initialCwd: scratch })],
    defaultBackend: "local",
    closeOnExit: false,
    ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
  });
  const registry = new ProcessRegistry({ environments: manager, pollIntervalMs: 0, waitIntervalMs: 50, killGraceMs: 1_000 });
  managers.push(manager);
  registries.push(registry);
  return { manager, registry };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether any process of group `pgid` is alive (zombies aside). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  for (const entry of readdirProc()) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid && fields[0] !== "Z") return true;
    } catch {
      // gone meanwhile
    }
  }
  return false;
}

function readdirProc(): string[] {
  return readdirSync("/proc").filter((n) => /^\d+$/.test(n));
}

afterEach(async () => {
  for (const pid of pids.splice(0)) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  await Promise.all(registries.splice(0).map((registry) => registry.dispose()));
  await Promise.all(managers.splice(0).map((m) => m.closeAll()));
});

afterAll(() => {
  if (savedHome === undefined) delete process.env.MIBYAN_HOME;
  else process.env.MIBYAN_HOME = savedHome;
  clearConfigCache();
  rmSync(home, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

describe("process registry (local backend)", () => {
  it("starts a process in the background, follows its output and reports its exit code", async () => {
    const { manager, registry } = setup();
    const env = await manager.get("t1");
    const started = Date.now();
    const info = await registry.start(env, "echo first; sleep 0.5; echo second; exit 3", { sessionId: "s1" });
    pids.push(info.pid);
    expect(Date.now() - started).toBeLessThan(400);
    expect(info).toMatchObject({ status: "running", taskId: "t1", backend: "local", pty: false });
    expect(info.id).toMatch(/^proc_[0-9a-f]{12}$/);
    expect(alive(info.pid)).toBe(true);

    const done = await registry.wait("s1", info.id, 10_000);
    expect(done).toMatchObject({ status: "exited", exitCode: 3, timedOut: false, output: "first\nsecond\n" });
    expect(done.endedAt! - done.startedAt).toBeGreaterThanOrEqual(400);
    const poll = await registry.poll("s1", info.id);
    expect(poll.preview).toBe("first\nsecond\n");
  });

  it("starts in the task's directory and variables; its own cd and export stay its own", async () => {
    const { manager, registry } = setup();
    const env = await manager.get("t2");
    await env.exec(`mkdir -p ${scratch}/t2dir && cd ${scratch}/t2dir && export BG_VAR=from-task`, { timeoutMs: 10_000, maxOutputChars: 1_000 });
    const info = await registry.start(env, 'pwd; echo "$BG_VAR"; cd /; export BG_VAR=changed', { sessionId: "s1" });
    pids.push(info.pid);
    expect((await registry.wait("s1", info.id, 10_000)).output).toBe(`${scratch}/t2dir\nfrom-task\n`);
    expect((await env.exec('pwd; echo "$BG_VAR"', { timeoutMs: 10_000, maxOutputChars: 1_000 })).output).toBe(`${scratch}/t2dir\nfrom-task\n`);
    const elsewhere = await registry.start(env, "pwd", { sessionId: "s1", cwd: "/" });
    expect((await registry.wait("s1", elsewhere.id, 10_000)).output).toBe("/\n");
  });

  it("kills the whole process tree, and reports it killed", async () => {
    const { manager, registry } = setup();
    const env = await manager.get("t3");
    const info = await registry.start(env, "sleep 300 & (sleep 301; echo never) & echo started; wait", { sessionId: "s1" });
    pids.push(info.pid);
    await expect.poll(async () => (await registry.poll("s1", info.id)).preview, { timeout: 5_000 }).toBe("started\n");
    expect(groupAlive(info.pid)).toBe(true);
    const killed = await registry.kill("s1", info.id);
    expect(killed.status).toBe("killed");
    expect(groupAlive(info.pid)).toBe(false);
    // Killing again changes nothing.
    expect((await registry.kill("s1", info.id)).status).toBe("killed");
  });

  it("feeds input: write, submit, and close for end-of-file", async () => {
    const { manager, registry } = setup();
    const env = await manager.get("t4");
    const info = await registry.start(env, 'read -r name; echo "hello $name"; cat; echo "cat saw EOF"', { sessionId: "s1" });
    pids.push(info.pid);
    await registry.submit("s1", info.id, "ada");
    await registry.write("s1", info.id, "raw ");
    await registry.write("s1", info.id, "text\n");
    await expect.poll(async () => (await registry.poll("s1", info.id)).preview, { timeout: 5_000 }).toBe("hello ada\nraw text\n");
    expect((await registry.poll("s1", info.id)).status).toBe("running");
    await registry.closeInput("s1", info.id);
    const done = await registry.wait("s1", info.id, 5_000);
    expect(done).toMatchObject({ status: "exited", exitCode: 0, output: "hello ada\nraw text\ncat saw EOF\n" });
    await expect(registry.write("s1", info.id, "late")).rejects.toBeInstanceOf(ProcessStateError);
  });

  it("runs a process on a pseudo-terminal whose prompt is answered later", async () => {
    const { manager, registry } = setup();
    const env = await manager.get("t5");
    const info = await registry.start(env, `tty; [ -t 0 ] && [ -t 1 ] && echo both-tty; read -r -p 'Name? ' n; echo "hi $n"`, { sessionId: "s1", pty: true });
    pids.push(info.pid);
    expect(info.pty).toBe(true);
    await expect.poll(async () => (await registry.poll("s1", info.id)).preview, { timeout: 5_000 }).toContain("Name? ");
    await registry.submit("s1", info.id, "grace");
    const done = await registry.wait("s1", info.id, 5_000);
    expect(done.status).toBe("exited");
    expect(done.exitCode).toBe(0);
    expect(done.output).toMatch(/^\/dev\/pts\/\d+\r\nboth-tty\r\nName\? grace\r\nhi grace\r\n$/);
  });

  it("never shows a process to another session", async () => {
    const { manager, registry } = setup();
    const env = await manager.get("t6");
    const info = await registry.start(env, "sleep 30", { sessionId: "owner" });
    pids.push(info.pid);
    expect((await registry.list("owner")).map((p) => p.id)).toEqual([info.id]);
    expect(await registry.list("intruder")).toEqual([]);
    for (const attempt of [
      () => registry.poll("intruder", info.id),
      () => registry.wait("intruder", info.id, 10),
      () => registry.kill("intruder", info.id),
      () => registry.write("intruder", info.id, "x"),
      () => registry.log("intruder", info.id),
      () => registry.closeInput("intruder", info.id),
    ]) {
      await expect(attempt()).rejects.toBeInstanceOf(ProcessNotFoundError);
    }
    expect(alive(info.pid)).toBe(true);
    await expect(registry.poll("owner", "proc_000000000000")).rejects.toThrow(/No background process with id "proc_000000000000" in this session/);
  });

  it("reads log lines: the last ones by default, or from an offset", async () => {
    const { manager, registry } = setup();
    const env = await manager.get("t7");
    const info = await registry.start(env, "seq 1 500", { sessionId: "s1" });
    await registry.wait("s1", info.id, 5_000);
    const last = await registry.log("s1", info.id, { limit: 3 });
    expect(last).toEqual({ from: 498, lines: ["498", "499", "500"], totalLines: 500 });
    expect(await registry.log("s1", info.id, { offset: 10, limit: 2 })).toEqual({ from: 10, lines: ["10", "11"], totalLines: 500 });
    expect((await registry.log("s1", info.id)).lines).toHaveLength(200);
  });

  it("keeps only the latest output in memory, while the log keeps everything", async () => {
    const { manager } = setup();
    const registry = new ProcessRegistry({ environments: manager, pollIntervalMs: 0, bufferChars: 1_000 });
    registries.push(registry);
    const env = await manager.get("t8");
    const info = await registry.start(env, "seq 1 100000", { sessionId: "s1" });
    const done = await registry.wait("s1", info.id, 10_000);
    expect(done.output.length).toBeLessThan(1_100);
    expect(done.output).toMatch(/\[\.\.\. \d+ characters omitted \.\.\.\]/);
    expect(done.output.endsWith("99999\n100000\n")).toBe(true);
    expect(done.outputBytes).toBe(588_895);
    expect((await registry.log("s1", info.id, { offset: 1, limit: 1 })).lines).toEqual(["1"]);
  });

  it("outlives the environment's idle cleanup, and finds a closed environment again", async () => {
    const { manager, registry } = setup({ idleTimeoutMs: 100 });
    const env = await manager.get("t9");
    const info = await registry.start(env, "sleep 1; echo done", { sessionId: "s1" });
    pids.push(info.pid);
    await new Promise((r) => setTimeout(r, 400));
    // Held while the process runs: not closed as idle.
    expect(manager.list().map((e) => e.taskId)).toContain("t9");
    await env.close();
    const done = await registry.wait("s1", info.id, 5_000);
    expect(done).toMatchObject({ status: "exited", exitCode: 0, output: "done\n" });
  });

  it("keeps running after the runtime lets go of it (setsid), with its files in the environment", async () => {
    const { manager, registry } = setup();
    const env = await manager.get("t10");
    const info = await registry.start(env, "sleep 0.3; echo later", { sessionId: "s1" });
    pids.push(info.pid);
    const startTime = readFileSync(`/proc/${info.pid}/stat`, "latin1").split(") ")[1]!.split(" ")[19]!;
    await registry.dispose();
    await manager.closeAll();
    // Nobody polls it now; it runs on and records its end in its directory.
    await new Promise((r) => setTimeout(r, 800));
    // Its directory is under the registry's default root, named by its id (never under the task's TMPDIR).
    const dir = `${process.env.MIBYAN_PROCESS_ROOT ?? `/tmp/mibyan-bg-${process.geteuid!()}`}/${info.id}`;
    const status = parseStatus(execFileSync("bash", ["-c", statusScript(dir, { pid: info.pid, startTime }, 0, 10_000)], { encoding: "utf8" }));
    // Its end is dated by its exit file: after its start, not in the future.
    const now = Date.now();
    expect(status).toMatchObject({ output: "later\n", exitCode: 0, alive: false });
    expect(status!.endedAt! > info.startedAt && status!.endedAt! <= now).toBe(true);
    rmSync(dir, { recursive: true, force: true });
  });

  it("reads the end time whether stat gives milliseconds or whole seconds", () => {
    expect(parseStatus("mibyan-bg 0 0 0 0 none 0 1796286919.566\n")?.endedAt).toBe(1796286919566);
    expect(parseStatus("mibyan-bg 0 0 0 0 none 0 1796286919\n")?.endedAt).toBe(1796286919000);
    expect(parseStatus("mibyan-bg 0 - 1 0 alive 0 -\n")?.endedAt).toBeUndefined();
  });
});

describe("terminal and process tools", () => {
  function tools() {
    const { manager, registry } = setup();
    const terminal = createTerminalHandler({
      environments: manager,
      processes: () => registry,
      gate: () => ({ check: async () => ({ allowed: true }) as never }),
    });
    const processTool = createProcessHandler({ processes: () => registry });
    const ctx = (sessionId: string, taskId = "tool-task"): ToolContext => ({ signal: new AbortController().signal, toolName: "terminal", sessionId, taskId });
    return { terminal, processTool, ctx, registry };
  }

  it("takes a time limit, completion notice and watch patterns for background commands only", async () => {
    const { terminal, processTool, ctx, registry } = tools();
    const bad = async (args: Record<string, unknown>) => JSON.parse(await terminal({ command: "true", ...args }, ctx("A"))).error as string;
    expect(await bad({ notify_on_complete: true })).toMatch(/background processes only/);
    expect(await bad({ watch_patterns: ["x"] })).toMatch(/background processes only/);
    expect(await bad({ background: true, watch_patterns: "x" })).toMatch(/watch_patterns must be an array/);
    expect(await bad({ background: true, timeout: 700_000 })).toMatch(/timeout must be a whole number of seconds from 1 to 604800/);
    const started = JSON.parse(
      await terminal({ command: "echo 'server READY'; sleep 30", background: true, timeout: 1, notify_on_complete: true, watch_patterns: ["READY"] }, ctx("A")),
    );
    pids.push(started.pid);
    const waited = JSON.parse(await processTool({ action: "wait", process_id: started.process_id, timeout: 15 }, ctx("A")));
    expect(waited).toMatchObject({ status: "timed_out", reason: "its time limit ran out" });
    const notes = registry.takeNotifications("A");
    expect(notes.map((n) => n.type).sort()).toEqual(["completed", "watch"]);
    expect(notes.find((n) => n.type === "watch")).toMatchObject({ pattern: "READY", line: "server READY" });
  });

  it("starts a background command and manages it through the process tool", async () => {
    const { terminal, processTool, ctx } = tools();
    const started = JSON.parse(await terminal({ command: "echo ready; read -r x; echo \"got $x\"; exit 5", background: true }, ctx("A")));
    expect(started).toMatchObject({ status: "background", exit_code: null, error: null, output: "" });
    pids.push(started.pid);
    const id = started.process_id as string;
    const list = JSON.parse(await processTool({ action: "list" }, ctx("A")));
    expect(list.processes.map((p: { process_id: string }) => p.process_id)).toEqual([id]);
    expect(JSON.parse(await processTool({ action: "submit", process_id: id, data: "yes" }, ctx("A")))).toMatchObject({ sent_chars: 4 });
    const waited = JSON.parse(await processTool({ action: "wait", process_id: id, timeout: 10 }, ctx("A")));
    expect(waited).toMatchObject({ status: "exited", exit_code: 5, output: "ready\ngot yes\n" });
    const log = JSON.parse(await processTool({ action: "log", process_id: id }, ctx("A")));
    expect(log).toMatchObject({ from_line: 1, total_lines: 2, output: "ready\ngot yes" });
  });

  it("answers another session's request with not_found", async () => {
    const { terminal, processTool, ctx } = tools();
    const started = JSON.parse(await terminal({ command: "sleep 20", background: true }, ctx("A")));
    pids.push(started.pid);
    for (const action of ["poll", "log", "wait", "kill", "write", "submit", "close"]) {
      const answer = JSON.parse(await processTool({ action, process_id: started.process_id, data: "x", timeout: 0 }, ctx("B")));
      expect(answer).toEqual({ error: `No background process with id "${started.process_id}" in this session.`, code: "not_found" });
    }
    expect(JSON.parse(await processTool({ action: "list" }, ctx("B")))).toEqual({ processes: [] });
    expect(alive(started.pid)).toBe(true);
    expect(JSON.parse(await processTool({ action: "kill", process_id: started.process_id }, ctx("A"))).status).toBe("killed");
  });

  it("rejects bad arguments with clear errors", async () => {
    const { terminal, processTool, ctx } = tools();
    expect(JSON.parse(await processTool({ action: "explode" }, ctx("A")))).toMatchObject({ code: "invalid_arguments", error: expect.stringMatching(/action must be one of list, poll/) });
    expect(JSON.parse(await processTool({ action: "poll" }, ctx("A")))).toMatchObject({ code: "invalid_arguments", error: "process_id is required for poll." });
    expect(JSON.parse(await processTool({ action: "wait", process_id: "proc_x", timeout: 9_999 }, ctx("A")))).toMatchObject({ code: "invalid_arguments", error: "timeout must be at most 600." });
    expect(JSON.parse(await terminal({ command: "true", background: "maybe" }, ctx("A")))).toMatchObject({ exit_code: -1, error: 'background must be true or false, got "maybe".' });
    // A background command has no foreground time limit.
    const long = JSON.parse(await terminal({ command: "sleep 1", background: true, timeout: 3_600 }, ctx("A")));
    pids.push(long.pid);
    expect(long.status).toBe("background");
  });

  it("runs a foreground command on a pseudo-terminal with pty: true", async () => {
    const { terminal, ctx } = tools();
    const r = JSON.parse(await terminal({ command: "tty; [ -t 1 ] && echo stdout-is-a-tty; exit 4", pty: true }, ctx("A")));
    expect(r.exit_code).toBe(4);
    expect(r.output).toMatch(/^\/dev\/pts\/\d+\nstdout-is-a-tty\n$/);
    const plain = JSON.parse(await terminal({ command: "tty; [ -t 1 ] || echo not-a-tty" }, ctx("A")));
    expect(plain.output).toBe("not a tty\nnot-a-tty\n");
  });

  it("redacts secrets in what the process tool returns", async () => {
    const { terminal, processTool, ctx } = tools();
    const started = JSON.parse(await terminal({ command: "echo GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789", background: true }, ctx("A")));
    const waited = JSON.parse(await processTool({ action: "wait", process_id: started.process_id }, ctx("A")));
    expect(waited.output).toBe("GITHUB_TOKEN=[REDACTED]\n");
    expect(waited.command).toBe("echo GITHUB_TOKEN=[REDACTED]");
    const log = JSON.parse(await processTool({ action: "log", process_id: started.process_id }, ctx("A")));
    expect(log.output).toBe("GITHUB_TOKEN=[REDACTED]");
  });
});
