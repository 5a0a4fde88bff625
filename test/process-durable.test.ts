/**
 * The process registry across Node processes, with real processes and real
 * files: a registry whose host is killed with SIGKILL, adoption by a new one,
 * a recycled pid that is neither adopted nor signalled, concurrent registries,
 * receipts (written before a waiter wakes, always redacted, readable only by
 * the owner and its continuations), time limits and notifications.
 */

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import { afterAll, describe, expect, it } from "vitest";

import { createLocalFactory } from "../src/environments/local.js";
import { EnvironmentManager } from "../src/environments/manager.js";
import { CheckpointStore, checkpointPath } from "../src/process/checkpoint.js";
import { ProcessNotFoundError, ProcessRegistry, type ProcessRegistryOptions } from "../src/process/process-registry.js";
import { receiptsDir } from "../src/process/receipts.js";
import type { CheckpointEntry, WriterIdentity } from "../src/process/types.js";
import { processStartTime } from "../src/process/writer-identity.js";
import { alive } from "./support/proc.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const DIST_INDEX = path.join(ROOT, "dist", "index.js");
const distBuilt = existsSync(path.join(ROOT, "dist", "process", "checkpoint.js"));
const scratch = realpathSync(mkdtempSync(path.join(tmpdir(), "mibyan-durable-")));

const managers: EnvironmentManager[] = [];
const registries: ProcessRegistry[] = [];
const children: ChildProcess[] = [];
const pids: number[] = [];

afterAll(async () => {
  await Promise.all(registries.map((registry) => registry.dispose()));
  for (const child of children) child.kill("SIGKILL");
  for (const pid of pids) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  await Promise.all(managers.map((m) => m.closeAll()));
  rmSync(scratch, { recursive: true, force: true });
});

function newHome(): string {
  return mkdtempSync(path.join(scratch, "home-"));
}

function setup(home: string, options: ProcessRegistryOptions = {}) {
  const manager = new EnvironmentManager({ factories: [createLocalFactory({ initialCwd: scratch })], defaultBackend: "local", closeOnExit: false });
  const registry = new ProcessRegistry({ environments: manager, home, pollIntervalMs: 0, waitIntervalMs: 50, killGraceMs: 500, ...options });
  managers.push(manager);
  registries.push(registry);
  return { manager, registry };
}

function receiptFile(home: string, id: string): string {
  return path.join(receiptsDir(home), `${id}.json`);
}


async function gone(pid: number, withinMs = 3_000): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return !alive(pid);
}

/** A Node process that starts a background process through the built package, prints its id, then idles until killed. */
function startHost(home: string, command: string, sessionId: string): Promise<{ child: ChildProcess; id: string; pid: number }> {
  const script = `
    const { EnvironmentManager, createLocalFactory, ProcessRegistry } = await import(${JSON.stringify(pathToFileURL(DIST_INDEX).href)});
    const manager = new EnvironmentManager({ factories: [createLocalFactory({ initialCwd: ${JSON.stringify(scratch)} })], defaultBackend: "local", closeOnExit: false });
    const registry = new ProcessRegistry({ environments: manager, home: ${JSON.stringify(home)}, pollIntervalMs: 100 });
    const info = await registry.start(await manager.get("t"), ${JSON.stringify(command)}, { sessionId: ${JSON.stringify(sessionId)} });
    console.log(JSON.stringify({ id: info.id, pid: info.pid }));
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, MIBYAN_HOME: home } });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) {
        const { id, pid } = JSON.parse(line) as { id: string; pid: number };
        pids.push(pid);
        resolve({ child, id, pid });
      }
    });
    child.on("exit", (code) => reject(new Error(`host exited early (${code}): ${out}`)));
  });
}

function killHard(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}

/** The identity of a writer that certainly died: a child that ran and exited. */
async function deadWriter(): Promise<WriterIdentity> {
  const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 5000)"], { stdio: "ignore" });
  await new Promise((r) => setTimeout(r, 100));
  const writer: WriterIdentity = { pid: child.pid!, startTime: processStartTime(child.pid!) ?? "", host: (await import("node:os")).hostname(), instance: "dead0000" };
  await new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
  return writer;
}

describe.skipIf(!distBuilt)("adoption after the host died (needs `npm run build`)", () => {
  it("adopts a process whose registry was killed with SIGKILL, and its output continues from the log", async () => {
    const home = newHome();
    const host = await startHost(home, "echo before; sleep 1.5; echo after; exit 7", "s1");
    await new Promise((r) => setTimeout(r, 300));
    await killHard(host.child);
    expect(alive(host.pid)).toBe(true);

    const { registry } = setup(home);
    const listed = await registry.list("s1");
    expect(listed.map((p) => p.id)).toEqual([host.id]);
    expect(listed[0]!.source).toBe("live");
    const done = await registry.wait("s1", host.id, 15_000);
    expect(done.status).toBe("exited");
    expect(done.exitCode).toBe(7);
    expect(done.output).toBe("before\nafter\n");
    // The receipt was written before wait returned; the checkpoint no longer lists it.
    const receipt = JSON.parse(readFileSync(receiptFile(home, host.id), "utf8"));
    expect(receipt).toMatchObject({ id: host.id, owner: "s1", exitCode: 7, ended: "exited", output: "before\nafter\n" });
    expect(statSync(receiptFile(home, host.id)).mode & 0o777).toBe(0o600);
    // The unredacted log went with its directory once the receipt kept all of the output.
    expect(existsSync(path.dirname(receipt.logPath))).toBe(false);
    expect((await registry.log("s1", host.id)).lines).toEqual(["before", "after"]);
    expect(await new CheckpointStore({ file: checkpointPath(home), writer: await deadWriter() }).read()).toEqual([]);
  });

  it("dates the end of a process that ended while nobody watched by its exit file, not by the adoption", async () => {
    const home = newHome();
    const host = await startHost(home, "exit 3", "s1");
    await killHard(host.child);
    await new Promise((r) => setTimeout(r, 2_500));
    const { registry } = setup(home);
    const done = await registry.wait("s1", host.id, 15_000);
    expect(done).toMatchObject({ status: "exited", exitCode: 3 });
    const receipt = JSON.parse(readFileSync(receiptFile(home, host.id), "utf8"));
    // Second precision: well under the 2.5 s that passed before the adoption.
    expect(receipt.durationMs).toBeLessThan(2_000);
  });

  it("kills an adopted process, its whole group", async () => {
    const home = newHome();
    const host = await startHost(home, "sleep 30 & sleep 31; wait", "s1");
    await killHard(host.child);
    const { registry } = setup(home);
    const killed = await registry.kill("s1", host.id);
    expect(killed).toMatchObject({ status: "killed", source: "live" });
    expect(await gone(host.pid)).toBe(true);
    expect(JSON.parse(readFileSync(receiptFile(home, host.id), "utf8")).ended).toBe("killed");
  });

  it("reading results and listing passively never adopts an orphan", async () => {
    const home = newHome();
    const host = await startHost(home, "sleep 30", "s1");
    await killHard(host.child);
    const { registry } = setup(home);
    const snapshot = await registry.snapshot("s1");
    expect(snapshot.running.map((p) => p.id)).toEqual([host.id]);
    expect(await registry.results("s1")).toEqual([]);
    await expect(registry.result("s1", host.id)).rejects.toBeInstanceOf(ProcessNotFoundError);
    const [entry] = await new CheckpointStore({ file: checkpointPath(home), writer: await deadWriter() }).read();
    // Still the dead host's: nobody took it over.
    expect(entry!.writer.pid).toBe(host.child.pid);
    process.kill(-host.pid, "SIGKILL");
  });

  it("a live registry's process is answered from elsewhere, and a later waiter reads its receipt", async () => {
    const home = newHome();
    const host = await startHost(home, "sleep 1; echo finished; exit 4", "s1");
    const { registry } = setup(home);
    const seen = await registry.poll("s1", host.id);
    expect(seen.source).toBe("elsewhere");
    expect(seen.managedBy?.pid).toBe(host.child.pid);
    await expect(registry.kill("s1", host.id)).rejects.toThrow(/another mibyan process/);
    const done = await registry.wait("s1", host.id, 15_000);
    expect(done).toMatchObject({ source: "receipt", status: "exited", exitCode: 4, output: "finished\n" });
    await killHard(host.child);
  });
});

describe("PID safety", () => {
  it("does not adopt or signal a process whose pid was recycled", async () => {
    const home = newHome();
    // Someone else's process, with the pid the checkpoint names but another start time.
    const stranger = spawn("sleep", ["30"], { stdio: "ignore", detached: true });
    children.push(stranger);
    // A directory as the registry makes them: under its root, named by the id.
    const root = path.join(scratch, "control");
    const dir = path.join(root, "proc_0123456789ab");
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(path.join(dir, "log"), "old output\n");
    const entry: CheckpointEntry = {
      id: "proc_0123456789ab",
      owner: "s1",
      taskId: "t",
      backend: "local",
      pid: stranger.pid!,
      pgid: stranger.pid!,
      startTime: "1",
      command: "sleep 30",
      cwd: scratch,
      dir,
      logPath: path.join(dir, "log"),
      pty: false,
      startedAt: new Date(Date.now() - 60_000).toISOString(),
      notifyOnComplete: false,
      watchPatterns: [],
      writer: await deadWriter(),
    };
    await new CheckpointStore({ file: checkpointPath(home), writer: entry.writer }).put([entry]);

    const { registry } = setup(home, { controlRoot: root });
    await registry.adoptOrphans();
    const info = await registry.poll("s1", entry.id);
    expect(info.status).toBe("lost");
    expect(info.reason).toMatch(/pid \d+ now belongs to another process/);
    const killed = await registry.kill("s1", entry.id);
    expect(killed.status).toBe("lost");
    expect(alive(stranger.pid!)).toBe(true);
    const receipt = JSON.parse(readFileSync(receiptFile(home, entry.id), "utf8"));
    expect(receipt).toMatchObject({ ended: "lost", exitCode: null, output: "old output\n" });
    stranger.kill("SIGKILL");
  });
});

describe("receipts", () => {
  it("two registries finishing processes at the same moment each write their own receipt", async () => {
    const home = newHome();
    const a = setup(home);
    const b = setup(home);
    const started = await Promise.all(
      [a, b, a, b].map(async ({ manager, registry }, i) => {
        const info = await registry.start(await manager.get(`t${i}`), `sleep 0.5; echo out-${i}; exit ${i}`, { sessionId: "s1" });
        pids.push(info.pid);
        return { registry, id: info.id, i };
      }),
    );
    const results = await Promise.all(started.map(({ registry, id }) => registry.wait("s1", id, 15_000)));
    results.forEach((r, i) => expect(r).toMatchObject({ status: "exited", exitCode: i, output: `out-${i}\n` }));
    const files = readdirSync(receiptsDir(home)).filter((f) => f.endsWith(".json"));
    expect(files.sort()).toEqual(started.map((s) => `${s.id}.json`).sort());
    for (const { id, i } of started) expect(JSON.parse(readFileSync(receiptFile(home, id), "utf8")).exitCode).toBe(i);
    expect(await a.registry.snapshot("s1")).toMatchObject({ running: [] });
  });

  it("keeps secrets out of receipts and the checkpoint even when live output is not redacted", async () => {
    const home = newHome();
    const { manager, registry } = setup(home);
    const key = `sk-proj-${"Q".repeat(40)}`;
    const token = `ghp_${"x".repeat(36)}`;
    const info = await registry.start(await manager.get("t"), `echo ${key}; echo "Authorization: Bearer ${token}"; sleep 0.5`, { sessionId: "s1" });
    pids.push(info.pid);
    const checkpointBytes = readFileSync(checkpointPath(home), "utf8");
    expect(checkpointBytes).toContain(info.id);
    expect(checkpointBytes).not.toContain(key);
    await registry.wait("s1", info.id, 15_000);
    const bytes = readFileSync(receiptFile(home, info.id), "utf8");
    expect(bytes).not.toContain(key);
    expect(bytes).not.toContain(token);
    expect(bytes).toContain("[REDACTED]");
  });

  it("refuses another session, and lets a continuation read", async () => {
    const home = newHome();
    const { manager, registry } = setup(home);
    const info = await registry.start(await manager.get("t"), "echo mine", { sessionId: "owner" });
    pids.push(info.pid);
    await registry.wait("owner", info.id, 15_000);
    await expect(registry.result("intruder", info.id)).rejects.toBeInstanceOf(ProcessNotFoundError);
    await expect(registry.poll("intruder", info.id)).rejects.toBeInstanceOf(ProcessNotFoundError);
    expect(await registry.results("intruder")).toEqual([]);

    // A new registry (a later process) answers from the receipt, to the owner and a continuation only.
    const later = setup(home).registry;
    await expect(later.result("compressed", info.id)).rejects.toBeInstanceOf(ProcessNotFoundError);
    await later.recordContinuation("owner", "compressed");
    expect((await later.result("compressed", info.id)).output).toBe("mine\n");
    expect((await later.poll("compressed", info.id)).source).toBe("receipt");
    expect(existsSync(path.join(home, "processes", "sessions.json"))).toBe(true);
    await expect(later.recordContinuation("someone-else", "compressed")).rejects.toThrow(/already continues owner/);
  });
});

describe("time limits and notifications", () => {
  it("kills a background process at its time limit and records it as timed out", async () => {
    const home = newHome();
    const { manager, registry } = setup(home);
    const info = await registry.start(await manager.get("t"), "echo begun; sleep 30", { sessionId: "s1", timeoutSeconds: 1 });
    pids.push(info.pid);
    const done = await registry.wait("s1", info.id, 15_000);
    expect(done.status).toBe("timed_out");
    expect(done.reason).toMatch(/time limit/);
    // The runner records the exit code, then ends; the watchdog and the command went before it.
    expect(await gone(info.pid)).toBe(true);
    const receipt = JSON.parse(readFileSync(receiptFile(home, info.id), "utf8"));
    expect(receipt).toMatchObject({ ended: "timed_out", exitCode: 143 });
    // bash reports the signal that ended the command ("Terminated") after its output.
    expect(receipt.output).toMatch(/^begun\n/);
  });

  it("notifies on completion and on watch patterns, rate-limited", async () => {
    const home = newHome();
    const { manager, registry } = setup(home, { watch: { minIntervalMs: 60_000, maxPerProcess: 5 } });
    const live: string[] = [];
    const unsubscribe = registry.onNotification((n) => live.push(n.type));
    const info = await registry.start(await manager.get("t"), "echo booting; echo 'READY on :8080'; echo READY again; echo READY third; exit 2", {
      sessionId: "s1",
      notifyOnComplete: true,
      watchPatterns: ["READY"],
    });
    pids.push(info.pid);
    await registry.wait("s1", info.id, 15_000);
    const notes = registry.takeNotifications("s1");
    const watch = notes.filter((n) => n.type === "watch");
    // The first match at once; the other two folded into one more, sent when the process ended.
    expect(watch.length).toBeGreaterThanOrEqual(1);
    expect(watch.length).toBeLessThanOrEqual(2);
    expect(watch.map((n) => (n.type === "watch" ? n.line : "")).join("|")).toMatch(/READY/);
    expect(watch.reduce((sum, n) => sum + 1 + (n.type === "watch" ? n.suppressed : 0), 0)).toBe(3);
    const completed = notes.find((n) => n.type === "completed");
    expect(completed).toMatchObject({ processId: info.id, status: "exited", exitCode: 2, sessionId: "s1" });
    expect(registry.takeNotifications("s1")).toEqual([]);
    expect(registry.takeNotifications("other")).toEqual([]);
    expect(live).toContain("completed");
    unsubscribe();
  });

  it("rejects bad watch patterns and time limits", async () => {
    const { manager, registry } = setup(newHome());
    const env = await manager.get("t");
    await expect(registry.start(env, "true", { sessionId: "s", watchPatterns: [""] })).rejects.toThrow(/watch_patterns\[0\]/);
    await expect(registry.start(env, "true", { sessionId: "s", watchPatterns: Array(11).fill("x") })).rejects.toThrow(/at most 10/);
    await expect(registry.start(env, "true", { sessionId: "s", timeoutSeconds: -1 })).rejects.toThrow(/time limit/);
  });
});

describe("without a home", () => {
  it("keeps nothing on disk", async () => {
    const home = newHome();
    mkdirSync(path.join(home, "x"));
    const { manager, registry } = setup(home, { home: false });
    const info = await registry.start(await manager.get("t"), "echo hi", { sessionId: "s1" });
    pids.push(info.pid);
    expect((await registry.wait("s1", info.id, 15_000)).output).toBe("hi\n");
    expect(readdirSync(home)).toEqual(["x"]);
    expect(registry.home).toBeUndefined();
  });
});
