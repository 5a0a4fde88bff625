/**
 * The `ssh` backend: commands run on a remote host through the OpenSSH client.
 *
 * - One multiplexed master connection per environment (`ControlMaster=auto`,
 *   a control socket in a private local directory, `ControlPersist`): each
 *   command is a cheap session on it. A master that died (killed, idle timeout,
 *   dropped connection) is replaced by the next command transparently: with
 *   `ControlMaster=auto` a client finding no live master becomes the new one.
 * - Key authentication only (`BatchMode=yes`: never a password prompt), host-key
 *   checking on by default (`StrictHostKeyChecking=yes`).
 * - The task's shell state (`shell-state.ts`) lives in a private directory on the
 *   remote host (`mktemp -d`), removed by `close()`.
 * - Every command runs through `spawnGroup` locally, and on the remote host in the
 *   process group sshd gives its session; the wrapper (`runScript`) records that
 *   group, so a timeout or an abort kills the remote tree (over a second session,
 *   `killScript`) as well as the local client.
 * - The ssh stderr stream is a side channel: the remote command's stderr is merged
 *   into its stdout there (real order kept), and the wrapper writes an exit record
 *   (exit code, working directory) to the side channel when the command ends. A
 *   background job holding the output open cannot make the call hang.
 */

import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { findExecutable } from "../util/find-executable.js";

import type { BackendInfo } from "../approval/flow/types.js";
import { ABORT_EXIT_CODE, DEFAULT_PIPE_DRAIN_MS, spawnGroup } from "../terminal/process-group.js";
import {
  DEFAULT_CONNECT_TIMEOUT_SECONDS,
  DEFAULT_SSH_KILL_GRACE_MS,
  HOST_KEY_CHECKING_VALUES,
  connectionHint,
  describeTarget,
  hasExitRecord,
  killScript,
  parseSideChannel,
  remoteBash,
  runScript,
  setupScript,
  sshControlArgv,
  sshOptionsProblem,
  sshMessage,
  sshRunArgv,
  teardownScript,
  type HostKeyChecking,
  type SshOptions,
} from "./ssh-command.js";
import { wrapOptionsFor } from "./shell-state.js";
import { backendConfigSection, checkedSection } from "./backend-config.js";
import type { Environment, EnvironmentFactory, ExecOptions, ExecResult } from "./types.js";
import type { EnvVars } from "../util/env-vars.js";

export { DEFAULT_CONNECT_TIMEOUT_SECONDS, DEFAULT_CONTROL_PERSIST_SECONDS, type HostKeyChecking, type SshOptions } from "./ssh-command.js";

/** How often a running command's side channel is checked for the exit record. */
const SIDE_CHANNEL_POLL_MS = 100;
/** Launcher between `spawnGroup` and ssh: ssh's stderr (the side channel) goes to the file in `$1`. */
const SIDE_CHANNEL_LAUNCHER = 'e=$1; shift; exec "$@" 2>"$e"';

/** Why the ssh backend cannot be used with these options here, or undefined. */
export function sshUnavailableReason(options: SshOptions): string | undefined {
  const binary = options.sshBinary ?? "ssh";
  if (findExecutable(binary) === undefined) {
    return `the OpenSSH client (${binary}) is not installed or not in PATH (Debian: apt-get install -y openssh-client)`;
  }
  return sshOptionsProblem(options);
}

interface SshRun {
  code: number | null;
  stdout: Buffer;
  stderr: string;
  timedOut: boolean;
}

/** Runs one short ssh invocation (setup, kill path, teardown, control requests) and collects its output. */
function runSsh(argv: readonly string[], timeoutMs: number): Promise<SshRun> {
  return new Promise((resolve) => {
    const [file, ...args] = argv;
    const child = spawn(file!, args, { stdio: ["ignore", "pipe", "pipe"], windowsHide: true });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.stdout!.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr!.on("data", (chunk: Buffer) => err.push(chunk));
    const finish = (code: number | null, message?: string) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out), stderr: message ?? Buffer.concat(err).toString("utf8"), timedOut });
    };
    child.on("error", (error) => finish(null, error.message));
    child.on("close", (code) => finish(code));
  });
}

/**
 * The longest temporary directory the control socket can live under: sun_path holds 107 bytes, and
 * the socket's path is `<base>/mibyan-ssh-XXXXXX/cm-%C` (%C: 40 hex digits) plus the 17 characters
 * (`.` and 16 random ones) ssh appends to it while the master sets the socket up.
 */
const MAX_CONTROL_BASE = 107 - "/mibyan-ssh-XXXXXX".length - "/cm-".length - 40 - 17;

/** A private local directory for the control socket (short enough for a unix socket path). */
function makeControlDir(): string {
  const base = tmpdir().length <= MAX_CONTROL_BASE ? tmpdir() : "/tmp";
  return mkdtempSync(join(base, "mibyan-ssh-"));
}

/** A command in flight, for `close()` and `disposeSync()`. */
interface RunningCommand {
  controller: AbortController;
  /** The local ssh client's pid (its process group's id). */
  pid: number | undefined;
  /** Settles when the command's `exec` is over (never rejects). */
  done: Promise<unknown>;
}

function abortedResult(): ExecResult {
  return { output: "", exitCode: ABORT_EXIT_CODE, timedOut: false, aborted: true, truncated: false, totalChars: 0, durationMs: 0 };
}

export class SshEnvironment implements Environment {
  readonly backend = "ssh";
  /** Runs on a real host as the remote user: never isolated, so the approval gate always applies. */
  readonly isolation: BackendInfo = { name: "ssh" };
  readonly taskId: string;
  /** The task's private state directory on the remote host. */
  readonly stateDir: string;
  /** The local directory holding the control socket. */
  readonly controlDir: string;

  private readonly options: SshOptions;
  private readonly binary: string;
  private readonly initialCwd: string;
  private currentCwd: string;
  private closing: Promise<void> | undefined;
  private readonly running = new Map<string, RunningCommand>();

  private constructor(taskId: string, options: SshOptions, binary: string, controlDir: string, stateDir: string, cwd: string) {
    this.taskId = taskId;
    this.options = options;
    this.binary = binary;
    this.controlDir = controlDir;
    this.stateDir = stateDir;
    this.initialCwd = cwd;
    this.currentCwd = cwd;
  }

  /**
   * Connects (starting the master connection), creates the task's state directory
   * on the remote host and learns the starting directory. Throws with ssh's own
   * message and a hint when the connection or the login fails.
   */
  static async create(taskId: string, options: SshOptions): Promise<SshEnvironment> {
    const reason = sshUnavailableReason(options);
    if (reason !== undefined) throw new Error(`ssh backend unavailable: ${reason}`);
    const binary = options.sshBinary ?? "ssh";
    const controlDir = makeControlDir();
    const connectSeconds = options.connectTimeoutSeconds ?? DEFAULT_CONNECT_TIMEOUT_SECONDS;
    const argv = sshRunArgv(binary, options, controlDir, remoteBash(setupScript(taskId, options.cwd)));
    const run = await runSsh(argv, (connectSeconds + 30) * 1000);
    const fields = run.stdout.toString("utf8").split("\0");
    if (run.code !== 0 || fields.length < 3 || !fields[0]) {
      await stopMaster(binary, options, controlDir);
      rmSync(controlDir, { recursive: true, force: true });
      const target = describeTarget(options);
      const message = run.timedOut ? `no answer within ${connectSeconds + 30} s` : sshMessage(run.stderr) || `ssh exited with code ${run.code}`;
      const hint = run.code === 3 ? undefined : connectionHint(message, options);
      throw new Error(`ssh: cannot open an environment on ${target}: ${message}${hint ? ` (${hint})` : ""}`);
    }
    return new SshEnvironment(taskId, options, binary, controlDir, fields[0], fields[1] ?? "/");
  }

  get cwd(): string {
    return this.currentCwd;
  }

  /** Whether `close()` has been called. */
  get closed(): boolean {
    return this.closing !== undefined;
  }

  async exec(command: string, options: ExecOptions): Promise<ExecResult> {
    if (this.closing) throw new Error(`the ssh environment of task ${this.taskId} is closed`);
    if (command.includes("\0")) throw new Error("the command contains a NUL character, which cannot be passed to the remote shell");
    if (options.cwd !== undefined && options.cwd.includes("\0")) throw new Error("the working directory contains a NUL character");
    if (options.signal?.aborted) return abortedResult();

    // `close()` and `disposeSync()` stop running commands through this controller.
    const controller = new AbortController();
    const forward = () => controller.abort();
    options.signal?.addEventListener("abort", forward, { once: true });
    const run: RunningCommand = { controller, pid: undefined, done: Promise.resolve() };
    const runId = randomBytes(6).toString("hex");
    this.running.set(runId, run);
    const done = this.runCommand(runId, run, command, options);
    run.done = done.catch(() => undefined);
    try {
      return await done;
    } finally {
      options.signal?.removeEventListener("abort", forward);
      this.running.delete(runId);
    }
  }

  private async runCommand(runId: string, run: RunningCommand, command: string, options: ExecOptions): Promise<ExecResult> {
    const sideFile = join(this.controlDir, `run-${runId}.err`);
    const script = runScript(this.stateDir, runId, wrapOptionsFor(this.initialCwd, options));
    const sshArgv = sshRunArgv(this.binary, this.options, this.controlDir, remoteBash(script, [command]));
    const argv = ["/bin/sh", "-c", SIDE_CHANNEL_LAUNCHER, "sh", sideFile, ...sshArgv];

    let remoteKill: Promise<string> | undefined;
    const group = spawnGroup(argv, {
      timeoutMs: options.timeoutMs,
      maxOutputChars: options.maxOutputChars,
      signal: run.controller.signal,
      ...(options.headRatio !== undefined ? { headRatio: options.headRatio } : {}),
      onKill: () => {
        remoteKill = this.killRemote(runId);
      },
    });
    const { child } = group;
    run.pid = child.pid;

    // The command may be over while a background job keeps the session open: once
    // the exit record is in, give the output a moment and then let the client go.
    let endedByRecord = false;
    let lastSize = 0;
    let drainTimer: NodeJS.Timeout | undefined;
    const poll = setInterval(() => {
      if (drainTimer !== undefined) return;
      let size: number;
      try {
        size = statSync(sideFile).size;
      } catch {
        return;
      }
      if (size === lastSize) return;
      lastSize = size;
      let content: Buffer;
      try {
        content = readFileSync(sideFile);
      } catch {
        return;
      }
      if (!hasExitRecord(content)) return;
      drainTimer = setTimeout(() => {
        if (child.exitCode === null && child.signalCode === null) {
          endedByRecord = true;
          child.kill("SIGTERM");
        }
      }, DEFAULT_PIPE_DRAIN_MS);
    }, SIDE_CHANNEL_POLL_MS);

    let result: ExecResult;
    try {
      result = await group.result;
    } catch (err) {
      throw new Error(`Failed to start ssh (${this.binary}): ${(err as Error).message}`, { cause: err });
    } finally {
      clearInterval(poll);
      if (drainTimer !== undefined) clearTimeout(drainTimer);
    }
    const cwdAfterKill = remoteKill !== undefined ? await remoteKill.catch(() => "") : "";

    let side = "";
    try {
      side = readFileSync(sideFile, "utf8");
      unlinkSync(sideFile);
    } catch {
      // no side channel output
    }
    const { record, rest } = parseSideChannel(side);
    const final: ExecResult = { ...result };
    if (record !== undefined && record.cwd !== "") this.currentCwd = record.cwd;
    else if (cwdAfterKill !== "") this.currentCwd = cwdAfterKill;
    if (result.timedOut || result.aborted) return final;
    if (record !== undefined) {
      final.exitCode = record.exitCode;
      if (endedByRecord) delete final.signal;
      return final;
    }
    // No exit record: the command did not finish normally on the remote host (the
    // connection failed or dropped, or the client was killed from outside).
    const message = sshMessage(rest) || `ssh exited with code ${result.exitCode}${result.signal ? ` (${result.signal})` : ""} before the command finished`;
    const hint = connectionHint(message, this.options);
    const note = `${final.output && !final.output.endsWith("\n") ? "\n" : ""}[ssh ${describeTarget(this.options)}: ${message}${hint ? ` (${hint})` : ""}]\n`;
    final.output += note;
    final.totalChars += note.length;
    return final;
  }

  /** The pid of the live master connection, or undefined when there is none (`ssh -O check`). */
  async masterPid(): Promise<number | undefined> {
    const run = await runSsh(sshControlArgv(this.binary, this.options, this.controlDir, "check"), 10_000);
    if (run.code !== 0) return undefined;
    const match = /pid=(\d+)/.exec(run.stderr);
    return match ? Number(match[1]) : undefined;
  }

  /**
   * Kills the commands still running (as an abort: local client and remote process
   * group), removes the remote state directory, stops the master connection and
   * deletes the local control directory. Idempotent; `exec` rejects afterwards.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const running = [...this.running.values()];
      for (const run of running) run.controller.abort();
      await Promise.all(running.map((run) => run.done));
      const seconds = (this.options.connectTimeoutSeconds ?? DEFAULT_CONNECT_TIMEOUT_SECONDS) + 10;
      try {
        await runSsh(sshRunArgv(this.binary, this.options, this.controlDir, remoteBash(teardownScript(this.stateDir))), seconds * 1000);
      } finally {
        await stopMaster(this.binary, this.options, this.controlDir);
        rmSync(this.controlDir, { recursive: true, force: true });
      }
    })().catch(() => undefined);
    return this.closing;
  }

  /**
   * Best-effort cleanup that blocks until done, for process exit: SIGKILLs the local
   * clients of running commands, then (a few seconds at most) kills their remote
   * process groups and removes the state directory in one ssh call, stops the master
   * and deletes the control directory. Leaves the environment closed.
   */
  disposeSync(): void {
    if (this.closing) return;
    this.closing = Promise.resolve();
    for (const run of this.running.values()) {
      if (run.pid === undefined) continue;
      try {
        process.kill(-run.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    const quiet = { stdio: "ignore" as const, timeout: 5_000, killSignal: "SIGKILL" as const };
    try {
      const [file, ...args] = sshRunArgv(this.binary, this.options, this.controlDir, remoteBash(teardownScript(this.stateDir)));
      spawnSync(file!, args, quiet);
      const [control, ...controlArgs] = sshControlArgv(this.binary, this.options, this.controlDir, "exit");
      spawnSync(control!, controlArgs, { ...quiet, timeout: 2_000 });
    } catch {
      // best effort
    }
    rmSync(this.controlDir, { recursive: true, force: true });
  }

  /**
   * The remote half of a timeout or abort: TERM, then KILL, the run's process group.
   * Resolves to the task's working directory after the kill (empty when unknown).
   */
  private async killRemote(runId: string): Promise<string> {
    const grace = this.options.killGraceMs ?? DEFAULT_SSH_KILL_GRACE_MS;
    const seconds = (this.options.connectTimeoutSeconds ?? DEFAULT_CONNECT_TIMEOUT_SECONDS) + 5;
    const argv = sshRunArgv(this.binary, this.options, this.controlDir, remoteBash(killScript(this.stateDir, runId, grace)));
    const run = await runSsh(argv, seconds * 1000 + grace);
    return run.code === 0 ? run.stdout.toString("utf8") : "";
  }
}

/** Asks the master to exit (`ssh -O exit`) and waits (up to 3 s) until it is gone: it removes its socket last. */
async function stopMaster(binary: string, options: SshOptions, controlDir: string): Promise<void> {
  const hasSocket = () => {
    try {
      return readdirSync(controlDir).some((name) => name.startsWith("cm-"));
    } catch {
      return false;
    }
  };
  if (!hasSocket()) return;
  await runSsh(sshControlArgv(binary, options, controlDir, "exit"), 10_000);
  const deadline = Date.now() + 3_000;
  while (hasSocket() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
}

/**
 * The ssh backend's options from the environment (`MIBYAN_SSH_HOST`, `_PORT`, `_USER`,
 * `_IDENTITY_FILE`, `_KNOWN_HOSTS_FILE`, `_STRICT_HOST_KEY_CHECKING`,
 * `_CONNECT_TIMEOUT_SECONDS`, `_CWD`, `_CONFIG_FILE`), for when no options are given.
 */
export function sshOptionsFromEnv(env: EnvVars = process.env): SshOptions {
  const options: SshOptions = {};
  const get = (name: string) => {
    const value = env[`MIBYAN_SSH_${name}`];
    return value === undefined || value === "" ? undefined : value;
  };
  const host = get("HOST");
  if (host !== undefined) options.host = host;
  const positive = (name: string): number | undefined => {
    const value = get(name);
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`MIBYAN_SSH_${name} must be a positive number, got ${JSON.stringify(value)}`);
    return n;
  };
  const port = positive("PORT");
  if (port !== undefined) options.port = port;
  const user = get("USER");
  if (user !== undefined) options.user = user;
  const identityFile = get("IDENTITY_FILE");
  if (identityFile !== undefined) options.identityFile = identityFile;
  const knownHostsFile = get("KNOWN_HOSTS_FILE");
  if (knownHostsFile !== undefined) options.knownHostsFile = knownHostsFile;
  const checking = get("STRICT_HOST_KEY_CHECKING");
  if (checking !== undefined) options.strictHostKeyChecking = checking as HostKeyChecking;
  const timeout = positive("CONNECT_TIMEOUT_SECONDS");
  if (timeout !== undefined) options.connectTimeoutSeconds = timeout;
  const cwd = get("CWD");
  if (cwd !== undefined) options.cwd = cwd;
  const configFile = get("CONFIG_FILE");
  if (configFile !== undefined) options.configFile = configFile;
  return options;
}

const SSH_CONFIG_KEYS = [
  "host",
  "port",
  "user",
  "identity_file",
  "known_hosts_file",
  "strict_host_key_checking",
  "connect_timeout_seconds",
  "control_persist_seconds",
  "cwd",
  "config_file",
] as const;

/**
 * The ssh backend's options from a config section written in snake_case
 * (`host`, `port`, `user`, `identity_file`, `known_hosts_file`,
 * `strict_host_key_checking`, `connect_timeout_seconds`, `control_persist_seconds`,
 * `cwd`, `config_file`); camelCase keys are accepted too. An unknown key throws,
 * naming it.
 */
export function sshOptionsFromConfig(raw: Record<string, unknown> | undefined): SshOptions {
  const options: SshOptions = {};
  if (!raw) return options;
  const section = checkedSection("ssh", raw, SSH_CONFIG_KEYS);
  const pick = (key: string): unknown => section[key];
  // A value of the wrong type is an error naming its key, not a setting silently dropped.
  const str = (key: string) => {
    const value = pick(key);
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "string" || value.trim() === "") throw new Error(`terminal.ssh.${key} must be a non-empty string`);
    return value;
  };
  const num = (key: string) => {
    const value = pick(key);
    if (value === undefined || value === null) return undefined;
    const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
    if (typeof n !== "number" || !Number.isFinite(n) || n <= 0) throw new Error(`terminal.ssh.${key} must be a positive number`);
    return n;
  };
  const host = str("host");
  if (host !== undefined) options.host = host;
  const port = num("port");
  if (port !== undefined) options.port = port;
  const user = str("user");
  if (user !== undefined) options.user = user;
  const identityFile = str("identity_file");
  if (identityFile !== undefined) options.identityFile = identityFile;
  const knownHostsFile = str("known_hosts_file");
  if (knownHostsFile !== undefined) options.knownHostsFile = knownHostsFile;
  const checking = pick("strict_host_key_checking");
  if (checking === true) options.strictHostKeyChecking = "yes";
  else if (checking === false) options.strictHostKeyChecking = "no";
  else if (typeof checking === "string" && HOST_KEY_CHECKING_VALUES.includes(checking as HostKeyChecking)) options.strictHostKeyChecking = checking as HostKeyChecking;
  else if (checking !== undefined && checking !== null) {
    throw new Error(`terminal.ssh.strict_host_key_checking must be yes, accept-new or no (or true/false), got ${JSON.stringify(checking)}`);
  }
  const connect = num("connect_timeout_seconds");
  if (connect !== undefined) options.connectTimeoutSeconds = connect;
  const persist = num("control_persist_seconds");
  if (persist !== undefined) options.controlPersistSeconds = persist;
  const cwd = str("cwd");
  if (cwd !== undefined) options.cwd = cwd;
  const configFile = str("config_file");
  if (configFile !== undefined) options.configFile = configFile;
  return options;
}

/** A factory over fixed options, or options read at each call (so config changes apply to new tasks). */
export function createSshFactory(options: SshOptions | (() => SshOptions)): EnvironmentFactory {
  const resolve = typeof options === "function" ? options : () => options;
  return {
    backend: "ssh",
    unavailableReason: () => sshUnavailableReason(resolve()),
    create: (taskId: string) => SshEnvironment.create(taskId, resolve()),
  };
}

/**
 * The options the registry's `sshFactory` uses, read for every new task: the
 * `terminal.ssh` section of config.yaml (`sshOptionsFromConfig`), with any
 * `MIBYAN_SSH_*` environment variable (`sshOptionsFromEnv`) taking precedence.
 */
export function defaultSshOptions(env: EnvVars = process.env): SshOptions {
  return { ...sshOptionsFromConfig(backendConfigSection("ssh")), ...sshOptionsFromEnv(env) };
}

/** The ssh backend as the registry loads it (options from `defaultSshOptions`). */
export const sshFactory: EnvironmentFactory = createSshFactory(() => defaultSshOptions());

export { HOST_KEY_CHECKING_VALUES };
