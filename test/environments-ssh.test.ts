/**
 * The ssh backend against a real OpenSSH server: the one `scripts/ci/start-sshd.sh`
 * started (MIBYAN_TEST_SSH_* variables), or a private one started here.
 */

import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

import {
  createSshFactory,
  sshFactory,
  sshOptionsFromConfig,
  sshOptionsFromEnv,
  SshEnvironment,
  type SshOptions,
} from "../src/environments/ssh.js";
import { parseSideChannel, remoteBash, runScript, sshBaseArgs, sshMessage, sshOptionsProblem } from "../src/environments/ssh-command.js";
import { BACKENDS } from "../src/environments/backends.js";
import { EnvironmentManager } from "../src/environments/manager.js";
import type { ExecOptions } from "../src/environments/types.js";
import { environmentContract } from "./support/environment-contract.js";
import { processContract } from "./support/process-contract.js";
import { HOW_TO_RUN_SSH_TESTS, privateSshdProblem, startPrivateSshd, targetFromEnv, type SshTestTarget } from "./support/sshd.js";

const EXEC: ExecOptions = { timeoutMs: 15_000, maxOutputChars: 100_000 };

// ---------------------------------------------------------------------------------------------
// Command construction (no server needed)
// ---------------------------------------------------------------------------------------------

describe("ssh backend: command construction", () => {
  it("checks host keys by default, never prompts, and multiplexes through a private control socket", () => {
    const args = sshBaseArgs({ host: "example.org" }, "/tmp/cm-dir").join(" ");
    expect(args).toContain("-o StrictHostKeyChecking=yes");
    expect(args).toContain("-o BatchMode=yes");
    expect(args).toContain("-o ControlMaster=auto");
    expect(args).toContain("-o ControlPath=/tmp/cm-dir/cm-%C");
    expect(args).toContain("-o ControlPersist=60");
    expect(args).not.toContain("IdentitiesOnly");
  });

  it("passes the configured key, known_hosts, port, user and checking mode", () => {
    const args = sshBaseArgs(
      { host: "h", port: 2200, user: "deploy", identityFile: "/k/id", knownHostsFile: "/k/kh", strictHostKeyChecking: "accept-new", connectTimeoutSeconds: 3 },
      "/c",
    );
    expect(args).toEqual(expect.arrayContaining(["-i", "/k/id", "-p", "2200", "-l", "deploy", "-o", "IdentitiesOnly=yes"]));
    expect(args).toEqual(expect.arrayContaining(["-o", "UserKnownHostsFile=/k/kh", "-o", "StrictHostKeyChecking=accept-new", "-o", "ConnectTimeout=3"]));
  });

  it("reports bad options and a missing host", () => {
    expect(sshOptionsProblem({})).toMatch(/no ssh host configured/);
    expect(sshOptionsProblem({ host: "-oProxyCommand=x" })).toMatch(/invalid ssh host/);
    expect(sshOptionsProblem({ host: "h", port: 70_000 })).toMatch(/invalid ssh port/);
    expect(sshOptionsProblem({ host: "h", strictHostKeyChecking: "maybe" as never })).toMatch(/strictHostKeyChecking/);
    expect(sshOptionsProblem({ host: "h", cwd: "relative" })).toMatch(/absolute/);
    expect(sshOptionsProblem({ host: "h" })).toBeUndefined();
  });

  it("says why it is unavailable: no host, no ssh binary", () => {
    expect(createSshFactory({}).unavailableReason()).toMatch(/no ssh host configured/);
    expect(createSshFactory({ host: "h", sshBinary: "/nonexistent/ssh" }).unavailableReason()).toMatch(/OpenSSH client .* not installed/);
    expect(createSshFactory({ host: "h" }).unavailableReason()).toBeUndefined();
    expect(sshFactory.backend).toBe("ssh");
  });

  it("is registered in the backend registry", async () => {
    expect(await BACKENDS.ssh!()).toBe(sshFactory);
  });

  it("reads options from MIBYAN_SSH_* and from a snake_case config section", () => {
    expect(sshOptionsFromEnv({ MIBYAN_SSH_HOST: "h", MIBYAN_SSH_PORT: "2222", MIBYAN_SSH_IDENTITY_FILE: "/k" })).toEqual({
      host: "h",
      port: 2222,
      identityFile: "/k",
    });
    expect(
      sshOptionsFromConfig({ host: "h", port: 22, identity_file: "/k", known_hosts_file: "/kh", strict_host_key_checking: "accept-new", connect_timeout_seconds: 5 }),
    ).toEqual({ host: "h", port: 22, identityFile: "/k", knownHostsFile: "/kh", strictHostKeyChecking: "accept-new", connectTimeoutSeconds: 5 });
    expect(sshOptionsFromConfig({ identityFile: "/k" })).toEqual({ identityFile: "/k" });
    expect(() => sshOptionsFromEnv({ MIBYAN_SSH_PORT: "22x" })).toThrow('MIBYAN_SSH_PORT must be a positive number, got "22x"');
    expect(() => sshOptionsFromConfig({ host: "h", strict_host_checking: "no" })).toThrow(/^terminal\.ssh\.strict_host_checking is not a known option/);
    expect(() => sshOptionsFromConfig({ host: 42 })).toThrow(/^terminal\.ssh\.host must be a non-empty string/);
    expect(() => sshOptionsFromConfig({ host: "h", port: "twenty-two" })).toThrow(/^terminal\.ssh\.port must be a positive number/);
    expect(() => sshOptionsFromConfig({ host: "h", strict_host_key_checking: "maybe" })).toThrow(/strict_host_key_checking must be yes, accept-new or no/);
    expect(sshOptionsFromConfig({ host: "h", port: "2222", strict_host_key_checking: false })).toEqual({ host: "h", port: 2222, strictHostKeyChecking: "no" });
  });

  it("keeps the user's command out of the script text (it is the wrapper's $1)", () => {
    const script = runScript("/tmp/mibyan-t-abc", "r1", { initialCwd: "/root" });
    const line = remoteBash(script, ["echo '$(rm -rf /)'"]);
    expect(script).not.toContain("rm -rf");
    expect(line.endsWith(`'echo '\\''$(rm -rf /)'\\'''`)).toBe(true);
  });

  it("turns ssh's stderr into one readable line", () => {
    expect(sshMessage("@@@@@@@@\n@    WARNING: UNPROTECTED PRIVATE KEY FILE!     @\n@@@@@@@@\nPermissions 0644 for 'k' are too open.\n")).toBe(
      "WARNING: UNPROTECTED PRIVATE KEY FILE! Permissions 0644 for 'k' are too open.",
    );
  });

  it("finds the exit record on the side channel", () => {
    const { record, rest } = parseSideChannel("warning\n\0MIBYAN-SSH-EXIT 7 /tmp/a b\0");
    expect(record).toEqual({ exitCode: 7, cwd: "/tmp/a b" });
    expect(rest).toBe("warning\n");
    expect(parseSideChannel("Connection closed").record).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------
// Against a real sshd
// ---------------------------------------------------------------------------------------------

const envTarget = targetFromEnv();
const privateProblem = envTarget ? undefined : privateSshdProblem();
const canRun = envTarget !== undefined || privateProblem === undefined;
const skipReason = canRun ? undefined : `${privateProblem}. ${HOW_TO_RUN_SSH_TESTS}`;
if (skipReason !== undefined) console.warn(`skipping the ssh backend tests against a real server: ${skipReason}`);

/** The server every test below talks to (started once for the file). */
let target: SshTestTarget;

beforeAll(async () => {
  if (canRun) target = envTarget ?? (await startPrivateSshd());
}, 30_000);

afterAll(async () => {
  await target?.stop();
});

function targetOptions(overrides: Partial<SshOptions> = {}): SshOptions {
  return {
    host: target.host,
    port: target.port,
    user: target.user,
    identityFile: target.identityFile,
    knownHostsFile: target.knownHostsFile,
    configFile: "/dev/null",
    connectTimeoutSeconds: 5,
    ...overrides,
  };
}

// The behaviours every backend shares (test/support/environment-contract.ts).
environmentContract("ssh", (taskId) => createSshFactory(targetOptions()).create(taskId), {
  ...(skipReason !== undefined ? { skip: skipReason } : {}),
  testTimeoutMs: 30_000,
});
processContract("ssh", (taskId) => createSshFactory(targetOptions()).create(taskId), {
  ...(skipReason !== undefined ? { skip: skipReason } : {}),
});

describe.skipIf(!canRun)("ssh backend against a real sshd", () => {
  let scratch: string;
  const opened: SshEnvironment[] = [];

  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), "mibyan-ssh-test-"));
  });

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((env) => env.close()));
  });

  afterAll(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  const options = targetOptions;

  async function open(taskId: string, overrides: Partial<SshOptions> = {}): Promise<SshEnvironment> {
    const env = (await createSshFactory(options(overrides)).create(taskId)) as SshEnvironment;
    opened.push(env);
    return env;
  }

  /** A second, independent ssh connection (no multiplexing) for looking at the remote host. */
  function remote(command: string): string {
    return execFileSync(
      "ssh",
      [
        "-F", "/dev/null", "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-o", `UserKnownHostsFile=${target.knownHostsFile}`,
        "-o", "StrictHostKeyChecking=yes", "-i", target.identityFile, "-p", String(target.port), "-l", target.user, "--", target.host, command,
      ],
      { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
    );
  }

  /** Remote processes whose command line matches `pattern` (an ERE), the checker itself excluded. */
  function remoteProcesses(pattern: string): string[] {
    const out = remote(`ps -eo pid=,args= | grep -E ${JSON.stringify(pattern)} | grep -v grep || true`);
    return out.split("\n").filter((line) => line.trim() !== "");
  }

  it("works from a long TMPDIR: the control socket goes where its path fits (ssh lengthens it while setting it up)", async () => {
    const saved = process.env.TMPDIR;
    // A TMPDIR of 29 to 40 characters made every call fail with "too long for Unix domain socket".
    const top = mkdtempSync("/tmp/m");
    try {
      for (const length of [top.length, 28, 29, 36, 40, 90]) {
        const dir = length <= top.length ? top : join(top, "t".repeat(length - top.length - 1));
        mkdirSync(dir, { recursive: true });
        expect(dir.length).toBe(Math.max(length, top.length));
        process.env.TMPDIR = dir;
        const env = await open(`long-tmpdir-${length}`);
        expect((await env.exec("echo fits", EXEC)).output).toBe("fits\n");
      }
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
      await Promise.all(opened.splice(0).map((env) => env.close()));
      rmSync(top, { recursive: true, force: true });
    }
  });

  it("runs a command and returns merged output and the exit code", async () => {
    const env = await open("basic");
    expect(env.backend).toBe("ssh");
    expect(env.isolation).toEqual({ name: "ssh" });
    const home = remote("pwd").trim();
    expect(env.cwd).toBe(home);
    const result = await env.exec("echo out; echo err >&2; echo out2; exit 3", EXEC);
    expect(result.output).toBe("out\nerr\nout2\n");
    expect(result.exitCode).toBe(3);
    expect(result.timedOut).toBe(false);
    expect(result.aborted).toBe(false);
    // An exit code of 255 from the command is the command's, not a connection failure.
    const r255 = await env.exec("exit 255", EXEC);
    expect(r255.exitCode).toBe(255);
    expect(r255.output).toBe("");
  });

  it("checks host keys by default: an unknown host key is refused with a clear error", async () => {
    const emptyKnownHosts = join(scratch, "empty_known_hosts");
    writeFileSync(emptyKnownHosts, "");
    const factory = createSshFactory(options({ knownHostsFile: emptyKnownHosts }));
    await expect(factory.create("hostkey")).rejects.toThrow(/cannot open an environment on .*Host key verification failed.*not in .*empty_known_hosts/s);
    // accept-new trusts a first-seen key and records it.
    const env = await open("hostkey-accept", { knownHostsFile: emptyKnownHosts, strictHostKeyChecking: "accept-new" });
    expect((await env.exec("echo ok", EXEC)).output).toBe("ok\n");
    expect(readFileSync(emptyKnownHosts, "utf8")).toMatch(/ssh-ed25519/);
  });

  it("refuses a key the server does not know with a clear error", async () => {
    const wrongKey = join(scratch, "wrong_key");
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", wrongKey], { stdio: "ignore" });
    const factory = createSshFactory(options({ identityFile: wrongKey }));
    await expect(factory.create("wrongkey")).rejects.toThrow(/Permission denied.*refused the key .*wrong_key/s);
    const tooOpen = join(scratch, "too_open_key");
    writeFileSync(tooOpen, readFileSync(target.identityFile), { mode: 0o644 });
    chmodSync(tooOpen, 0o644);
    await expect(createSshFactory(options({ identityFile: tooOpen })).create("openkey")).rejects.toThrow(/too open.*identity file could not be used/s);
    const nowhere = createSshFactory(options({ port: 1 }));
    await expect(nowhere.create("refused")).rejects.toThrow(/Connection refused.*sshd running/s);
  });

  it("passes commands through byte for byte (quotes, $, backticks, newlines, unicode)", async () => {
    const env = await open("quoting");
    const cases: Array<[string, string]> = [
      [`printf '%s\\n' "it's" 'a "b"' '$HOME' '\`id\`' '\\n'`, `it's\na "b"\n$HOME\n\`id\`\n\\n\n`],
      [`echo "$((6 * 7))" $'tab\\there'`, "42 tab\there\n"],
      [`x='semi; colon | pipe & amp > gt'; echo "$x"`, "semi; colon | pipe & amp > gt\n"],
      [`echo 'héllo wörld ✓ 😀 日本語'`, "héllo wörld ✓ 😀 日本語\n"],
      [`cat <<'EOF'\nline 1 $NOT_EXPANDED \`nope\`\n  line 2 'q' "dq"\nEOF`, "line 1 $NOT_EXPANDED `nope`\n  line 2 'q' \"dq\"\n"],
      [`printf '%s|' a\\ b "c  d" 'e\\f' ; echo`, "a b|c  d|e\\f|\n"],
      [`echo "back\\\\slash" '\\\\'`, "back\\slash \\\\\n"],
      [`f() { echo "args:$#"; }; f '' "" ; echo '!bang' "#hash" '*'`, "args:2\n!bang #hash *\n"],
    ];
    for (const [command, expected] of cases) {
      const result = await env.exec(command, EXEC);
      expect({ command, output: result.output, exitCode: result.exitCode }).toEqual({ command, output: expected, exitCode: 0 });
    }
    // A command with a trailing backslash or unbalanced quote fails as bash would, without breaking the wrapper.
    const bad = await env.exec(`echo "unterminated`, EXEC);
    expect(bad.exitCode).not.toBe(0);
    expect(bad.output).toMatch(/unexpected EOF|matching/);
    expect((await env.exec("echo still fine", EXEC)).output).toBe("still fine\n");
  });

  it("a per-command cwd with awkward characters runs there without moving the task", async () => {
    const env = await open("cwd-override");
    const dir = `/tmp/mibyan ssh 'quoted' $dir ✓`;
    await env.exec(`mkdir -p ${JSON.stringify(dir).replace(/\$/g, "\\$")}`, EXEC);
    const before = env.cwd;
    const result = await env.exec("pwd", { ...EXEC, cwd: dir });
    expect(result.output).toBe(`${dir}\n`);
    expect(env.cwd).toBe(before);
    expect((await env.exec("pwd", EXEC)).output).toBe(`${before}\n`);
    remote(`rm -rf '/tmp/mibyan ssh '\\''quoted'\\'' $dir ✓'`);
  });

  it("carries cd and exported variables within a task and never into another task", async () => {
    const a = await open("state-a");
    const b = await open("state-b");
    const home = b.cwd;
    await a.exec("cd /tmp && export MIBYAN_SSH_T='a b \"c\"' && NOT_EXPORTED=1", EXEC);
    expect(a.cwd).toBe("/tmp");
    const seen = await a.exec('pwd; echo "$MIBYAN_SSH_T"; echo "[$NOT_EXPORTED]"', EXEC);
    expect(seen.output).toBe('/tmp\na b "c"\n[]\n');
    // State is saved even when the command exits with an error code.
    const exited = await a.exec("cd /usr && exit 4", EXEC);
    expect(exited.exitCode).toBe(4);
    expect(a.cwd).toBe("/usr");
    const other = await b.exec('pwd; echo "[$MIBYAN_SSH_T]"', EXEC);
    expect(other.output).toBe(`${home}\n[]\n`);
    expect(b.cwd).toBe(home);
    expect(a.stateDir).not.toBe(b.stateDir);
  });

  it("starts in the configured cwd, and refuses one that does not exist", async () => {
    const env = await open("start-cwd", { cwd: "/tmp" });
    expect(env.cwd).toBe("/tmp");
    expect((await env.exec("pwd", EXEC)).output).toBe("/tmp\n");
    await expect(createSshFactory(options({ cwd: "/nonexistent/dir" })).create("bad-cwd")).rejects.toThrow(/no such directory on the remote host/);
  });

  it("a timeout kills the remote process tree, not only the local client", async () => {
    const env = await open("timeout");
    const started = Date.now();
    const result = await env.exec("cd /var; echo begun; sleep 3017 & bash -c 'sleep 3018' & sleep 3019; echo never", { ...EXEC, timeoutMs: 1_500 });
    expect(result.exitCode).toBe(124);
    expect(result.timedOut).toBe(true);
    expect(result.output).toBe("begun\n");
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(remoteProcesses("sleep 301[789]")).toEqual([]);
    // SIGTERM let the state script save what the command changed; the backend knows the new directory.
    expect(env.cwd).toBe("/var");
    // The task's environment still works afterwards.
    expect((await env.exec("echo after", EXEC)).output).toBe("after\n");
  });

  it("a SIGTERM-ignoring remote process is SIGKILLed after the grace period", async () => {
    const env = await open("timeout-kill", { killGraceMs: 500 });
    const result = await env.exec("trap '' TERM; sleep 3021; echo never", { ...EXEC, timeoutMs: 1_000 });
    expect(result.exitCode).toBe(124);
    expect(remoteProcesses("sleep 3021")).toEqual([]);
  });

  it("an abort kills the remote process tree with exit code 130", async () => {
    const env = await open("abort");
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 800);
    const result = await env.exec("echo started; sleep 3027", { ...EXEC, signal: controller.signal });
    expect(result.exitCode).toBe(130);
    expect(result.aborted).toBe(true);
    expect(result.output).toBe("started\n");
    expect(remoteProcesses("sleep 3027")).toEqual([]);
    // Already aborted: nothing runs.
    const pre = new AbortController();
    pre.abort();
    const skipped = await env.exec("touch /tmp/mibyan-should-not-exist", { ...EXEC, signal: pre.signal });
    expect(skipped.aborted).toBe(true);
    expect(remote("test -e /tmp/mibyan-should-not-exist && echo yes || echo no").trim()).toBe("no");
  });

  it("a background job holding the output open does not make the call hang", async () => {
    const env = await open("background");
    const started = Date.now();
    const result = await env.exec("sleep 3031 & echo started", EXEC);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result.exitCode).toBe(0);
    expect(result.output).toBe("started\n");
    expect(result.signal).toBeUndefined();
    remote("pkill -f '[s]leep 3031' || true");
  });

  it("caps large output and counts what was cut", async () => {
    const env = await open("large");
    const result = await env.exec("head -c 3000000 /dev/zero | tr '\\0' a; echo; echo END", { ...EXEC, maxOutputChars: 10_000 });
    expect(result.exitCode).toBe(0);
    expect(result.truncated).toBe(true);
    expect(result.totalChars).toBe(3_000_005);
    expect(result.output.endsWith("END\n")).toBe(true);
    expect(result.output.length).toBeLessThan(10_200);
  });

  it("reconnects transparently after the master connection was killed", async () => {
    const env = await open("reconnect");
    await env.exec("cd /tmp && export KEEP=kept", EXEC);
    const master = await env.masterPid();
    expect(master).toBeGreaterThan(0);
    process.kill(master!, "SIGKILL");
    await new Promise((r) => setTimeout(r, 100));
    expect(await env.masterPid()).toBeUndefined();
    const result = await env.exec('pwd; echo "$KEEP"', EXEC);
    expect(result.output).toBe("/tmp\nkept\n");
    expect(result.exitCode).toBe(0);
    const again = await env.masterPid();
    expect(again).toBeGreaterThan(0);
    expect(again).not.toBe(master);
  });

  it("close removes the remote state directory and stops the master", async () => {
    const env = await open("close");
    await env.exec("export X=1", EXEC);
    const stateDir = env.stateDir;
    expect(stateDir).toMatch(/\/mibyan-close-/);
    expect(remote(`test -f '${stateDir}/state.sh' && echo yes`).trim()).toBe("yes");
    const master = await env.masterPid();
    await env.close();
    await env.close(); // idempotent
    expect(remote(`test -e '${stateDir}' && echo yes || echo no`).trim()).toBe("no");
    expect(existsSync(env.controlDir)).toBe(false);
    // The master removes its socket just before it exits; give it (and its reaping) a moment.
    const gone = () => {
      try {
        const stat = readFileSync(`/proc/${master}/stat`, "latin1");
        return /^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2));
      } catch {
        return true;
      }
    };
    for (let i = 0; i < 100 && !gone(); i++) await new Promise((r) => setTimeout(r, 20));
    expect(gone()).toBe(true);
    await expect(env.exec("true", EXEC)).rejects.toThrow(/closed/);
  });

  it("close kills the commands still running, here and on the remote host", async () => {
    const env = await open("close-running");
    const running = env.exec("echo started; sleep 3041", EXEC);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(remoteProcesses("^ *[0-9]+ sleep 3041")).toHaveLength(1);
    await env.close();
    const result = await running;
    expect(result.aborted).toBe(true);
    expect(result.exitCode).toBe(130);
    expect(result.output).toBe("started\n");
    expect(remoteProcesses("sleep 3041")).toEqual([]);
    expect(remote(`test -e '${env.stateDir}' && echo yes || echo no`).trim()).toBe("no");
  });

  it("disposeSync cleans up before returning (for process exit)", async () => {
    const env = await open("dispose");
    const running = env.exec("sleep 3051", EXEC);
    await new Promise((r) => setTimeout(r, 1_000));
    env.disposeSync();
    expect(existsSync(env.controlDir)).toBe(false);
    expect(remote(`test -e '${env.stateDir}' && echo yes || echo no`).trim()).toBe("no");
    expect(remoteProcesses("sleep 3051")).toEqual([]);
    expect((await running).exitCode).not.toBe(0);
    await expect(env.exec("true", EXEC)).rejects.toThrow(/closed/);
  });

  it("is what EnvironmentManager hands out for terminal backend ssh (options from MIBYAN_SSH_*)", async () => {
    const vars: Record<string, string> = {
      MIBYAN_SSH_HOST: target.host,
      MIBYAN_SSH_PORT: String(target.port),
      MIBYAN_SSH_USER: target.user,
      MIBYAN_SSH_IDENTITY_FILE: target.identityFile,
      MIBYAN_SSH_KNOWN_HOSTS_FILE: target.knownHostsFile,
      MIBYAN_SSH_CONFIG_FILE: "/dev/null",
    };
    const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
    Object.assign(process.env, vars);
    const manager = new EnvironmentManager({ defaultBackend: "ssh", closeOnExit: false });
    try {
      const env = await manager.get("managed");
      expect(env.backend).toBe("ssh");
      expect(env.unwrap()).toBeInstanceOf(SshEnvironment);
      expect((await env.exec("cd /tmp && echo $((1 + 1))", EXEC)).output).toBe("2\n");
      expect((await manager.get("managed")).cwd).toBe("/tmp");
    } finally {
      await manager.closeAll();
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  it("runs commands of one task concurrently over the one master", async () => {
    const env = await open("concurrent");
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => env.exec(`sleep 0.3; echo ${i}`, EXEC)));
    expect(results.map((r) => r.output)).toEqual(["0\n", "1\n", "2\n", "3\n", "4\n"]);
  });
});
