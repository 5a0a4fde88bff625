/**
 * Issue 10, "Process registry": every attack on the registry's trust in files a
 * background command can write, played for real with real processes and files
 * on the local backend. Each test names the victim (a process of its own, a
 * directory of its own) and checks that the victim survives what the attacker
 * arranged, and that the attacker's own process is still managed properly.
 */

import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import path from "node:path";

import { afterAll, describe, expect, it } from "vitest";

import { createLocalFactory } from "../src/environments/local.js";
import { EnvironmentManager } from "../src/environments/manager.js";
import { CheckpointStore, checkpointPath } from "../src/process/checkpoint.js";
import { ProcessRegistry, type ProcessRegistryOptions } from "../src/process/process-registry.js";
import type { CheckpointEntry, WriterIdentity } from "../src/process/types.js";
import { processStartTime } from "../src/process/writer-identity.js";
import { alive } from "./support/proc.js";

const scratch = realpathSync(mkdtempSync(path.join(tmpdir(), "mibyan-trust-")));
const controlRoot = path.join(scratch, "control");

const managers: EnvironmentManager[] = [];
const registries: ProcessRegistry[] = [];
const victims: ChildProcess[] = [];

afterAll(async () => {
  await Promise.all(registries.map((r) => r.dispose()));
  await Promise.all(managers.map((m) => m.closeAll()));
  for (const victim of victims) victim.kill("SIGKILL");
  // Whatever a test left running in the registry's root (a failed assertion must not leave sleeps behind).
  for (const pid of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "latin1").includes(scratch)) process.kill(Number(pid), "SIGKILL");
    } catch {
      // gone
    }
  }
  rmSync(scratch, { recursive: true, force: true });
});

function setup(options: ProcessRegistryOptions = {}) {
  const home = mkdtempSync(path.join(scratch, "home-"));
  const manager = new EnvironmentManager({ factories: [createLocalFactory({ initialCwd: scratch })], defaultBackend: "local", closeOnExit: false });
  const registry = new ProcessRegistry({ environments: manager, home, controlRoot, pollIntervalMs: 0, waitIntervalMs: 50, killGraceMs: 500, ...options });
  managers.push(manager);
  registries.push(registry);
  return { manager, registry, home };
}

/** A process of the test's own, in its own session: what an attacker wants the registry to kill. */
async function victim(): Promise<{ pid: number; startTime: string }> {
  const child = spawn("sleep", ["300"], { detached: true, stdio: "ignore" });
  victims.push(child);
  await new Promise((r) => setTimeout(r, 50));
  return { pid: child.pid!, startTime: processStartTime(child.pid!)! };
}


async function until(check: () => boolean, withinMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return check();
}

/** Shell lines that find the process's own directory the way an attacker would: through its stdout. */
const FIND_DIR = `d=$(dirname "$(readlink /proc/$$/fd/1)")`;

describe("forged pid and holder files", () => {
  it("`kill` signals the group the launcher recorded, never the pid a command wrote into its pid file", async () => {
    const { manager, registry } = setup();
    const v = await victim();
    const env = await manager.get("pidfile");
    const info = await registry.start(env, `${FIND_DIR}; printf '%s %s' ${v.pid} ${v.startTime} > "$d/pid"; echo forged; sleep 300`, { sessionId: "s" });
    // Wait until the forgery is in place.
    for (let i = 0; i < 100 && !(await registry.poll("s", info.id)).preview.includes("forged"); i++) await new Promise((r) => setTimeout(r, 50));
    expect(info.pid).not.toBe(v.pid);
    const killed = await registry.kill("s", info.id);
    expect(killed.status).toBe("killed");
    expect(alive(v.pid)).toBe(true);
    expect(await until(() => !alive(info.pid))).toBe(true);
  });

  it("`close` ends the process's input without signalling the pid a command wrote into its holder file", async () => {
    const { manager, registry } = setup();
    const v = await victim();
    const env = await manager.get("holder");
    const info = await registry.start(env, `${FIND_DIR}; printf '%s' ${v.pid} > "$d/holder"; echo forged; cat; echo "input ended"`, { sessionId: "s" });
    for (let i = 0; i < 100 && !(await registry.poll("s", info.id)).preview.includes("forged"); i++) await new Promise((r) => setTimeout(r, 50));
    await registry.closeInput("s", info.id);
    const done = await registry.wait("s", info.id, 10_000);
    expect(done.status).toBe("exited");
    expect(done.output).toContain("input ended");
    expect(alive(v.pid)).toBe(true);
  });
});

describe("a crafted TMPDIR", () => {
  it("does not forge the launch line: the registry keeps its own root, the real pid, and deletes nothing else", async () => {
    const { manager, registry } = setup();
    const v = await victim();
    const victimDir = path.join(scratch, "victim-tmp");
    mkdirSync(victimDir);
    writeFileSync(path.join(victimDir, "precious"), "keep me");
    // The old launcher printed "<dir>\t<pid> <start>": a TMPDIR holding a tab and a newline made its first
    // line "<victim dir>\t<victim pid> <start>", which the registry took for the process's own.
    const crafted = `${victimDir}\t${v.pid} ${v.startTime}\n${scratch}/t`;
    mkdirSync(crafted, { recursive: true });
    const env = await manager.get("tmpdir");
    const ansiC = crafted.replace(/\\/g, "\\\\").replace(/'/g, "\\'").replace(/\t/g, "\\t").replace(/\n/g, "\\n");
    await env.exec(`export TMPDIR=$'${ansiC}'`, { timeoutMs: 5_000, maxOutputChars: 1000 });
    expect((await env.exec('printf %s "$TMPDIR"', { timeoutMs: 5_000, maxOutputChars: 1000 })).output).toBe(crafted);

    const info = await registry.start(env, "sleep 300", { sessionId: "s" });
    expect(info.pid).not.toBe(v.pid);
    expect(info.pid).toBeGreaterThan(1);
    const killed = await registry.kill("s", info.id);
    expect(killed.status).toBe("killed");
    await registry.dispose();
    expect(alive(v.pid)).toBe(true);
    expect(readFileSync(path.join(victimDir, "precious"), "utf8")).toBe("keep me");
    // Nothing was made under the crafted TMPDIR: the registry's directories are under its own root.
    expect(readdirSync(crafted)).toEqual([]);
  });
});

/** The identity of a writer that certainly died: a child that ran and exited. */
async function deadWriter(): Promise<WriterIdentity> {
  const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 5000)"], { stdio: "ignore" });
  await new Promise((r) => setTimeout(r, 100));
  const writer: WriterIdentity = { pid: child.pid!, startTime: processStartTime(child.pid!) ?? "", host: hostname(), instance: "dead0000" };
  await new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
  return writer;
}

function forgedEntry(id: string, dir: string, writer: WriterIdentity, pid: number, startTime: string): CheckpointEntry {
  return {
    id,
    owner: "s",
    taskId: "adopt",
    backend: "local",
    pid,
    pgid: pid,
    startTime,
    command: "sleep 1",
    cwd: null,
    dir,
    logPath: `${dir}/log`,
    pty: false,
    startedAt: new Date().toISOString(),
    notifyOnComplete: false,
    watchPatterns: [],
    writer,
  };
}

describe("adoption of a forged checkpoint entry", () => {
  it("never deletes a directory the registry did not create (a plain one, or a symlink under its root)", async () => {
    const { registry, home } = setup();
    const writer = await deadWriter();
    const plain = path.join(scratch, "victim-adopt");
    mkdirSync(plain);
    writeFileSync(path.join(plain, "precious"), "keep me");
    // Looks like an ended process's directory, so the old adoption read it, wrote a receipt and ran rm -rf on it.
    writeFileSync(path.join(plain, "exit"), "0");
    writeFileSync(path.join(plain, "log"), "done\n");
    const linked = path.join(scratch, "victim-link-target");
    mkdirSync(linked);
    writeFileSync(path.join(linked, "precious"), "keep me");
    writeFileSync(path.join(linked, "exit"), "0");
    writeFileSync(path.join(linked, "log"), "done\n");
    mkdirSync(controlRoot, { recursive: true, mode: 0o700 });
    const link = path.join(controlRoot, "proc_0000000000b2");
    symlinkSync(linked, link);
    const store = new CheckpointStore({ file: checkpointPath(home), writer });
    await store.put([forgedEntry("proc_0000000000b1", plain, writer, 999_999, "1"), forgedEntry("proc_0000000000b2", link, writer, 999_998, "1")]);

    const listed = await registry.list("s");
    expect(listed.map((p) => p.id).sort()).toEqual(["proc_0000000000b1", "proc_0000000000b2"]);
    for (const p of listed) expect(p.status).toBe("lost");
    await registry.dispose();
    expect(readFileSync(path.join(plain, "precious"), "utf8")).toBe("keep me");
    expect(readFileSync(path.join(linked, "precious"), "utf8")).toBe("keep me");
  });

  it("never signals pid 1 or a pid whose process group is not the recorded one", async () => {
    const { registry, home } = setup();
    const writer = await deadWriter();
    const v = await victim();
    // The victim is alive with the recorded start time, but it is not the group the entry names.
    const entry = { ...forgedEntry("proc_0000000000c1", path.join(controlRoot, "proc_0000000000c1"), writer, v.pid, v.startTime), pgid: v.pid + 1 };
    await new CheckpointStore({ file: checkpointPath(home), writer }).put([entry]);
    const listed = await registry.list("s");
    expect(listed[0]?.status).toBe("lost");
    await expect(registry.kill("s", "proc_0000000000c1")).resolves.toMatchObject({ status: "lost" });
    expect(alive(v.pid)).toBe(true);
  });
});

describe("time limits", () => {
  it("a command that ignores SIGTERM ends as timed_out, not lost", async () => {
    const { manager, registry } = setup();
    const env = await manager.get("timeout");
    const info = await registry.start(env, "trap '' TERM; echo started; sleep 30", { sessionId: "s", timeoutSeconds: 1 });
    const done = await registry.wait("s", info.id, 15_000);
    expect(done.status).toBe("timed_out");
    expect(done.reason).toMatch(/time limit/);
  });
});

/** A node process that starts a background command through the built package and is killed in the middle of it. */
describe.skipIf(!existsSync(path.resolve("dist", "index.js")))("a CLI killed in the middle of a background start (needs `npm run build`)", () => {
  it("leaves no process that a later registry cannot see: the write-ahead entry is found, and the command never runs unrecorded", async () => {
    const home = mkdtempSync(path.join(scratch, "home-"));
    const marker = path.join(scratch, "orphan-ran");
    const dist = path.resolve("dist", "index.js");
    // The environment's exec is real; after the launcher has run, it tells the test and never returns,
    // so the host is killed exactly between the launch and what the registry does after it.
    const script = `
      const { EnvironmentManager, createLocalFactory, ProcessRegistry } = await import(${JSON.stringify(dist)});
      const manager = new EnvironmentManager({ factories: [createLocalFactory({ initialCwd: ${JSON.stringify(scratch)} })], defaultBackend: "local", closeOnExit: false });
      const registry = new ProcessRegistry({ environments: manager, home: ${JSON.stringify(home)}, controlRoot: ${JSON.stringify(controlRoot)}, pollIntervalMs: 0 });
      const real = await manager.get("t");
      let launches = 0;
      const env = new Proxy(real, { get(target, key) {
        if (key !== "exec") { const v = Reflect.get(target, key); return typeof v === "function" ? v.bind(target) : v; }
        return async (script, options) => {
          const result = await target.exec(script, options);
          if (script.includes("mibyan-launch ") && ++launches === 1) { console.log("launched"); await new Promise(() => {}); }
          return result;
        };
      } });
      await registry.start(env, ${JSON.stringify(`touch ${marker}; sleep 300`)}, { sessionId: "s" });
    `;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, MIBYAN_HOME: home } });
    victims.push(child);
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on("data", (chunk: Buffer) => (chunk.toString().includes("launched") ? resolve() : undefined));
      child.once("exit", (code) => reject(new Error(`host exited early (${code})`)));
    });
    await new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.kill("SIGKILL");
    });

    const { registry } = setup();
    const later = new ProcessRegistry({ environments: managers.at(-1)!, home, controlRoot, pollIntervalMs: 0, waitIntervalMs: 50 });
    registries.push(later);
    const listed = await later.list("s");
    // The start is in the checkpoint before anything is launched, so it is found.
    expect(listed).toHaveLength(1);
    const seen = listed[0]!;
    if (seen.status === "running") {
      // Adopted with the pid the launcher gave: it can be managed (killed) like any other.
      await later.kill("s", seen.id);
      expect(await until(() => !alive(seen.pid))).toBe(true);
    } else {
      // Written off: the command was held before it ran, and now never runs.
      expect(seen.status).toBe("lost");
      await new Promise((r) => setTimeout(r, 500));
      expect(existsSync(marker)).toBe(false);
    }
    // Nothing of it is left running in the registry's root.
    const leftovers = readdirSync("/proc")
      .filter((n) => /^\d+$/.test(n))
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, "latin1").includes(marker);
        } catch {
          return false;
        }
      });
    expect(await until(() => leftovers.every((pid) => !alive(Number(pid))))).toBe(true);
    void registry;
  });
});

const canUnsharePid = process.getuid?.() === 0 && spawnSync("unshare", ["-p", "-f", "--mount-proc", "true"]).status === 0;

/**
 * Pid 1 written into the pid and holder files: the old registry ran `kill -TERM -- -1` (every process).
 * Played inside a pid namespace of its own, where "every process" is only what the test started there.
 */
describe.skipIf(!canUnsharePid || !existsSync(path.resolve("dist", "index.js")))("pid 1 in a forged pid file (needs root for a pid namespace, and `npm run build`)", () => {
  it("is never signalled: a bystander in the same namespace survives kill and close", async () => {
    const dist = path.resolve("dist", "index.js");
    const home = mkdtempSync(path.join(scratch, "home-"));
    const script = `
      const { spawn } = await import("node:child_process");
      const { EnvironmentManager, createLocalFactory, ProcessRegistry } = await import(${JSON.stringify(dist)});
      const bystander = spawn("sleep", ["60"], { detached: true, stdio: "ignore" });
      const manager = new EnvironmentManager({ factories: [createLocalFactory({ initialCwd: ${JSON.stringify(scratch)} })], defaultBackend: "local", closeOnExit: false });
      const registry = new ProcessRegistry({ environments: manager, home: ${JSON.stringify(home)}, controlRoot: ${JSON.stringify(path.join(scratch, "ns-control"))}, pollIntervalMs: 0, killGraceMs: 300 });
      const env = await manager.get("t");
      const command = 'd=$(dirname "$(readlink /proc/$$/fd/1)"); read -r l < /proc/1/stat; f=(\${l##*) }); printf "1 %s" "\${f[19]}" > "$d/pid"; printf 1 > "$d/holder"; echo forged; sleep 60';
      const info = await registry.start(env, command, { sessionId: "s" });
      for (let i = 0; i < 100 && !(await registry.poll("s", info.id)).preview.includes("forged"); i++) await new Promise((r) => setTimeout(r, 50));
      await registry.closeInput("s", info.id);
      const killed = await registry.kill("s", info.id);
      await new Promise((r) => setTimeout(r, 300));
      let bystanderAlive = true;
      try { process.kill(bystander.pid, 0); } catch { bystanderAlive = false; }
      console.log(JSON.stringify({ status: killed.status, pid: info.pid, bystanderAlive }));
      bystander.kill("SIGKILL");
      await manager.closeAll();
      process.exit(0);
    `;
    const run = spawnSync("unshare", ["-p", "-f", "--mount-proc", process.execPath, "--input-type=module", "-e", script], { encoding: "utf8", timeout: 30_000 });
    const line = run.stdout.split("\n").find((l) => l.startsWith("{"));
    expect(line, `${run.stdout}\n${run.stderr}`).toBeDefined();
    const result = JSON.parse(line!) as { status: string; pid: number; bystanderAlive: boolean };
    expect(result.pid).toBeGreaterThan(1);
    expect(result.status).toBe("killed");
    expect(result.bystanderAlive).toBe(true);
  });
});
