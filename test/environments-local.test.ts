/**
 * The local backend: the shared environment contract, the shell-state script
 * on its own, the per-task state directory, the environment manager, and the
 * terminal tool running through it.
 */

import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";

import type { BackendInfo } from "../src/approval/flow/types.js";
import { clearConfigCache } from "../src/config/load-config.js";
import { BACKENDS } from "../src/environments/backends.js";
import { LocalEnvironment, createLocalFactory, defaultInitialCwd, localFactory } from "../src/environments/local.js";
import { EnvironmentManager, EnvironmentUnavailableError, getEnvironmentManager, ManagedEnvironment } from "../src/environments/manager.js";
import { SHELL_STATE_SKIPPED_VARIABLES, shellQuote, statePaths, wrapCommand } from "../src/environments/shell-state.js";
import type { Environment, EnvironmentFactory, ExecOptions, ExecResult } from "../src/environments/types.js";
import type { ToolContext } from "../src/registry/types.js";
import { TERMINAL_SCHEMA, createTerminalHandler } from "../src/tools/terminal.js";
import { environmentContract } from "./support/environment-contract.js";

// The tool module registers itself on import; keep it off the real registry.
vi.mock("../src/registry/singleton.js", () => ({ registry: { register: () => {} } }));

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

// An empty profile home, so the developer's own config.yaml never leaks in.
const home = mkdtempSync(path.join(tmpdir(), "mibyan-envtest-home-"));
const savedHome = process.env.MIBYAN_HOME;
process.env.MIBYAN_HOME = home;
clearConfigCache();

const scratch = realpathSync(mkdtempSync(path.join(tmpdir(), "mibyan-envtest-")));

afterAll(() => {
  if (savedHome === undefined) delete process.env.MIBYAN_HOME;
  else process.env.MIBYAN_HOME = savedHome;
  clearConfigCache();
  rmSync(home, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

function writeConfig(text: string): void {
  writeFileSync(path.join(home, "config.yaml"), text);
  clearConfigCache();
}

const opts = (extra: Partial<ExecOptions> = {}): ExecOptions => ({ timeoutMs: 20_000, maxOutputChars: 100_000, ...extra });

// ---------------------------------------------------------------------------
// The contract every backend shares
// ---------------------------------------------------------------------------

environmentContract("local", (taskId) => LocalEnvironment.create(taskId, { initialCwd: scratch }));
// The same through the manager's wrapper, which the terminal tool uses.
{
  const manager = new EnvironmentManager({ defaultBackend: "local", idleTimeoutMs: 0, closeOnExit: false });
  environmentContract("local via EnvironmentManager", (taskId) => manager.get(taskId));
}

// ---------------------------------------------------------------------------
// The shell-state script on its own
// ---------------------------------------------------------------------------

describe("wrapCommand", () => {
  let dir: string;
  let n = 0;
  const fresh = () => {
    dir = path.join(scratch, `state-${++n} with 'quote' and $dollar`);
    mkdirSync(dir);
    return dir;
  };

  function run(stateDir: string, command: string, options: { cwdOverride?: string; saveState?: boolean; env?: NodeJS.ProcessEnv; initialCwd?: string } = {}) {
    const script = wrapCommand(statePaths(stateDir), {
      initialCwd: options.initialCwd ?? scratch,
      cwdOverride: options.cwdOverride,
      saveState: options.saveState,
    });
    // stderr merged into stdout, in order, as the backends do.
    const r = spawnSync("/bin/sh", ["-c", 'exec 2>&1; exec "$@"', "sh", "bash", "-c", script, "bash", command], {
      cwd: "/",
      env: options.env ?? process.env,
      encoding: "utf8",
    });
    return { out: r.stdout, code: r.status };
  }

  it("starts in initialCwd, never splices the command into the script", () => {
    const d = fresh();
    const command = `echo "$1|$#|$0"; printf '%s\\n' '$(touch /tmp/x)' "\\\`"; pwd`;
    const script = wrapCommand(statePaths(d), { initialCwd: scratch });
    expect(script).not.toContain("touch");
    expect(run(d, command)).toEqual({ out: `|0|bash\n$(touch /tmp/x)\n\`\n${scratch}\n`, code: 0 });
  });

  it("quotes paths with spaces, quotes and dollars", () => {
    const d = fresh();
    const odd = path.join(d, `it's a "dir" $HOME`);
    mkdirSync(odd);
    expect(run(d, `cd ${shellQuote(odd)}`).code).toBe(0);
    expect(run(d, "pwd").out).toBe(`${odd}\n`);
    expect(readFileSync(statePaths(d).cwdFile, "utf8")).toBe(odd);
  });

  it("carries cd, export and unset; leaves non-exported variables, options and functions behind", () => {
    const d = fresh();
    const r = run(d, "cd /; export A=1 B=2; C=3; f() { :; }; set -e; shopt -s nullglob; unset HOME");
    expect(r.code).toBe(0);
    const next = run(d, 'pwd; echo "${A-}|${B-}|${C-unset}|${HOME-unset}"; type f >/dev/null 2>&1 || echo nofunc; echo $-; shopt -q nullglob || echo noglob');
    expect(next.out).toBe("/\n1|2|unset|unset\nnofunc\nhBc\nnoglob\n");
    run(d, "unset A; export B=3");
    expect(run(d, 'echo "${A-unset}|$B"').out).toBe("unset|3\n");
  });

  it("keeps variable attributes (integer, readonly)", () => {
    const d = fresh();
    run(d, "declare -ix N=5; declare -rx R=fixed");
    expect(run(d, 'N=2+3; echo $N; R=other; echo "not reached"').out).toMatch(/^5\n.*R: readonly variable\n$/);
  });

  it("saves on exit, on a normal end, and returns the command's status", () => {
    const d = fresh();
    expect(run(d, "cd /usr; exit 3").code).toBe(3);
    expect(run(d, "pwd").out).toBe("/usr\n");
    expect(run(d, "cd /; false").code).toBe(1);
    expect(run(d, "pwd").out).toBe("/\n");
    // set -e ending the shell saves too.
    expect(run(d, "set -e; cd /usr; false; echo no").code).toBe(1);
    expect(run(d, "pwd").out).toBe("/usr\n");
  });

  it("saves after a command that replaced the EXIT trap and ended normally", () => {
    const d = fresh();
    expect(run(d, "trap 'echo bye' EXIT; cd /etc").out).toBe("bye\n");
    expect(run(d, "pwd").out).toBe("/etc\n");
    // Documented limit: its own EXIT trap and then `exit` — that command's changes are lost.
    expect(run(d, "trap 'echo bye' EXIT; cd /; exit 0").out).toBe("bye\n");
    expect(run(d, "pwd").out).toBe("/etc\n");
  });

  it("is not disturbed by noclobber, nounset, xtrace or user functions shadowing builtins", () => {
    const d = fresh();
    run(d, "true");
    const r = run(d, "set -Cux; printf() { echo shadowed; }; cd() { echo nope; }; export() { :; }; builtin cd /tmp; builtin export Z=1");
    expect(r.code).toBe(0);
    expect(r.out).not.toMatch(/__mibyan/);
    expect(run(d, 'pwd; echo "$Z"').out).toBe("/tmp\n1\n");
  });

  it("reports a syntax error with status 2 and keeps the state", () => {
    const d = fresh();
    run(d, "cd /usr");
    // As with `bash -c`: commands are parsed one complete command at a time, so earlier lines run.
    const r = run(d, "echo before\ncd /; if then");
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/^before\n.*syntax error/s);
    expect(run(d, "pwd").out).toBe("/usr\n");
  });

  it("cwdOverride: runs there, the task does not move, exported variables still carry", () => {
    const d = fresh();
    run(d, "cd /usr");
    expect(run(d, "pwd; cd /; export O=1", { cwdOverride: "/etc" }).out).toBe("/etc\n");
    expect(run(d, 'pwd; echo "$O"').out).toBe("/usr\n1\n");
    const missing = run(d, "echo ran", { cwdOverride: "/no/such/dir" });
    expect(missing.code).toBe(1);
    expect(missing.out).toMatch(/cd: \/no\/such\/dir: No such file or directory/);
    expect(missing.out).not.toMatch(/ran/);
  });

  it("saveState false runs in the state without changing it", () => {
    const d = fresh();
    run(d, "cd /usr; export K=1");
    expect(run(d, "pwd; echo $K; cd /; export K=2", { saveState: false }).out).toBe("/usr\n1\n");
    expect(run(d, "pwd; echo $K").out).toBe("/usr\n1\n");
  });

  it("falls back to initialCwd, then HOME, then / when the directory is gone", () => {
    const d = fresh();
    const gone = path.join(d, "gone");
    mkdirSync(gone);
    run(d, `cd ${shellQuote(gone)}`);
    rmSync(gone, { recursive: true });
    expect(run(d, "pwd").out).toBe(`mibyan: working directory ${gone} is not available; running in ${scratch}\n${scratch}\n`);
    // The task stays at the fallback; no further notice.
    expect(run(d, "pwd").out).toBe(`${scratch}\n`);

    const d2 = fresh();
    const r = run(d2, "pwd", { initialCwd: "/no/such/start", env: { ...process.env, HOME: "/no/such/home" } });
    expect(r.out).toBe("mibyan: working directory /no/such/start is not available; running in /\n/\n");
  });

  it("handles a directory deleted by the command itself", () => {
    const d = fresh();
    const gone = path.join(d, "self");
    mkdirSync(gone);
    run(d, `cd ${shellQuote(gone)}`);
    expect(run(d, `rm -rf ${shellQuote(gone)}; echo done`).out).toBe("done\n");
    expect(run(d, "pwd").out).toMatch(new RegExp(`^mibyan: working directory .*self is not available; running in ${scratch}\\n`));
  });

  it("special and readonly variables do not break saving or restoring", () => {
    const d = fresh();
    const r = run(d, "export SHLVL=9 PWD=/x OLDPWD=/usr _=z BASH_ENV=/nonexistent SHELLOPTS BASHOPTS UID EUID PPID BASH_ARGV0=zz; echo ok");
    expect(r).toEqual({ out: "ok\n", code: 0 });
    const next = run(d, 'echo "$SHLVL $PWD"; cd -; echo "$UID"');
    expect(next.code).toBe(0);
    expect(next.out).toBe(`${process.env.SHLVL ? Number(process.env.SHLVL) + 1 : 1} ${scratch}\n/usr\n${process.getuid!()}\n`);
    expect(SHELL_STATE_SKIPPED_VARIABLES).toEqual(expect.arrayContaining(["PWD", "OLDPWD", "SHLVL", "_", "BASH_*", "SHELLOPTS"]));
  });

  it("keeps tasks apart: state written by one is never read by another", () => {
    const a = fresh();
    const b = fresh();
    run(a, "cd /usr; export ONLY_A=1");
    expect(run(b, 'pwd; echo "${ONLY_A-unset}"').out).toBe(`${scratch}\nunset\n`);
  });

  it("refuses a torn or mixed state file as a whole", () => {
    const d = fresh();
    run(d, "cd /usr; export T=1");
    const file = statePaths(d).stateFile;
    const full = readFileSync(file, "utf8");
    // A writer killed half-way.
    writeFileSync(file, full.slice(0, Math.floor(full.length / 2)));
    expect(run(d, 'pwd; echo "${T-unset}"').out).toBe(
      `mibyan: the saved shell state of this task could not be read; starting from the initial state\n${scratch}\nunset\n`,
    );
    // A new head over an older, longer state: the markers do not match.
    run(d, "cd /usr");
    const newer = readFileSync(file, "utf8");
    writeFileSync(file, newer.slice(0, 40) + full.slice(40));
    expect(run(d, "pwd").out).toMatch(/could not be read/);
  });

  it("overwrites in place: a shorter state after a longer one still restores exactly", () => {
    const d = fresh();
    run(d, `export BIG=${"x".repeat(20_000)}`);
    run(d, "unset BIG; cd /etc");
    expect(statSync(statePaths(d).stateFile).size).toBeGreaterThan(20_000);
    expect(run(d, 'pwd; echo "${BIG-unset}"').out).toBe("/etc\nunset\n");
  });

  it("saves what a command changed before a timeout killed it (SIGTERM)", async () => {
    const d = fresh();
    const script = wrapCommand(statePaths(d), { initialCwd: scratch });
    const child = spawn("bash", ["-c", script, "bash", "cd /usr; export KILLED=1; sleep 30"], { cwd: "/", detached: true, stdio: "ignore" });
    await new Promise((r) => setTimeout(r, 500));
    process.kill(-child.pid!, "SIGTERM");
    await new Promise((r) => child.on("exit", r));
    expect(run(d, 'pwd; echo "$KILLED"').out).toBe("/usr\n1\n");
  });
});

// ---------------------------------------------------------------------------
// LocalEnvironment
// ---------------------------------------------------------------------------

describe("LocalEnvironment", () => {
  it("keeps its state in a private directory under the OS temp dir, removed on close", async () => {
    const env = await LocalEnvironment.create("perm task/../x", { initialCwd: scratch });
    expect(path.dirname(env.stateDir)).toBe(tmpdir());
    expect(path.basename(env.stateDir)).toMatch(/^mibyan-env-perm_task_.._x-/);
    expect(statSync(env.stateDir).mode & 0o777).toBe(0o700);
    expect(env.isolation).toEqual({ name: "local" });
    expect(env.backend).toBe("local");
    await env.exec("cd /usr", opts());
    expect(readdirSync(env.stateDir).sort()).toEqual(["cwd", "state.sh"]);
    await env.exec("true", opts());
    expect(readdirSync(env.stateDir).sort()).toEqual(["cwd", "state.sh", "state.sh.names"]);
    expect(env.cwd).toBe("/usr");
    await env.close();
    expect(existsSync(env.stateDir)).toBe(false);
    expect(env.closed).toBe(true);
    await expect(env.exec("true", opts())).rejects.toThrow(/closed/);
  });

  it("honours tempDir and env", async () => {
    const parent = mkdtempSync(path.join(scratch, "parent-"));
    const env = await LocalEnvironment.create("t", { initialCwd: scratch, tempDir: parent, env: () => ({ PATH: process.env.PATH, ONLY: "this" }) });
    expect(path.dirname(env.stateDir)).toBe(parent);
    const r = await env.exec('echo "$ONLY ${HOME-nohome}"', opts());
    expect(r.output).toBe("this nohome\n");
    await env.close();
  });

  it("runs many commands at once without piling listeners on a shared signal", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on("warning", onWarning);
    const env = await LocalEnvironment.create("many", { initialCwd: scratch });
    try {
      const runs = await Promise.all(Array.from({ length: 15 }, (_, i) => env.exec(`echo ${i}`, { ...opts(), saveState: false })));
      expect(runs.map((r) => r.output)).toEqual(Array.from({ length: 15 }, (_, i) => `${i}\n`));
      await new Promise((r) => setImmediate(r));
      expect(warnings).not.toContain("MaxListenersExceededWarning");
    } finally {
      process.off("warning", onWarning);
      await env.close();
    }
  });

  it("keeps what bash prints on stderr before the script merges it (no launcher in between)", async () => {
    // bash warns about an unknown locale while it starts, before the script's `exec 2>&1`.
    const env = await LocalEnvironment.create("t", { initialCwd: scratch, env: () => ({ PATH: process.env.PATH, LC_ALL: "xx_YY.nonexistent" }) });
    const r = await env.exec("echo out; echo err >&2", opts());
    expect(r.output).toMatch(/setlocale: LC_ALL: cannot change locale/);
    expect(r.output).toMatch(/out\nerr\n$/);
    // Printed first, so shown first, although it came on a pipe of its own.
    expect(r.output.indexOf("setlocale")).toBeLessThan(r.output.indexOf("out\n"));
    expect(r.exitCode).toBe(0);
    await env.close();
  });

  it("starts in config terminal.cwd (with ~ expanded), else the current directory", async () => {
    expect(defaultInitialCwd()).toBe(process.cwd());
    const fakeHome = mkdtempSync(path.join(scratch, "home-"));
    mkdirSync(path.join(fakeHome, "proj"));
    const savedUserHome = process.env.HOME;
    process.env.HOME = fakeHome;
    try {
      writeConfig("terminal:\n  cwd: ~/proj\n");
      expect(defaultInitialCwd()).toBe(path.join(fakeHome, "proj"));
      const env = await localFactory.create("from-config");
      expect(env.cwd).toBe(path.join(fakeHome, "proj"));
      expect((await env.exec("pwd", opts())).output).toBe(`${path.join(fakeHome, "proj")}\n`);
      await env.close();
    } finally {
      process.env.HOME = savedUserHome;
      writeConfig("");
    }
  });

  it("disposeSync kills running commands and removes the state at once", async () => {
    const env = await LocalEnvironment.create("dispose", { initialCwd: scratch });
    const pending = env.exec("echo PID=$$; sleep 30", opts());
    await new Promise((r) => setTimeout(r, 300));
    env.disposeSync();
    expect(existsSync(env.stateDir)).toBe(false);
    const r = await pending;
    expect(r.exitCode).toBe(137);
    await env.close();
  });

  it("close ends the jobs earlier commands left running", async () => {
    const env = await LocalEnvironment.create("leftovers", { initialCwd: scratch });
    const r = await env.exec("sleep 300 >/dev/null 2>&1 & echo $!; trap '' TERM; (trap '' TERM; sleep 301) >/dev/null 2>&1 & echo $!", opts());
    const pids = r.output.trim().split("\n").map(Number);
    expect(pids).toHaveLength(2);
    for (const pid of pids) expect(() => process.kill(pid, 0)).not.toThrow();
    const started = Date.now();
    await env.close();
    expect(Date.now() - started).toBeLessThan(3_000);
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
        return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
      } catch {
        return false;
      }
    };
    await vi.waitFor(() => expect(pids.filter(alive)).toEqual([]), { timeout: 2_000, interval: 20 });
  });

  it("has a factory that is available on POSIX", () => {
    expect(localFactory.backend).toBe("local");
    expect(localFactory.unavailableReason()).toBeUndefined();
    expect(createLocalFactory({ initialCwd: "/" }).backend).toBe("local");
  });
});

// ---------------------------------------------------------------------------
// EnvironmentManager
// ---------------------------------------------------------------------------

/** A factory counting creations, around the real local backend. */
function countingFactory(backend = "local", delayMs = 0) {
  const created: Environment[] = [];
  const factory: EnvironmentFactory = {
    backend,
    unavailableReason: () => undefined,
    create: async (taskId) => {
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      const env = await LocalEnvironment.create(taskId, { initialCwd: scratch });
      created.push(env);
      return env;
    },
  };
  return { factory, created };
}

describe("EnvironmentManager", () => {
  const managers: EnvironmentManager[] = [];
  const manager = (options: ConstructorParameters<typeof EnvironmentManager>[0] = {}) => {
    const m = new EnvironmentManager({ idleTimeoutMs: 0, closeOnExit: false, ...options });
    managers.push(m);
    return m;
  };
  afterEach(async () => {
    await Promise.allSettled(managers.splice(0).map((m) => m.closeAll()));
  });

  it("gives the same environment to concurrent gets of one task, created once", async () => {
    const { factory, created } = countingFactory("local", 50);
    const m = manager({ factories: [factory] });
    const [a, b, c] = await Promise.all([m.get("t1"), m.get("t1"), m.get("t1")]);
    expect(a).toBe(b);
    expect(b).toBe(c);
    expect(await m.get("t1")).toBe(a);
    expect(created).toHaveLength(1);
    expect(a).toBeInstanceOf(ManagedEnvironment);
    expect(a.unwrap()).toBe(created[0]);
  });

  it("gives different tasks different environments", async () => {
    const { factory, created } = countingFactory();
    const m = manager({ factories: [factory] });
    const [a, b] = await Promise.all([m.get("a"), m.get("b")]);
    expect(a).not.toBe(b);
    expect(created).toHaveLength(2);
    await a.exec("cd /usr", opts());
    expect((await b.exec("pwd", opts())).output).toBe(`${scratch}\n`);
    expect(m.list().map((e) => e.taskId).sort()).toEqual(["a", "b"]);
  });

  it("keys environments by (task, backend); setBackend picks the task's backend", async () => {
    const local = countingFactory("local");
    const other = countingFactory("other");
    // A registered custom backend is named in the type parameter, so setBackend accepts it.
    const m = manager({ factories: [local.factory, other.factory] }) as EnvironmentManager<"other">;
    expect(m.backendFor("t")).toBe("local");
    const a = await m.get("t");
    m.setBackend("t", "other");
    expect(m.backendFor("t")).toBe("other");
    const b = await m.get("t");
    expect(b).not.toBe(a);
    expect(other.created).toHaveLength(1);
    expect(await m.get("t", "local")).toBe(a);
    expect(m.peek("t")).toBe(b);
    m.setBackend("t", undefined);
    expect(m.peek("t")).toBe(a);
    expect(m.size).toBe(2);
  });

  it("takes the default backend from config terminal.backend", async () => {
    const m = new EnvironmentManager({ closeOnExit: false });
    managers.push(m);
    expect(m.backendFor("x")).toBe("local");
    writeConfig("terminal:\n  backend: nowhere\n");
    try {
      expect(m.backendFor("x")).toBe("nowhere");
      await expect(m.get("x")).rejects.toThrow(/Unknown terminal backend "nowhere". Known backends: local, docker, ssh/);
      expect(m.size).toBe(0);
    } finally {
      writeConfig("");
    }
  });

  it("reports an unavailable backend and retries a failed creation", async () => {
    let reason: string | undefined = "no engine";
    let fail = true;
    const factory: EnvironmentFactory = {
      backend: "flaky",
      unavailableReason: () => reason,
      create: async (taskId) => {
        if (fail) throw new Error("boom");
        return LocalEnvironment.create(taskId, { initialCwd: scratch });
      },
    };
    const m = manager({ factories: [factory] });
    await expect(m.get("t", "flaky")).rejects.toBeInstanceOf(EnvironmentUnavailableError);
    await expect(m.get("t", "flaky")).rejects.toThrow('The "flaky" terminal backend is not available: no engine');
    reason = undefined;
    await expect(m.get("t", "flaky")).rejects.toThrow("boom");
    fail = false;
    const env = await m.get("t", "flaky");
    expect((await env.exec("echo ok", opts())).output).toBe("ok\n");
  });

  it("reports a backend whose options do not read as unavailable, with the reason", async () => {
    const factory: EnvironmentFactory = {
      backend: "misconfigured",
      unavailableReason: () => {
        throw new Error("terminal.misconfigured.port must be a positive number");
      },
      create: async () => {
        throw new Error("not reached");
      },
    };
    const m = manager({ factories: [factory] });
    const err = await m.get("t", "misconfigured").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EnvironmentUnavailableError);
    expect((err as Error).message).toBe(
      'The "misconfigured" terminal backend is not available: its configuration is invalid: terminal.misconfigured.port must be a positive number',
    );
  });

  it("loads built-in backends lazily from BACKENDS", async () => {
    expect(Object.keys(BACKENDS)).toEqual(expect.arrayContaining(["local", "docker", "ssh", "singularity", "modal", "daytona", "vercel_sandbox"]));
    expect(await BACKENDS.local!()).toBe(localFactory);
    const loaded: string[] = [];
    const m = manager({
      backends: {
        local: async () => {
          loaded.push("local");
          return localFactory;
        },
      },
    });
    expect(loaded).toEqual([]);
    await m.get("t");
    await m.get("u");
    expect(loaded).toEqual(["local"]);
  });

  it("closes an idle environment after the idle time, never while it runs a command", async () => {
    const { factory, created } = countingFactory();
    const idleMs = 300;
    const m = manager({ factories: [factory], idleTimeoutMs: idleMs });
    const env = await m.get("idle");
    const inner = created[0] as LocalEnvironment;
    let closedAt = 0;
    const close = inner.close.bind(inner);
    inner.close = () => {
      closedAt ||= Date.now();
      return close();
    };
    // A command longer than the idle time keeps it open (the clock starts when it ends).
    expect((await env.exec("sleep 0.6; echo done", opts())).output).toBe("done\n");
    expect(inner.closed).toBe(false);
    // Use resets the clock.
    const touched = Date.now();
    expect(await m.get("idle")).toBe(env);
    await vi.waitFor(() => expect(existsSync(inner.stateDir)).toBe(false), { timeout: 5_000, interval: 20 });
    expect(inner.closed).toBe(true);
    expect(closedAt - touched).toBeGreaterThanOrEqual(idleMs - 5);
    expect(m.size).toBe(0);
    // The next use starts a new one.
    const again = await m.get("idle");
    expect(again).not.toBe(env);
    expect(created).toHaveLength(2);
  });

  it("reads the idle time from config terminal.idle_timeout_seconds", async () => {
    writeConfig("terminal:\n  idle_timeout_seconds: 0.2\n");
    try {
      const { factory, created } = countingFactory();
      const m = new EnvironmentManager({ factories: [factory], closeOnExit: false });
      managers.push(m);
      await m.get("cfg");
      await vi.waitFor(() => expect((created[0] as LocalEnvironment).closed).toBe(true), { timeout: 2_000, interval: 20 });
    } finally {
      writeConfig("");
    }
  });

  it("close(taskId), ManagedEnvironment.close and closeAll close and forget", async () => {
    const { factory, created } = countingFactory();
    const m = manager({ factories: [factory] });
    const [a, b, c] = await Promise.all([m.get("a"), m.get("b"), m.get("c")]);
    await m.close("a");
    expect((a.unwrap() as LocalEnvironment).closed).toBe(true);
    expect((b.unwrap() as LocalEnvironment).closed).toBe(false);
    expect(m.list().map((e) => e.taskId).sort()).toEqual(["b", "c"]);
    await b.close();
    await b.close();
    expect(m.list().map((e) => e.taskId)).toEqual(["c"]);
    const running = c.exec("sleep 30", opts());
    await new Promise((r) => setTimeout(r, 200));
    await m.closeAll();
    expect((await running).exitCode).toBe(130);
    expect(m.size).toBe(0);
    for (const env of created) expect(existsSync((env as LocalEnvironment).stateDir)).toBe(false);
    await expect(a.exec("true", opts())).rejects.toThrow(/closed/);
  });

  it("closes an environment whose creation was under way when closeAll came", async () => {
    const { factory, created } = countingFactory("local", 200);
    const m = manager({ factories: [factory] });
    const pending = m.get("slow");
    await new Promise((r) => setTimeout(r, 50));
    await m.closeAll();
    await expect(pending).rejects.toThrow(/closed while it was starting/);
    expect(created).toHaveLength(1);
    expect((created[0] as LocalEnvironment).closed).toBe(true);
  });

  it("installs exit handlers only while it holds environments", async () => {
    const before = process.listenerCount("exit");
    const beforeSig = process.listenerCount("SIGTERM");
    const m = new EnvironmentManager({ idleTimeoutMs: 0, defaultBackend: "local" });
    managers.push(m);
    await m.get("hooks");
    expect(process.listenerCount("exit")).toBe(before + 1);
    expect(process.listenerCount("SIGTERM")).toBe(beforeSig + 1);
    expect(process.listenerCount("beforeExit")).toBeGreaterThan(0);
    await m.closeAll();
    expect(process.listenerCount("exit")).toBe(before);
    expect(process.listenerCount("SIGTERM")).toBe(beforeSig);
  });

  it("has one process-wide manager", () => {
    expect(getEnvironmentManager()).toBe(getEnvironmentManager());
  });
});

// ---------------------------------------------------------------------------
// Cleanup at process exit (in a child process, against the built dist/)
// ---------------------------------------------------------------------------

const DIST_MANAGER = path.join(ROOT, "dist", "environments", "manager.js");
const distFresh =
  existsSync(DIST_MANAGER) && statSync(DIST_MANAGER).mtimeMs >= statSync(path.join(ROOT, "src", "environments", "manager.ts")).mtimeMs;

describe.skipIf(!distFresh)("cleanup at process exit (needs `npm run build`)", () => {
  /** Starts a child that opens an environment, runs `sleep` in it and reports the state dir; `ending` says how it ends. */
  async function child(ending: string): Promise<{ stateDir: string; code: number | null; signal: NodeJS.Signals | null }> {
    const code = `
      const { getEnvironmentManager } = await import(${JSON.stringify(DIST_MANAGER)});
      const m = getEnvironmentManager();
      const env = await m.get("exit-test", "local");
      await env.exec("cd /", { timeoutMs: 10000, maxOutputChars: 1000 });
      env.exec("echo PID=$$ >&2; sleep 30", { timeoutMs: 60000, maxOutputChars: 1000 });
      await new Promise((r) => setTimeout(r, 300));
      console.log(JSON.stringify({ stateDir: env.unwrap().stateDir }));
      ${ending}
    `;
    const proc = spawn(process.execPath, ["--input-type=module", "-e", code], {
      cwd: scratch,
      env: { ...process.env, MIBYAN_HOME: home },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    proc.stdout.on("data", (c: Buffer) => (out += c.toString()));
    const [exitCode, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((r) => proc.on("exit", (c, s) => r([c, s])));
    // The last state directory the child reported.
    const reported = out.split("\n").filter((line) => line.startsWith("{"));
    const { stateDir } = JSON.parse(reported[reported.length - 1]!) as { stateDir: string };
    return { stateDir, code: exitCode, signal };
  }

  it("process.exit(): state removed", async () => {
    const r = await child("process.exit(3);");
    expect(r.code).toBe(3);
    expect(existsSync(r.stateDir)).toBe(false);
  });

  it("SIGTERM with no other handler: state removed, the process still dies of SIGTERM", async () => {
    const r = await child('process.kill(process.pid, "SIGTERM"); await new Promise((r) => setTimeout(r, 5000));');
    expect(r.signal).toBe("SIGTERM");
    expect(existsSync(r.stateDir)).toBe(false);
  });

  it("SIGINT with the program's own handler: it decides, exit cleans up", async () => {
    const r = await child('process.on("SIGINT", () => { console.log("own handler"); setTimeout(() => process.exit(0), 50); }); process.kill(process.pid, "SIGINT");');
    expect(r.code).toBe(0);
    expect(existsSync(r.stateDir)).toBe(false);
  });

  it("natural end (beforeExit) closes it", async () => {
    // The running sleep keeps the loop alive only through its pipe, so end it first.
    const r = await child("await m.closeAll(); const again = await m.get('exit-test', 'local'); console.log(JSON.stringify({ stateDir: again.unwrap().stateDir }));");
    expect(r.code).toBe(0);
    expect(existsSync(r.stateDir)).toBe(false);
  });
});

// ---------------------------------------------------------------------------
// The terminal tool through the manager
// ---------------------------------------------------------------------------

describe("terminal tool with per-task environments", () => {
  interface Parsed {
    output: string;
    exit_code: number;
    error: string | null;
    status?: string;
  }
  const seen: Array<{ command: string; backend: unknown }> = [];
  const gate = () => ({
    check: async (command: string, o: { backend: string | BackendInfo }) => {
      seen.push({ command, backend: o.backend });
      return { allowed: true, reason: "ok", by: "safe" as const, matches: [] };
    },
  });
  let m: EnvironmentManager<"fake_sandbox">;
  let handler: ReturnType<typeof createTerminalHandler>;
  beforeAll(() => {
    m = new EnvironmentManager({ factories: [createLocalFactory({ initialCwd: scratch })], defaultBackend: "local", idleTimeoutMs: 0, closeOnExit: false });
    handler = createTerminalHandler({ gate: gate as never, environments: m });
  });
  afterAll(() => m.closeAll());

  const ctx = (taskId?: string): ToolContext => ({ signal: new AbortController().signal, toolName: "terminal", taskId });
  const call = async (args: Record<string, unknown>, taskId?: string) => JSON.parse(await handler(args, ctx(taskId))) as Parsed;

  it("carries cd and exports within a task, never across tasks; no task means \"default\"", async () => {
    expect(await call({ command: "cd /usr && export T=one" }, "t1")).toEqual({ output: "", exit_code: 0, error: null });
    expect(await call({ command: 'pwd; echo "$T"' }, "t1")).toEqual({ output: "/usr\none\n", exit_code: 0, error: null });
    expect((await call({ command: 'pwd; echo "${T-unset}"' }, "t2")).output).toBe(`${scratch}\nunset\n`);
    await call({ command: "cd /etc" });
    expect((await call({ command: "pwd" })).output).toBe("/etc\n");
    expect(m.peek("default")?.cwd).toBe("/etc");
    expect(m.peek("t1")?.cwd).toBe("/usr");
  });

  it("workdir runs one command elsewhere without moving the task", async () => {
    await call({ command: "cd /usr" }, "w");
    expect((await call({ command: "pwd", workdir: "/etc" }, "w")).output).toBe("/etc\n");
    expect((await call({ command: "pwd" }, "w")).output).toBe("/usr\n");
    expect((await call({ command: "pwd", workdir: "/no/such" }, "w")).error).toBe("workdir does not exist: /no/such");
  });

  it("tells the gate the environment's isolation", async () => {
    seen.length = 0;
    await call({ command: "echo gated" }, "g");
    expect(seen).toEqual([{ command: "echo gated", backend: { name: "local" } }]);
  });

  it("uses the isolation of whatever backend the task runs on", async () => {
    const sandbox: EnvironmentFactory = {
      backend: "fake_sandbox",
      unavailableReason: () => undefined,
      create: async (taskId) => {
        const inner = await LocalEnvironment.create(taskId, { initialCwd: scratch });
        const env: Environment = {
          backend: "fake_sandbox",
          taskId,
          isolation: { name: "fake_sandbox", hostMounts: false },
          get cwd() {
            return inner.cwd;
          },
          exec: (c, o) => inner.exec(c, o),
          close: () => inner.close(),
        };
        return env;
      },
    };
    m.registerBackend(sandbox);
    m.setBackend("sb", "fake_sandbox");
    seen.length = 0;
    // No local existence check for a workdir inside another environment: the wrapper's cd reports it.
    const r = await call({ command: "echo inside", workdir: "/no/such/inside" }, "sb");
    expect(r.exit_code).toBe(1);
    expect(r.output).toMatch(/No such file or directory/);
    expect(seen[0]?.backend).toEqual({ name: "fake_sandbox", hostMounts: false });
  });

  it("returns an error result when the environment cannot be created", async () => {
    // setBackend refuses an unknown name at once; a default backend naming nothing fails when a command needs it.
    expect(() => m.setBackend("broken", "imaginary" as never)).toThrow(/^Unknown terminal backend "imaginary"/);
    const broken = new EnvironmentManager({ defaultBackend: "imaginary", idleTimeoutMs: 0, closeOnExit: false });
    const brokenHandler = createTerminalHandler({ gate: gate as never, environments: broken });
    const r = JSON.parse(await brokenHandler({ command: "true" }, ctx("broken"))) as Parsed;
    expect(r.exit_code).toBe(-1);
    expect(r.error).toMatch(/^Could not start the terminal environment: Unknown terminal backend "imaginary"/);
  });

  it("keeps the legacy runner option working (stateless)", async () => {
    const runs: string[] = [];
    const legacy = createTerminalHandler({
      gate: gate as never,
      runner: async (command, o): Promise<ExecResult> => {
        runs.push(`${command}@${o.cwd ?? "-"}`);
        return { output: "x\n", exitCode: 0, timedOut: false, aborted: false, truncated: false, totalChars: 2, durationMs: 1 };
      },
    });
    expect(JSON.parse(await legacy({ command: "anything", workdir: "/tmp" }, ctx()))).toEqual({ output: "x\n", exit_code: 0, error: null });
    expect(runs).toEqual(["anything@/tmp"]);
  });

  it("no longer tells the model that cd does not carry over", () => {
    expect(TERMINAL_SCHEMA.description).not.toMatch(/do not carry over to the next call/);
    expect(TERMINAL_SCHEMA.description).toMatch(/carries over/);
  });
});
