/**
 * The `local` backend: every command is a real child process on this machine,
 * `bash -c <wrapCommand(...)> bash <command>` (no login shell, no rc files),
 * supervised by `spawnGroup`: its own process group, stdin closed, stderr merged
 * into stdout (by the script's own `exec 2>&1`, no launcher), output capped (head and tail), the whole group killed on a
 * timeout (exit code 124) or an abort (130).
 *
 * Per-task state (working directory, exported variables; see shell-state.ts)
 * lives in a directory of its own under the OS temp dir (`mibyan-env-*`, mode
 * 0700), removed by `close()`. `close()` also ends what the task left running:
 * commands still running are aborted, and the process groups of finished
 * commands that left jobs behind (`server &`) get SIGTERM, then SIGKILL after
 * at most a second. There is no isolation by default: commands run as the
 * current user with full access to the machine, so the approval gate applies
 * to every dangerous command (`isolation: { name: "local" }`).
 *
 * With `terminal.local.sandbox` set (docs/sandbox.md), every command this
 * environment runs (the terminal's, background launches and their
 * bookkeeping, the file tools' scripts) is spawned inside a bubblewrap sandbox
 * built once per environment: the rest of the machine read-only, the
 * workspace writable or not, a private /tmp, the network on or off. The gate
 * still applies: the sandbox is a second line, not a replacement. A sandbox
 * that is configured but cannot work makes `create` (and the factory's
 * `unavailableReason`) fail; commands never fall back to running unsandboxed.
 * Every command must then go through the sandbox: the state file is writable
 * by sandboxed commands, so sourcing it outside would run their code outside.
 */

import { closeSync, constants as fsConstants, fstatSync, openSync, readSync, rmSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import type { BackendInfo } from "../approval/flow/types.js";
import { expandTilde } from "../config/home.js";
import { getConfig } from "../config/load-config.js";
import { createCommandSandbox, type CommandSandbox, type SandboxStatus } from "../sandbox/command-sandbox.js";
import { configuredSandboxPolicy, type SandboxPolicy } from "../sandbox/policy.js";
import { ABORT_EXIT_CODE, spawnGroup } from "../terminal/process-group.js";
import { localSandboxProblem } from "./local-sandbox-check.js";
import { statePaths, wrapCommand, wrapOptionsFor, type ShellStatePaths } from "./shell-state.js";
import type { Environment, EnvironmentFactory, ExecOptions, ExecResult } from "./types.js";
import type { EnvVars } from "../util/env-vars.js";

export interface LocalEnvironmentOptions {
  /**
   * Where a new task starts. Default: config `terminal.cwd` (a leading `~`
   * expanded, made absolute against the current directory), else `process.cwd()`.
   */
  initialCwd?: string;
  /**
   * The environment each command's shell starts from (before the task's saved
   * state is applied). Default: `process.env` at the time of the command.
   */
  env?: () => EnvVars;
  /** Parent directory of the per-task state directories. Default: `os.tmpdir()`. */
  tempDir?: string;
  /** SIGTERM→SIGKILL grace when killing a command's group. Default 2000 ms. */
  killGraceMs?: number;
  /** How long output is still read after the shell exited (background jobs). Default 250 ms. */
  pipeDrainMs?: number;
  /** The OS sandbox. Default: config `terminal.local.sandbox` (read when the environment is created). */
  sandbox?: SandboxPolicy;
  /** The bubblewrap program (tests). Default: `bwrap` on PATH. */
  sandboxProgram?: string;
  /** The profile home kept read-only inside the sandbox. Default: `mibyanHome()`. */
  profileHome?: string;
}

/** Config `terminal.cwd` (expanded and absolute), or `process.cwd()`. */
export function defaultInitialCwd(): string {
  const configured = getConfig().config.terminal.cwd;
  if (configured === undefined || configured.trim() === "") return process.cwd();
  return path.resolve(expandTilde(configured));
}

/** Longest working directory read back from the cwd file (PATH_MAX is 4096). */
const CWD_FILE_MAX_BYTES = 16 * 1024;

const LOCAL_ISOLATION: BackendInfo = Object.freeze({ name: "local" });

function abortedResult(): ExecResult {
  return { output: "", exitCode: ABORT_EXIT_CODE, timedOut: false, aborted: true, truncated: false, totalChars: 0, durationMs: 0 };
}

/**
 * Whether a process group still has members (zombies included). A group id
 * cannot be handed to a new process while its group has members, so a live
 * group is still the one we started.
 */
function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // Already gone.
  }
}

/** A directory name part from a task id: harmless characters only, short. */
function slug(taskId: string): string {
  const cleaned = taskId.replace(/[^A-Za-z0-9_.-]+/g, "_").slice(0, 40);
  return cleaned === "" || cleaned === "." || cleaned === ".." ? "task" : cleaned;
}

export class LocalEnvironment implements Environment {
  readonly backend = "local";
  readonly isolation: BackendInfo = LOCAL_ISOLATION;
  /** The task's state directory (mode 0700). Gone after `close()`. */
  readonly stateDir: string;
  /** Where the task started. */
  readonly initialCwd: string;

  readonly #paths: ShellStatePaths;
  readonly #env: (() => EnvVars) | undefined;
  readonly #killGraceMs: number | undefined;
  readonly #pipeDrainMs: number | undefined;
  readonly #sandbox: CommandSandbox | undefined;
  #cwd: string;
  #closed = false;
  #closing: Promise<void> | undefined;
  /** Aborted by `close()`, so running commands are killed. */
  /** The abort controllers of running commands: `close()` aborts them all (one listener per command on a shared signal would trip Node's leak warning at 11). */
  readonly #controllers = new Set<AbortController>();
  /** Running commands: the process group id (the shell's pid) and the run's promise. */
  readonly #running = new Map<number, Promise<unknown>>();
  /** Groups of finished commands that left processes behind (`server &`); killed by `close()`. */
  readonly #leftovers = new Set<number>();

  private constructor(
    readonly taskId: string,
    stateDir: string,
    initialCwd: string,
    options: LocalEnvironmentOptions,
    sandbox: CommandSandbox | undefined,
  ) {
    this.stateDir = stateDir;
    this.initialCwd = initialCwd;
    this.#cwd = initialCwd;
    // Sandboxed, the shell's files live in a subdirectory, the only part of the
    // state directory a command can write (see `create`).
    this.#paths = statePaths(sandbox ? path.join(stateDir, "shell") : stateDir);
    this.#env = options.env;
    this.#killGraceMs = options.killGraceMs;
    this.#pipeDrainMs = options.pipeDrainMs;
    this.#sandbox = sandbox;
  }

  /**
   * Creates the task's state directory, and the sandbox when one is configured.
   * Throws when it cannot (temp dir not writable), when the config is invalid,
   * and when a configured sandbox cannot work here (`SandboxUnavailableError`).
   */
  static async create(taskId: string, options: LocalEnvironmentOptions = {}): Promise<LocalEnvironment> {
    const initialCwd = path.resolve(options.initialCwd ?? defaultInitialCwd());
    const policy = options.sandbox ?? configuredSandboxPolicy();
    // mkdtemp creates it 0700 already; the chmod makes that explicit whatever the platform does.
    const stateDir = await mkdtemp(path.join(options.tempDir ?? tmpdir(), `mibyan-env-${slug(taskId)}-`));
    let sandbox: CommandSandbox | undefined;
    try {
      await chmod(stateDir, 0o700);
      if (policy.mode !== "off") {
        // Only `shell/` is writable inside, never the state directory itself: bwrap
        // resolves each bind's source on the host at every command, so a command
        // that could replace `tmp` with a symlink would have its target mounted
        // writable as /tmp next time. Both are mount points inside, which cannot
        // be renamed or removed.
        await mkdir(path.join(stateDir, "shell"), { mode: 0o700 });
        sandbox = createCommandSandbox(policy, {
          workspace: initialCwd,
          runtimeWritable: [path.join(stateDir, "shell")],
          runtimeOwned: [stateDir],
          privateTmp: path.join(stateDir, "tmp"),
          ...(options.profileHome !== undefined ? { profileHome: options.profileHome } : {}),
          ...(options.sandboxProgram !== undefined ? { program: options.sandboxProgram } : {}),
        });
      }
    } catch (err) {
      await rm(stateDir, { recursive: true, force: true });
      throw err;
    }
    return new LocalEnvironment(taskId, stateDir, initialCwd, options, sandbox);
  }

  /** Whether commands run sandboxed, and how (undefined when the sandbox is off). */
  get sandbox(): SandboxStatus | undefined {
    return this.#sandbox?.status;
  }

  /** The task's working directory, as the last finished command left it. */
  get cwd(): string {
    return this.#cwd;
  }

  get closed(): boolean {
    return this.#closed;
  }

  async exec(command: string, options: ExecOptions): Promise<ExecResult> {
    if (this.#closed) throw new Error(`The local environment of task ${JSON.stringify(this.taskId)} is closed.`);
    if (options.signal?.aborted) return abortedResult();
    const script = wrapCommand(this.#paths, { ...wrapOptionsFor(this.initialCwd, options), mergeStderr: true });
    // One signal for the caller's abort and `close()`, unlinked again when the run ends.
    const controller = new AbortController();
    const forward = () => controller.abort();
    options.signal?.addEventListener("abort", forward, { once: true });
    this.#controllers.add(controller);
    const unlink = () => {
      options.signal?.removeEventListener("abort", forward);
      this.#controllers.delete(controller);
    };
    const signal = controller.signal;
    let group;
    try {
      const argv = ["bash", "-c", script, "bash", command];
      group = spawnGroup(this.#sandbox ? this.#sandbox.wrap(argv) : argv, {
        // The wrapper enters the task's directory itself (with a fallback when it is gone),
        // so the spawn needs a directory that always exists.
        cwd: "/",
        env: this.#env?.() ?? process.env,
        mergeStderr: "program",
        timeoutMs: options.timeoutMs,
        signal,
        maxOutputChars: options.maxOutputChars,
        headRatio: options.headRatio,
        killGraceMs: this.#killGraceMs,
        pipeDrainMs: this.#pipeDrainMs,
      });
    } catch (err) {
      unlink();
      throw new Error(`Failed to start command: ${(err as Error).message}`, { cause: err });
    }
    const pid = group.child.pid;
    const settled = group.result.then(
      () => undefined,
      () => undefined,
    );
    if (pid !== undefined) this.#running.set(pid, settled);
    let result: ExecResult;
    try {
      result = await group.result;
    } catch (err) {
      throw new Error(`Failed to start command: ${(err as Error).message}`, { cause: err });
    } finally {
      unlink();
      if (pid !== undefined) {
        this.#running.delete(pid);
        if (groupExists(pid)) this.#leftovers.add(pid);
      }
    }
    this.#readCwd();
    return result;
  }

  #readCwd(): void {
    // A file of one short line: a synchronous read costs microseconds, a
    // thread-pool round trip a good part of a millisecond per command. The
    // command can replace the file (it shares the directory with the shell
    // that writes it): a FIFO must not block the event loop, and a symlink
    // must not make the runtime read another file, so it is opened without
    // following links and without blocking, and read only when regular.
    let fd: number | undefined;
    try {
      fd = openSync(this.#paths.cwdFile, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
      if (!fstatSync(fd).isFile()) return;
      const buffer = Buffer.allocUnsafe(CWD_FILE_MAX_BYTES);
      const length = readSync(fd, buffer, 0, buffer.length, 0);
      const text = buffer.toString("utf8", 0, length);
      if (text !== "" && length < buffer.length && path.isAbsolute(text)) this.#cwd = text;
    } catch {
      // No command saved state yet, or the environment was closed meanwhile.
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#closed = true;
    for (const controller of this.#controllers) controller.abort(new Error("environment closed"));
    // Let killed shells finish (their EXIT trap writes into the state dir) before removing it.
    await Promise.all(this.#running.values());
    await this.#killLeftovers();
    await rm(this.stateDir, { recursive: true, force: true, maxRetries: 3 });
  }

  /** SIGTERM to what earlier commands left running, SIGKILL to what is still there after the grace. */
  async #killLeftovers(): Promise<void> {
    const groups = [...this.#leftovers].filter(groupExists);
    this.#leftovers.clear();
    if (groups.length === 0) return;
    for (const pgid of groups) signalGroup(pgid, "SIGTERM");
    const deadline = Date.now() + Math.min(this.#killGraceMs ?? 1_000, 1_000);
    let alive = groups;
    while (alive.length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      alive = alive.filter(groupExists);
    }
    for (const pgid of alive) signalGroup(pgid, "SIGKILL");
  }

  disposeSync(): void {
    this.#closed = true;
    for (const pgid of [...this.#running.keys(), ...this.#leftovers]) signalGroup(pgid, "SIGKILL");
    this.#running.clear();
    this.#leftovers.clear();
    try {
      rmSync(this.stateDir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // Best effort at exit.
    }
  }
}

// In a module of its own so that the terminal tool's availability check does not load this backend.
export { localSandboxProblem };

/** A `local` factory with options (the default `localFactory` has none). */
export function createLocalFactory(options: LocalEnvironmentOptions = {}): EnvironmentFactory {
  return {
    backend: "local",
    unavailableReason: () => {
      if (process.platform === "win32") return "the local backend needs bash and POSIX process groups (not Windows)";
      return localSandboxProblem(options);
    },
    create: (taskId) => LocalEnvironment.create(taskId, options),
  };
}

/** The built-in `local` backend. */
export const localFactory: EnvironmentFactory = createLocalFactory();
