/**
 * The singularity backend's `SandboxTransport`: one Apptainer instance per
 * task, driven through the CLI as local child processes.
 *
 * - `openSingularityInstance` runs `instance start` (hardened, see
 *   `singularity-command.ts`) and returns the transport into the instance.
 * - `start(argv)` spawns `apptainer exec ... instance://NAME ...` as a local
 *   child in a process group of its own (so a Ctrl-C aimed at mibyan's
 *   terminal does not reach it), stdin closed, working directory `/` (so no
 *   host directory is the command's directory, and a non-contained instance
 *   does not bind one). Its stdout goes to `onOutput` as it arrives; its stderr
 *   holds only the CLI's own messages and is kept for error messages. A CLI
 *   failure (`FATAL: no instance found ...`) ends the command with
 *   `exitCode: null` and an error, since the program never ran.
 * - `detach()` stops reading and SIGKILLs the local client (SIGKILL, because
 *   the CLI forwards catchable signals to the program, which `detach` must not
 *   signal); whatever runs inside the instance is left to the kill script.
 * - `close()` is `instance stop --force NAME` (its PID namespace and every
 *   process in it end), then any client still running is detached. An
 *   instance that is gone already counts as stopped. `closeSync()` does the
 *   same with `spawnSync`, for the process's `exit` event.
 */

import { execFile, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { constants as osConstants } from "node:os";

import {
  cliEnvironment,
  cliErrorLines,
  cliFailureDetail,
  commandArgs,
  instanceName,
  instanceStartArgs,
  instanceStopArgs,
  isInstanceGone,
  resolveSingularityBinary,
  type SingularityBinary,
} from "./singularity-command.js";
import { checkSingularityOptions, SINGULARITY_DEFAULTS, type SingularityOptions } from "./singularity-options.js";
import type { SandboxCommand, SandboxCommandEnd, SandboxTransport } from "./sandbox-transport.js";
import type { EnvVars } from "../util/env-vars.js";

/** The CLI's stderr kept per command (its last bytes), for error messages. */
const STDERR_KEEP = 8 * 1024;
/** Time allowed for `instance stop`. */
const STOP_TIMEOUT_MS = 60_000;

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI to its end; rejects only when it cannot be started at all. */
function runCli(binary: SingularityBinary, env: EnvVars, args: readonly string[], timeoutMs: number): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    execFile(
      binary.path,
      [...args],
      { cwd: "/", env, timeout: timeoutMs, killSignal: "SIGKILL", maxBuffer: 16 * 1024 * 1024, encoding: "utf8" },
      (error, stdout, stderr) => {
        if (error && typeof (error as NodeJS.ErrnoException).code === "string") {
          reject(new Error(`cannot run ${binary.path}: ${error.message}`, { cause: error }));
          return;
        }
        const failed = error as { code?: number | null; killed?: boolean; signal?: string | null } | null;
        if (failed?.killed || failed?.signal) {
          resolve({ code: null, stdout, stderr: `${stderr}\n${binary.flavor} ${args.slice(0, 2).join(" ")}: no answer within ${timeoutMs} ms` });
          return;
        }
        resolve({ code: failed ? (typeof failed.code === "number" ? failed.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

/** A running `exec` client, as `close` needs to see it. */
interface LiveCommand {
  detach(): void;
  child: ChildProcess;
}

export class SingularityTransport implements SandboxTransport {
  readonly description: string;
  private closing: Promise<void> | undefined;
  private readonly live = new Set<LiveCommand>();

  constructor(
    /** The CLI and its flavor. */
    readonly binary: SingularityBinary,
    /** The instance's name. */
    readonly instanceName: string,
    private readonly options: SingularityOptions,
    /** The environment every CLI call runs with (see `cliEnvironment`). */
    private readonly env: EnvVars,
  ) {
    this.description = `${binary.flavor} instance ${instanceName}`;
  }

  /** Whether `close` (or `closeSync`) was called. */
  get closed(): boolean {
    return this.closing !== undefined;
  }

  async start(argv: readonly string[], onOutput: (chunk: Uint8Array) => void): Promise<SandboxCommand> {
    if (this.closing) throw new Error(`${this.description} was stopped`);
    if (argv.length === 0) throw new Error("nothing to run: the argument list is empty");
    if (argv.some((arg) => arg.includes("\0"))) throw new Error("an argument contains a NUL character");

    const child = spawn(this.binary.path, commandArgs(this.options, this.instanceName, argv), {
      cwd: "/",
      env: this.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let stderr = "";
    let settled = false;
    let detached = false;
    let settle: (end: SandboxCommandEnd) => void = () => undefined;
    const done = new Promise<SandboxCommandEnd>((resolve) => {
      settle = (end) => {
        if (settled) return;
        settled = true;
        this.live.delete(live);
        resolve(end);
      };
    });

    /** How the client ended, as far as its exit status tells. */
    const endOf = (code: number | null, signal: NodeJS.Signals | null): SandboxCommandEnd => {
      const cliError = code !== 0 ? cliErrorLines(stderr) : undefined;
      if (cliError !== undefined) {
        return { exitCode: null, error: new Error(`${this.binary.flavor} exec in instance ${this.instanceName} failed: ${cliError}`) };
      }
      if (code !== null) return { exitCode: code };
      if (signal !== null && !detached) {
        return { exitCode: 128 + ((osConstants.signals as Record<string, number | undefined>)[signal] ?? 0) };
      }
      return { exitCode: null };
    };

    const live: LiveCommand = {
      child,
      detach: () => {
        if (settled) return;
        detached = true;
        child.stdout?.removeAllListeners("data");
        child.stderr?.removeAllListeners("data");
        child.stdout?.destroy();
        child.stderr?.destroy();
        const exited = child.exitCode !== null || child.signalCode !== null;
        if (!exited) {
          try {
            child.kill("SIGKILL");
          } catch {
            // already gone
          }
        }
        settle(exited ? endOf(child.exitCode, child.signalCode) : { exitCode: null });
      },
    };

    child.stdout!.on("data", (chunk: Buffer) => {
      if (!detached) onOutput(chunk);
    });
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-STDERR_KEEP);
    });
    // Errors on the pipes end in `close` like everything else.
    child.stdout!.on("error", () => undefined);
    child.stderr!.on("error", () => undefined);
    // `close`: exited, and both pipes closed (a background job holding stdout keeps it open until `detach`).
    child.on("close", (code, signal) => settle(endOf(code, signal)));

    return new Promise<SandboxCommand>((resolve, reject) => {
      child.once("spawn", () => {
        this.live.add(live);
        resolve({ done, detach: live.detach });
      });
      child.once("error", (error) => {
        if (child.pid === undefined) {
          settle({ exitCode: null, error });
          reject(new Error(`cannot run ${this.binary.path}: ${error.message}`, { cause: error }));
        }
      });
    });
  }

  /** Stops the instance (every process in it ends) and detaches what still runs here. Idempotent. */
  close(): Promise<void> {
    if (!this.closing) {
      this.closing = (async () => {
        try {
          const result = await runCli(this.binary, this.env, instanceStopArgs(this.instanceName), STOP_TIMEOUT_MS);
          if (result.code !== 0 && !isInstanceGone(result.stderr)) {
            throw new Error(`stopping ${this.description} failed: ${cliFailureDetail(result.code, result.stderr, result.stdout)}`);
          }
        } finally {
          for (const command of [...this.live]) command.detach();
        }
      })();
    }
    return this.closing;
  }

  /** `close` with a blocking `instance stop`, for the process's `exit` event. */
  closeSync(): void {
    if (this.closing) return;
    this.closing = Promise.resolve();
    spawnSync(this.binary.path, instanceStopArgs(this.instanceName), { cwd: "/", env: this.env, stdio: "ignore", timeout: 30_000, killSignal: "SIGKILL" });
    for (const command of [...this.live]) command.detach();
  }
}

/**
 * Starts the task's instance and returns the transport into it. A start that
 * fails is cleaned up (an instance may exist even though `start` reported an
 * error) and rejects with the CLI's reason.
 */
export async function openSingularityInstance(taskId: string, options: SingularityOptions): Promise<SingularityTransport> {
  checkSingularityOptions(options);
  const binary = resolveSingularityBinary(options);
  const env = cliEnvironment(options, binary.flavor);
  const name = instanceName(taskId);
  const timeoutMs = options.startTimeoutMs ?? SINGULARITY_DEFAULTS.startTimeoutMs;
  const result = await runCli(binary, env, instanceStartArgs(options, name), timeoutMs);
  if (result.code !== 0) {
    await runCli(binary, env, instanceStopArgs(name), STOP_TIMEOUT_MS).catch(() => undefined);
    throw new Error(`${binary.flavor} instance start of ${options.image} failed: ${cliFailureDetail(result.code, result.stderr, result.stdout)}`);
  }
  return new SingularityTransport(binary, name, options, env);
}
