/**
 * An `Environment` over any `SandboxTransport`: the part every sandbox backend
 * (singularity, modal, daytona, vercel_sandbox) shares, so that a backend is
 * only the vendor call that starts a program and the one that deletes the
 * sandbox.
 *
 * It runs the same bash scripts inside the sandbox as the docker backend
 * (`sandbox-scripts.ts`):
 * - `create` runs the init script: a private state directory (`mktemp -d`) and
 *   the starting directory;
 * - `exec` starts `bash -c RUN bash COMMAND`: the task's shell state
 *   (`wrapCommand`), stderr merged into stdout in the program's own order, and
 *   a NUL-delimited trailer carrying the exit code and the task's working
 *   directory, which the `TrailerFilter` takes out of the output before it is
 *   counted. The trailer is authoritative: a transport that cannot report exit
 *   codes (or loses the stream after the trailer) still gives the right result;
 * - a timeout or an abort runs the kill script as a second command (the run's
 *   process group, session and descendants: SIGTERM, then SIGKILL after the
 *   grace period) and waits for it, then detaches the first command. The result
 *   is 124 (timeout) or 130 (abort), as on every backend;
 * - after the trailer, a background job that keeps the output stream open
 *   gets `pipeDrainMs` more, then the command is detached (the job runs on);
 * - `close` closes the transport (the sandbox is deleted).
 */

import { randomBytes } from "node:crypto";

import type { BackendInfo } from "../approval/flow/types.js";
import { CappedOutput } from "../terminal/output-buffer.js";
import { ABORT_EXIT_CODE, DEFAULT_KILL_GRACE_MS, DEFAULT_PIPE_DRAIN_MS, TIMEOUT_EXIT_CODE } from "../terminal/process-group.js";
import { buildInitScript, buildKillScript, buildRunScript, parseTrailer, trailerTag, TrailerFilter } from "./sandbox-scripts.js";
import type { SandboxCommandEnd, SandboxTransport } from "./sandbox-transport.js";
import { shellQuote, statePaths, wrapCommand, wrapOptionsFor, type ShellStatePaths } from "./shell-state.js";
import type { Environment, EnvironmentFactory, ExecOptions, ExecResult } from "./types.js";

export interface SandboxEnvironmentOptions {
  /** The backend's name: `daytona`, `vercel_sandbox`, `modal`, `singularity`. */
  backend: string;
  /** What the approval gate is told. Default `{ name: backend, hostMounts: false }`. */
  isolation?: BackendInfo;
  /** Starting directory inside the sandbox (created if missing). Default: `$HOME`, else `/`. */
  cwd?: string;
  /** SIGTERM→SIGKILL grace inside the sandbox on a timeout or an abort. Default 2 s. */
  killGraceMs?: number;
  /** How long to keep reading after the trailer (background jobs holding the stream). Default 250 ms. */
  pipeDrainMs?: number;
  /** Time allowed for the init script (the sandbox's first command). Default 120 s. */
  startTimeoutMs?: number;
  /**
   * The sandbox's `/tmp` outlives it (a non-contained Apptainer instance shares the host's), so
   * `close` removes the task's state directory (command outputs among it) before deleting the sandbox.
   */
  removeStateOnClose?: boolean;
}

/** A helper script's output and exit code. */
interface ScriptResult {
  output: string;
  end: SandboxCommandEnd;
}

let runCounter = 0;

/** Runs a short helper script to its end (or `timeoutMs`), collecting its output. */
async function runScript(transport: SandboxTransport, script: string, timeoutMs: number): Promise<ScriptResult> {
  const chunks: Buffer[] = [];
  const command = await transport.start(["bash", "-c", script], (chunk) => chunks.push(Buffer.from(chunk)));
  const timer = setTimeout(() => command.detach(), timeoutMs);
  try {
    const end = await command.done;
    return { output: Buffer.concat(chunks).toString("utf8"), end };
  } finally {
    clearTimeout(timer);
  }
}

function describeEnd(result: ScriptResult): string {
  const detail = result.end.error ? result.end.error.message : `exit code ${result.end.exitCode ?? "unknown"}`;
  const output = result.output.trim();
  return output ? `${detail}: ${output.slice(0, 500)}` : detail;
}

export class SandboxEnvironment implements Environment {
  readonly backend: string;
  readonly isolation: BackendInfo;
  private currentCwd: string;
  private closing: Promise<void> | undefined;
  private readonly paths: ShellStatePaths;
  /** Commands running now, so that `close` can kill them first. */
  private readonly running = new Set<() => Promise<unknown>>();

  private constructor(
    readonly taskId: string,
    /** The transport into the task's sandbox. */
    readonly transport: SandboxTransport,
    /** The task's private state directory inside the sandbox. */
    readonly stateDir: string,
    private readonly initialCwd: string,
    private readonly options: SandboxEnvironmentOptions,
  ) {
    this.backend = options.backend;
    this.isolation = options.isolation ?? { name: options.backend, hostMounts: false };
    this.currentCwd = initialCwd;
    this.paths = statePaths(stateDir);
  }

  /**
   * Prepares the task's state inside the sandbox behind `transport`. On failure
   * the transport is closed (the sandbox deleted) and the error says why.
   */
  static async create(taskId: string, transport: SandboxTransport, options: SandboxEnvironmentOptions): Promise<SandboxEnvironment> {
    try {
      if (options.cwd !== undefined && !options.cwd.startsWith("/")) {
        throw new Error(`${options.backend} cwd must be an absolute path: ${JSON.stringify(options.cwd)}`);
      }
      const init = await runScript(transport, buildInitScript(options.cwd), options.startTimeoutMs ?? 120_000);
      // Both fields arrive NUL-terminated, so a complete answer is recognisable even from a
      // transport that cannot report exit codes.
      const [stateDir, cwd, rest] = init.output.split("\u0000");
      if ((init.end.exitCode !== 0 && init.end.exitCode !== null) || !stateDir || !cwd || rest !== "") {
        const hint = /bash: (command )?not found|executable file not found|no such file/i.test(init.output + (init.end.error?.message ?? "")) ? " (the sandbox image must contain bash)" : "";
        throw new Error(`preparing ${transport.description} failed (${describeEnd(init)})${hint}`);
      }
      return new SandboxEnvironment(taskId, transport, stateDir, cwd, options);
    } catch (err) {
      await transport.close().catch(() => undefined);
      throw err;
    }
  }

  get cwd(): string {
    return this.currentCwd;
  }

  /** Whether `close` was called. */
  get closed(): boolean {
    return this.closing !== undefined;
  }

  async exec(command: string, options: ExecOptions): Promise<ExecResult> {
    if (this.closing) throw new Error(`the ${this.backend} environment of task ${this.taskId} is closed`);
    if (command.includes("\0")) throw new Error(`the command contains a NUL character, which cannot be passed to the ${this.backend} sandbox's shell`);
    if (options.cwd !== undefined && options.cwd.includes("\0")) throw new Error("the working directory contains a NUL character");
    const started = Date.now();
    if (options.signal?.aborted) {
      return { output: "", exitCode: ABORT_EXIT_CODE, timedOut: false, aborted: true, truncated: false, totalChars: 0, durationMs: 0 };
    }
    const runId = `${process.pid}-${++runCounter}-${randomBytes(4).toString("hex")}`;
    const nonce = randomBytes(12).toString("hex");
    const inner = wrapCommand(this.paths, wrapOptionsFor(this.initialCwd, options));
    const script = buildRunScript({ stateDir: this.stateDir, runId, paths: this.paths, inner, nonce });

    const output = new CappedOutput(options.maxOutputChars, { headRatio: options.headRatio ?? 0.2 });
    const filter = new TrailerFilter(trailerTag(nonce), (chunk) => output.push(chunk));
    const graceMs = this.options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
    const drainMs = this.options.pipeDrainMs ?? DEFAULT_PIPE_DRAIN_MS;

    let stopReason: "timeout" | "abort" | undefined;
    let killing: Promise<string | undefined> | undefined;
    const run = await this.transport.start(["bash", "-c", script, "bash", command], (chunk) => filter.push(Buffer.from(chunk)));

    // Stops the run: kill its tree inside the sandbox, then stop following it.
    const stop = (reason: "timeout" | "abort" | "close"): Promise<unknown> => {
      if (killing === undefined) {
        if (reason !== "close") stopReason = reason;
        killing = this.killRun(runId, graceMs).finally(() => run.detach());
      }
      return killing;
    };
    const stopOnClose = (): Promise<unknown> => stop("close");
    this.running.add(stopOnClose);
    const timer = setTimeout(() => void stop("timeout"), options.timeoutMs);
    const onAbort = (): void => void stop("abort");
    options.signal?.addEventListener("abort", onAbort, { once: true });
    let drainTimer: NodeJS.Timeout | undefined;
    filter.onValue = () => {
      drainTimer = setTimeout(() => run.detach(), drainMs);
    };

    let end: SandboxCommandEnd;
    try {
      end = await run.done;
    } finally {
      clearTimeout(timer);
      if (drainTimer !== undefined) clearTimeout(drainTimer);
      options.signal?.removeEventListener("abort", onAbort);
      this.running.delete(stopOnClose);
    }
    const cwdAfterKill = killing ? await killing : undefined;
    filter.end();
    output.end();

    const trailer = parseTrailer(filter.value);
    const cwd = trailer?.cwd || cwdAfterKill;
    if (cwd) this.currentCwd = cwd;
    const result: ExecResult = {
      output: output.toString(),
      exitCode: 0,
      timedOut: stopReason === "timeout",
      aborted: stopReason === "abort",
      truncated: output.truncated,
      totalChars: output.totalChars,
      durationMs: Date.now() - started,
    };
    if (stopReason === "timeout") result.exitCode = TIMEOUT_EXIT_CODE;
    else if (stopReason === "abort") result.exitCode = ABORT_EXIT_CODE;
    else if (trailer !== undefined) result.exitCode = trailer.exitCode;
    else if (end.exitCode !== null && !this.closing) {
      // The run script always prints its trailer; without it, the shell never got that far.
      result.exitCode = end.exitCode;
    } else {
      throw new Error(
        this.closing
          ? `the ${this.backend} environment of task ${this.taskId} was closed while the command ran`
          : `lost the command's result in ${this.transport.description}${end.error ? `: ${end.error.message}` : ""}`,
        end.error ? { cause: end.error } : undefined,
      );
    }
    return result;
  }

  /**
   * Signals one run's process tree inside the sandbox and waits until it is
   * gone. Resolves to the task's directory as the killed command left it.
   */
  private async killRun(runId: string, graceMs: number): Promise<string | undefined> {
    if (this.closing) return undefined;
    const script = buildKillScript({ stateDir: this.stateDir, runId, graceMs, cwdFile: this.paths.cwdFile });
    try {
      const result = await runScript(this.transport, script, graceMs + 15_000);
      const failed = result.end.exitCode !== 0 && result.end.exitCode !== null;
      return !failed && result.output !== "" ? result.output : undefined;
    } catch {
      // The sandbox cannot be reached; close() deletes it in any case.
      return undefined;
    }
  }

  /** Deletes the sandbox (and every process in it). Idempotent; `exec` rejects afterwards. */
  close(): Promise<void> {
    if (!this.closing) {
      // Kill what runs first (its tree, and stop following it), then delete the sandbox.
      const stops = [...this.running].map((stopRun) => stopRun().catch(() => undefined));
      this.closing = Promise.all(stops)
        .then(() => (this.options.removeStateOnClose ? this.removeState() : undefined))
        .then(() => this.transport.close());
    }
    return this.closing;
  }

  /** Best effort: a sandbox that cannot be reached any more is deleted all the same. */
  private async removeState(): Promise<void> {
    await runScript(this.transport, `rm -rf -- ${shellQuote(this.stateDir)}`, 15_000).catch(() => undefined);
  }

  /**
   * Best-effort synchronous deletion at process exit, when the transport offers one
   * (`removeStateOnClose` is not honoured here: it needs a command in the sandbox).
   */
  disposeSync(): void {
    if (this.closing) return;
    this.closing = Promise.resolve();
    this.transport.closeSync?.();
  }
}

/** What a sandbox backend module provides to `createSandboxFactory`. */
export interface SandboxBackendSpec<O> {
  backend: string;
  /** The backend's options, read for every new task (config section + the vendor's environment variables). */
  options: () => O;
  /** Why the backend cannot be used with these options (missing credentials or SDK), or undefined. */
  unavailableReason(options: O): string | undefined;
  /** Creates the task's sandbox and returns the transport into it. */
  open(taskId: string, options: O): Promise<SandboxTransport>;
  /** Environment options derived from the backend's options (starting directory, isolation, grace times). */
  environmentOptions?(options: O): Omit<SandboxEnvironmentOptions, "backend">;
}

/** An `EnvironmentFactory` for a sandbox backend: one sandbox per task. */
export function createSandboxFactory<O>(spec: SandboxBackendSpec<O>): EnvironmentFactory {
  return {
    backend: spec.backend,
    unavailableReason: () => {
      let options: O;
      try {
        options = spec.options();
      } catch (err) {
        return `its configuration is invalid: ${(err as Error).message}`;
      }
      return spec.unavailableReason(options);
    },
    async create(taskId: string): Promise<Environment> {
      const options = spec.options();
      const transport = await spec.open(taskId, options);
      return SandboxEnvironment.create(taskId, transport, { ...spec.environmentOptions?.(options), backend: spec.backend });
    },
  };
}
