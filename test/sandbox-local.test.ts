/**
 * The local backend's OS sandbox (bubblewrap), played for real: commands that
 * try to write outside the workspace, reach a server this test starts on
 * 127.0.0.1, delete what the gate let through, or rewrite the profile home;
 * state, PTY, timeouts and background processes inside it; and a sandbox that
 * is configured but cannot work, which must refuse rather than run the
 * command unsandboxed.
 *
 * The scratch directories live under /var/tmp, not /tmp: inside the sandbox
 * /tmp is private to the task, so a victim under the host's /tmp would not
 * even be visible (that case has a test of its own).
 */

import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

import { ApprovalGate } from "../src/approval/flow/gate.js";
import { createLocalFactory, LocalEnvironment, localSandboxProblem, type LocalEnvironmentOptions } from "../src/environments/local.js";
import { EnvironmentManager } from "../src/environments/manager.js";
import { ProcessRegistry } from "../src/process/process-registry.js";
import { checkBubblewrap } from "../src/sandbox/bubblewrap.js";
import { SandboxConfigError, SandboxUnavailableError } from "../src/sandbox/errors.js";
import type { SandboxPolicy } from "../src/sandbox/policy.js";
import { createTerminalHandler } from "../src/tools/terminal.js";
import { startCountingServer, type CountingServer } from "./support/proc.js";
import { createMemoryLogger } from "../src/util/logger.js";

vi.mock("../src/registry/singleton.js", () => ({ registry: { register: () => {} } }));

const usable = checkBubblewrap().problem === undefined;
const skipReason = checkBubblewrap().problem;

const scratch = realpathSync(mkdtempSync("/var/tmp/mibyan-sandbox-test-"));
const WRITE: SandboxPolicy = { mode: "workspace-write", network: false, writableRoots: [] };
const READ_ONLY: SandboxPolicy = { mode: "read-only", network: false, writableRoots: [] };
const RUN = { timeoutMs: 20_000, maxOutputChars: 20_000 };

const environments: LocalEnvironment[] = [];
const managers: EnvironmentManager[] = [];
const registries: ProcessRegistry[] = [];

afterAll(async () => {
  await Promise.all(registries.map((r) => r.dispose()));
  await Promise.all(managers.map((m) => m.closeAll()));
  await Promise.all(environments.map((e) => e.close()));
  rmSync(scratch, { recursive: true, force: true });
});

/** A fresh directory under the scratch root. */
function dir(name: string): string {
  const made = mkdtempSync(path.join(scratch, `${name}-`));
  return made;
}

async function sandboxed(policy: SandboxPolicy, options: LocalEnvironmentOptions = {}): Promise<{ env: LocalEnvironment; workspace: string }> {
  const workspace = options.initialCwd ?? dir("ws");
  const env = await LocalEnvironment.create("sbx", { initialCwd: workspace, sandbox: policy, profileHome: path.join(scratch, "profile"), ...options });
  environments.push(env);
  return { env, workspace };
}

/** A victim directory outside the workspace, with a file in it. */
function victim(): { dir: string; file: string } {
  const d = dir("victim");
  const file = path.join(d, "precious.txt");
  writeFileSync(file, "keep me\n");
  return { dir: d, file };
}

describe.skipIf(!usable)(`the local sandbox (bubblewrap)${skipReason ? ` — skipped: ${skipReason}` : ""}`, () => {
  let server: CountingServer;

  beforeAll(async () => {
    server = await startCountingServer();
  });
  afterAll(() => server.close());

  it("reports itself active", async () => {
    const { env } = await sandboxed(WRITE);
    expect(env.sandbox).toMatchObject({ mode: "workspace-write", network: false, active: true });
    expect(env.sandbox?.version).toMatch(/bubblewrap/);
    expect(env.isolation).toEqual({ name: "local" });
  });

  it("workspace-write: writes in the workspace land on the host; writes outside it fail", async () => {
    const { env, workspace } = await sandboxed(WRITE);
    const target = victim();
    const result = await env.exec(`echo made > inside.txt && echo "owned" > ${target.dir}/new.txt; echo evil >> ${target.file}; touch /etc/mibyan-sandbox-probe; echo done`, RUN);
    expect(readFileSync(path.join(workspace, "inside.txt"), "utf8")).toBe("made\n");
    expect(result.output).toContain("Read-only file system");
    expect(result.output).toContain("done");
    expect(existsSync(path.join(target.dir, "new.txt"))).toBe(false);
    expect(readFileSync(target.file, "utf8")).toBe("keep me\n");
    expect(existsSync("/etc/mibyan-sandbox-probe")).toBe(false);
  });

  it("the command cannot lift the read-only root, even as root (no capabilities, user namespace)", async () => {
    const { env } = await sandboxed(WRITE);
    const target = victim();
    const result = await env.exec(
      `mount -o remount,rw / 2>&1; grep CapEff /proc/self/status; echo x > ${target.file} 2>&1; echo end`,
      RUN,
    );
    expect(result.output).toMatch(/CapEff:\s+0+\n/);
    expect(readFileSync(target.file, "utf8")).toBe("keep me\n");
  });

  it("a delete the gate lets through (approvals off) cannot touch anything outside the workspace", async () => {
    const workspace = dir("ws-gate");
    writeFileSync(path.join(workspace, "build.log"), "old\n");
    const target = victim();
    // The host's own /tmp: invisible inside (the sandbox's /tmp is private), so untouched as well.
    const hostTmpVictim = mkdtempSync(path.join("/tmp", "mibyan-sandbox-victim-"));
    writeFileSync(path.join(hostTmpVictim, "keep.txt"), "keep\n");
    const manager = new EnvironmentManager({
      factories: [createLocalFactory({ initialCwd: workspace, sandbox: WRITE, profileHome: path.join(scratch, "profile") })],
      defaultBackend: "local",
      closeOnExit: false,
    });
    managers.push(manager);
    const gate = new ApprovalGate({ settings: { mode: "off" }, home: path.join(scratch, "gate-home"), logger: createMemoryLogger() });
    const terminal = createTerminalHandler({ gate: () => gate, environments: manager, redactOutput: false });
    const ctx = { taskId: "gate-off", toolName: "terminal", signal: new AbortController().signal };
    try {
      const raw = await terminal({ command: `rm -rf -- ${target.dir} ${hostTmpVictim} ./build.log; find ${target.dir} -delete; echo exit=$?` }, ctx);
      const result = JSON.parse(raw as string) as { output: string; exit_code: number; status?: string };
      // The gate did let it through (approvals off): the sandbox is what stopped it.
      expect(result.status).not.toBe("blocked");
      expect(result.output).toContain("Read-only file system");
      expect(readFileSync(target.file, "utf8")).toBe("keep me\n");
      expect(readFileSync(path.join(hostTmpVictim, "keep.txt"), "utf8")).toBe("keep\n");
      // Inside the workspace the delete does what it says.
      expect(existsSync(path.join(workspace, "build.log"))).toBe(false);
    } finally {
      rmSync(hostTmpVictim, { recursive: true, force: true });
    }
  });

  it("network off: a server on the host's 127.0.0.1 cannot be reached; network on: it can", async () => {
    const probe = `exec 3<>/dev/tcp/127.0.0.1/${server.port} && printf 'GET / HTTP/1.0\\r\\nHost: x\\r\\n\\r\\n' >&3 && cat <&3; echo "rc=$?"`;
    const before = server.hits;
    const { env: offline } = await sandboxed(WRITE);
    const off = await offline.exec(probe, RUN);
    expect(off.output).not.toContain("pong-from-host");
    expect(off.output).toMatch(/Connection refused|Network is unreachable|Cannot assign/);
    expect(server.hits).toBe(before);

    const { env: online } = await sandboxed({ ...WRITE, network: true });
    const on = await online.exec(probe, RUN);
    expect(on.output).toContain("pong-from-host");
    expect(server.hits).toBe(before + 1);
  });

  it("network off hides /run (local daemons' sockets)", async () => {
    const { env } = await sandboxed(WRITE);
    const result = await env.exec("ls -A /run | wc -l", RUN);
    expect(result.output.trim()).toBe("0");
  });

  it("read-only: even the workspace is read-only; the private /tmp and the task's state are writable", async () => {
    const { env, workspace } = await sandboxed(READ_ONLY);
    const result = await env.exec("echo x > in-workspace.txt; echo tmp > /tmp/scratch.txt && cat /tmp/scratch.txt; export KEPT=yes; mkdir -p /tmp/d && cd /tmp/d", RUN);
    expect(result.output).toContain("Read-only file system");
    expect(result.output).toContain("tmp\n");
    expect(existsSync(path.join(workspace, "in-workspace.txt"))).toBe(false);
    const next = await env.exec('pwd; echo "$KEPT"; cat /tmp/scratch.txt', RUN);
    expect(next.output).toBe("/tmp/d\nyes\ntmp\n");
    expect(env.cwd).toBe("/tmp/d");
  });

  it("/tmp is private to the task: another task's and the host's temporary files are out of sight", async () => {
    const hostFile = path.join(tmpdir(), `mibyan-sandbox-host-${process.pid}.txt`);
    writeFileSync(hostFile, "host\n");
    try {
      const { env: a } = await sandboxed(WRITE);
      const { env: b } = await sandboxed(WRITE);
      await a.exec("echo from-a > /tmp/shared-name.txt", RUN);
      const seen = await b.exec(`cat /tmp/shared-name.txt; ls ${hostFile}; echo "tmpdir=$TMPDIR"`, RUN);
      expect(seen.output).toContain("No such file or directory");
      expect(seen.output).not.toContain("from-a");
      expect(seen.output).toContain("tmpdir=/tmp");
      expect((await a.exec("cat /tmp/shared-name.txt", RUN)).output).toBe("from-a\n");
    } finally {
      rmSync(hostFile, { force: true });
    }
  });

  it("extra writable roots are writable; the per-task state (cwd, exports) carries over", async () => {
    const extra = dir("extra");
    const { env, workspace } = await sandboxed({ ...WRITE, writableRoots: [extra] });
    await env.exec(`echo cached > ${extra}/cache.txt; mkdir -p sub && cd sub && export STEP=1`, RUN);
    expect(readFileSync(path.join(extra, "cache.txt"), "utf8")).toBe("cached\n");
    const next = await env.exec('pwd; echo "$STEP"', RUN);
    expect(next.output).toBe(`${workspace}/sub\n1\n`);
  });

  it("the profile home stays read-only inside the workspace, and cannot be renamed away", async () => {
    const workspace = dir("ws-home");
    const profile = path.join(workspace, ".mibyan");
    mkdirSync(profile);
    writeFileSync(path.join(profile, "config.yaml"), "approvals:\n  mode: manual\n");
    const { env } = await sandboxed(WRITE, { initialCwd: workspace, profileHome: profile });
    const result = await env.exec(
      "printf 'approvals:\\n  mode: off\\n' > .mibyan/config.yaml; mv .mibyan .gone; mkdir -p .mibyan/processes; rm -rf .mibyan; echo rest > other.txt",
      RUN,
    );
    expect(result.output).toContain("Read-only file system");
    expect(readFileSync(path.join(profile, "config.yaml"), "utf8")).toBe("approvals:\n  mode: manual\n");
    expect(existsSync(path.join(workspace, ".gone"))).toBe(false);
    expect(readFileSync(path.join(workspace, "other.txt"), "utf8")).toBe("rest\n");
  });

  it("a nested profile home (~/.config/mibyan) is protected from its top entry down, so renaming a parent does not free it", async () => {
    const workspace = dir("ws-nested");
    const profile = path.join(workspace, ".config", "mibyan");
    const { env } = await sandboxed(WRITE, { initialCwd: workspace, profileHome: profile });
    expect(existsSync(profile)).toBe(true);
    await env.exec("mv .config .config-old; mkdir -p .config/mibyan && echo 'approvals: {mode: off}' > .config/mibyan/config.yaml", RUN);
    expect(existsSync(path.join(profile, "config.yaml"))).toBe(false);
    expect(existsSync(path.join(workspace, ".config-old"))).toBe(false);
  });

  it("the state directory cannot be turned into a way out: swapping the private /tmp's source for a symlink does not mount the target", async () => {
    // State directories outside /tmp (TMPDIR=/var/tmp, say), so they are not hidden under the private /tmp.
    const { env } = await sandboxed(WRITE, { tempDir: dir("state-parent") });
    const target = victim();
    // The shell's own state directory is writable inside; the attacker tries to make the
    // next command's /tmp a symlink to the victim, hoping bwrap follows it on the host.
    const stateDirs = [env.stateDir, path.join(env.stateDir, "shell")];
    const swap = stateDirs.map((d) => `rm -rf ${d}/tmp 2>/dev/null; ln -s ${target.dir} ${d}/tmp 2>/dev/null`).join("; ");
    await env.exec(`${swap}; true`, RUN);
    const next = await env.exec("echo pwned > /tmp/precious.txt; echo pwned > /tmp/new.txt; echo end", RUN);
    expect(readFileSync(target.file, "utf8")).toBe("keep me\n");
    expect(existsSync(path.join(target.dir, "new.txt"))).toBe(false);
    // Commands still run (or are refused): never with the victim as /tmp.
    expect(next.output === "end\n" || next.exitCode !== 0).toBe(true);
  });

  it("nested writable directories: renaming a parent and planting a symlink does not get a victim mounted next time", async () => {
    // bwrap resolves each bind's source on the host at every command: a writable root inside the
    // workspace, or a workspace inside a writable root, must not be a source the command can swap.
    const workspace = dir("ws-nested-root");
    mkdirSync(path.join(workspace, "sub", "cache"), { recursive: true });
    const outerRoot = dir("outer-root");
    const innerWorkspace = path.join(outerRoot, "x", "ws");
    mkdirSync(innerWorkspace, { recursive: true });
    const target = victim();

    const { env: a } = await sandboxed({ ...WRITE, writableRoots: [path.join(workspace, "sub", "cache")] }, { initialCwd: workspace });
    await a.exec(`mv sub sub-old && mkdir -p sub && ln -s ${target.dir} sub/cache; echo swapped`, RUN);
    await a.exec("echo pwned > sub/cache/new.txt; echo pwned > sub/cache/precious.txt; true", RUN);
    // And the task keeps working (bwrap 0.8 refuses a symlinked mount point, so mounting a swapped source would end every later command).
    expect((await a.exec("echo alive", RUN)).output).toBe("alive\n");

    const { env: b } = await sandboxed({ ...WRITE, writableRoots: [outerRoot] }, { initialCwd: innerWorkspace });
    await b.exec(`mv ${outerRoot}/x ${outerRoot}/x-old && mkdir -p ${outerRoot}/x && ln -s ${target.dir} ${innerWorkspace}; echo swapped`, RUN);
    await b.exec(`echo pwned > ${innerWorkspace}/new.txt; true`, RUN);
    expect((await b.exec("echo alive", RUN)).output).toContain("alive\n");

    expect(readFileSync(target.file, "utf8")).toBe("keep me\n");
    expect(existsSync(path.join(target.dir, "new.txt"))).toBe(false);
  });

  it("a state directory inside the workspace (TMPDIR there) stays read-only to the command, so it cannot be swapped", async () => {
    const workspace = dir("ws-with-tmp");
    const tempDir = path.join(workspace, "tmpdir");
    mkdirSync(tempDir);
    const { env } = await sandboxed(WRITE, { initialCwd: workspace, tempDir });
    const target = victim();
    const entry = path.join(workspace, "tmpdir");
    const result = await env.exec(
      `mv ${entry} ${entry}-old; mkdir -p ${env.stateDir}; rm -rf ${env.stateDir}/tmp; ln -s ${target.dir} ${env.stateDir}/tmp; echo x > ${env.stateDir}/planted; echo end`,
      RUN,
    );
    expect(result.output).toMatch(/Device or resource busy|Read-only file system/);
    await env.exec("echo pwned > /tmp/new.txt; export STILL=works", RUN);
    expect(existsSync(path.join(target.dir, "new.txt"))).toBe(false);
    expect(existsSync(path.join(env.stateDir, "planted"))).toBe(false);
    expect((await env.exec('echo "$STILL"', RUN)).output).toBe("works\n");
  });

  it("a FIFO or a symlink in place of the cwd file does not hang or mislead the runtime", async () => {
    const { env, workspace } = await sandboxed(WRITE, { tempDir: dir("state-parent") });
    await env.exec("true", RUN);
    const dirs = [env.stateDir, path.join(env.stateDir, "shell")];
    await env.exec(dirs.map((d) => `[ -e ${d}/cwd ] && { rm -f ${d}/cwd; mkfifo ${d}/cwd; }`).join("; ") + "; true", { ...RUN, saveState: false });
    const started = Date.now();
    await env.exec("true", { ...RUN, timeoutMs: 3_000, saveState: false });
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(env.cwd).toBe(workspace);
  });

  it("PTY: `script` gets a pseudo-terminal inside the sandbox", async () => {
    const { env } = await sandboxed(WRITE);
    const result = await env.exec("script -qec 'tty; test -t 0 && echo is-a-tty' /dev/null < /dev/null", RUN);
    expect(result.output).toMatch(/\/dev\/pts\/\d+/);
    expect(result.output).toContain("is-a-tty");
  });

  it("a timeout kills the sandboxed command and what it started", async () => {
    const { env } = await sandboxed(WRITE);
    const result = await env.exec("sleep 300 & echo $! > /tmp/child.pid; sleep 300", { ...RUN, timeoutMs: 500 });
    expect(result.timedOut).toBe(true);
    expect(result.exitCode).toBe(124);
    const pid = Number((await env.exec("cat /tmp/child.pid", RUN)).output.trim());
    expect(pid).toBeGreaterThan(1);
    // Gone, or a zombie waiting for init to reap it: no longer running either way.
    const running = () => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
        return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 60 && running(); i++) await new Promise((r) => setTimeout(r, 50));
    expect(running()).toBe(false);
  });

  it("background processes run inside the sandbox and the registry still follows, feeds and kills them", async () => {
    const workspace = dir("ws-bg");
    const target = victim();
    const manager = new EnvironmentManager({
      factories: [createLocalFactory({ initialCwd: workspace, sandbox: WRITE, profileHome: path.join(scratch, "profile") })],
      defaultBackend: "local",
      closeOnExit: false,
    });
    managers.push(manager);
    const registry = new ProcessRegistry({ environments: manager, home: path.join(scratch, "bg-home"), pollIntervalMs: 0, waitIntervalMs: 50, killGraceMs: 500 });
    registries.push(registry);
    const env = await manager.get("bg");
    const info = await registry.start(env, `echo started; echo bad > ${target.file}; echo ok > bg.txt; read -r line; echo "got $line"`, { sessionId: "s" });
    await registry.submit("s", info.id, "hello");
    const done = await registry.wait("s", info.id, 15_000);
    expect(done.output).toContain("started");
    expect(done.output).toContain("Read-only file system");
    expect(done.output).toContain("got hello");
    expect(done.exitCode).toBe(0);
    expect(readFileSync(path.join(workspace, "bg.txt"), "utf8")).toBe("ok\n");
    expect(readFileSync(target.file, "utf8")).toBe("keep me\n");

    const pty = await registry.start(env, "tty; sleep 300", { sessionId: "s", pty: true });
    await new Promise((r) => setTimeout(r, 500));
    expect((await registry.poll("s", pty.id)).preview).toMatch(/\/dev\/pts\/\d+/);
    const killed = await registry.kill("s", pty.id);
    expect(killed.status).not.toBe("running");
  });

  it("execute_code's terminal calls and file tools go through the same sandbox (a file-tool script cannot write outside)", async () => {
    const { env } = await sandboxed(WRITE);
    const target = victim();
    // What the file tools run is a bash script through exec, like any command.
    const result = await env.exec(`cd -P -- ${target.dir} && printf new > precious.txt`, { ...RUN, saveState: false });
    expect(result.exitCode).not.toBe(0);
    expect(readFileSync(target.file, "utf8")).toBe("keep me\n");
  });
});

describe("a sandbox that is configured but cannot work: fail closed", () => {
  it("no bubblewrap: the environment is not created, the factory says why, and the command never runs", async () => {
    const workspace = dir("ws-missing");
    const options = { initialCwd: workspace, sandbox: WRITE, sandboxProgram: path.join(scratch, "no-such-bwrap") };
    await expect(LocalEnvironment.create("missing", options)).rejects.toThrow(SandboxUnavailableError);
    expect(localSandboxProblem(options)).toMatch(/not installed.*apt-get install bubblewrap/);

    const manager = new EnvironmentManager({ factories: [createLocalFactory(options)], defaultBackend: "local", closeOnExit: false });
    managers.push(manager);
    const terminal = createTerminalHandler({ gate: () => ({ check: async () => ({ allowed: true }) }) as never, environments: manager, redactOutput: false });
    const raw = (await terminal({ command: "touch ran.txt" }, { taskId: "t", toolName: "terminal", signal: new AbortController().signal })) as string;
    expect(raw).toMatch(/sandbox is configured but cannot be used/);
    expect(existsSync(path.join(workspace, "ran.txt"))).toBe(false);
  });

  it("bubblewrap present but refused its namespaces: refused with bubblewrap's own words", async () => {
    const fakeDir = dir("fake-bwrap");
    const fake = path.join(fakeDir, "bwrap");
    writeFileSync(fake, "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n");
    chmodSync(fake, 0o755);
    const workspace = dir("ws-refused");
    const options = { initialCwd: workspace, sandbox: WRITE, sandboxProgram: fake };
    const problem = localSandboxProblem(options);
    expect(problem).toContain("setting up uid map: Permission denied");
    expect(problem).toContain("user namespaces");
    await expect(LocalEnvironment.create("refused", options)).rejects.toThrow(/cannot create the sandbox's namespaces/);
  });

  it("off creates no sandbox and needs no bubblewrap", async () => {
    const env = await LocalEnvironment.create("off", { initialCwd: dir("ws-off"), sandbox: { mode: "off", network: true, writableRoots: [] }, sandboxProgram: "/nonexistent" });
    environments.push(env);
    expect(env.sandbox).toBeUndefined();
    expect((await env.exec("echo plain", RUN)).output).toBe("plain\n");
  });

  it.skipIf(!usable)("a workspace of / is refused in workspace-write mode; a missing workspace or writable root is named", async () => {
    await expect(LocalEnvironment.create("root", { initialCwd: "/", sandbox: WRITE })).rejects.toThrow(SandboxConfigError);
    await expect(LocalEnvironment.create("gone", { initialCwd: path.join(scratch, "no-such-workspace"), sandbox: WRITE })).rejects.toThrow(/the workspace .*no-such-workspace does not exist/);
    await expect(LocalEnvironment.create("root", { initialCwd: dir("ws-roots"), sandbox: { ...WRITE, writableRoots: [path.join(scratch, "nope")] } })).rejects.toThrow(
      /writable_roots entry .*nope does not exist/,
    );
  });
});
