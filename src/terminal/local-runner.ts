/**
 * Runs one shell command on the local machine and collects its output.
 *
 * - The command runs under `bash -c` (no login shell, no rc files), with stdin
 *   closed and stderr merged into stdout on the same pipe, so both streams keep
 *   their real order.
 * - The child gets its own process group (`detached: true`, i.e. `setsid`), so
 *   a timeout or an abort kills the whole tree: SIGTERM to the group, then
 *   SIGKILL once a short grace period has passed if anything in it survived.
 * - Output is collected through a `CappedOutput`, so memory stays bounded no
 *   matter how much the command prints.
 * - A background grandchild that inherited the pipe (`sleep 100 &`) cannot
 *   make the call hang: once the main process has exited, the pipe gets only a
 *   short time to close before reading stops.
 *
 * Other backends (containers, SSH, PTY) are meant to implement the same
 * `CommandRunner` signature.
 */

import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { constants as osConstants } from "node:os";
import { performance } from "node:perf_hooks";

import { CappedOutput } from "./output-buffer.js";

/** Exit code reported when the time limit killed the command (as GNU `timeout` does). */
export const TIMEOUT_EXIT_CODE = 124;
/** Exit code reported when the caller's AbortSignal killed the command (128 + SIGINT). */
export const ABORT_EXIT_CODE = 130;
/** Time between SIGTERM and SIGKILL when killing a process group. */
export const DEFAULT_KILL_GRACE_MS = 2_000;
/** How long the pipe may stay open after the main process exited (background grandchildren). */
export const DEFAULT_PIPE_DRAIN_MS = 250;

export interface RunLocalOptions {
  /** Working directory; defaults to the current process's. */
  cwd?: string;
  /** The child's complete environment (as with `child_process.spawn`); defaults to `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Time limit in milliseconds; `0`, a negative or a non-finite value means none. */
  timeoutMs: number;
  /** Aborting it kills the process group; the result then has `aborted: true` and exit code 130. */
  signal?: AbortSignal;
  /** Output kept in memory and returned (head and tail); the rest is counted and dropped. */
  maxOutputChars: number;
  /** Share of `maxOutputChars` kept from the start of the output. Default 0.2. */
  headRatio?: number;
  /** SIGTERM→SIGKILL grace period. Default 2000 ms. */
  killGraceMs?: number;
  /** How long to keep reading after the main process exited. Default 250 ms. */
  pipeDrainMs?: number;
}

export interface RunResult {
  /** Merged stdout+stderr, raw (not ANSI-stripped), cut to the cap with an omission marker. */
  output: string;
  /** The command's exit code; 124 on timeout, 130 on abort, 128+signo when killed by a signal. */
  exitCode: number;
  timedOut: boolean;
  aborted: boolean;
  /** Whether output was cut. */
  truncated: boolean;
  /** Characters the command printed in total (after UTF-8 decoding). */
  totalChars: number;
  durationMs: number;
  /** Name of the signal that ended the main process, if one did. */
  signal?: string;
}

/** The signature every command backend implements. */
export type CommandRunner = (command: string, options: RunLocalOptions) => Promise<RunResult>;

/**
 * `sh` merges stderr into stdout (one pipe, so writes interleave in their real
 * order) and then replaces itself with `bash -c <command>`. Going through `sh`
 * keeps the user's script byte-for-byte unchanged (line numbers in error
 * messages stay right) and, unlike an outer bash, does not source `$BASH_ENV`
 * a second time. The pid, and so the process group, stays the same across the
 * `exec`.
 */
const LAUNCHER = 'exec 2>&1; exec bash -c "$1" bash';
const LAUNCHER_SHELL = "/bin/sh";

/** Is any live (non-zombie) process left in the group? */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    // EPERM means it exists but is not ours to signal; treat as alive.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  if (process.platform !== "linux") return true;
  // kill(-pgid, 0) also succeeds for zombies nobody reaped yet (orphans wait
  // for init to reap them); they are dead, so look at the actual states.
  try {
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${entry}/stat`, "latin1");
      } catch {
        continue;
      }
      // Fields after the parenthesised command name: state ppid pgrp ...
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") return true;
    }
    return false;
  } catch {
    return true;
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

function signalNumber(name: string): number | undefined {
  return (osConstants.signals as Record<string, number | undefined>)[name];
}

export function runLocal(command: string, options: RunLocalOptions): Promise<RunResult> {
  const started = performance.now();
  const output = new CappedOutput(options.maxOutputChars, { headRatio: options.headRatio ?? 0.2 });
  const killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const pipeDrainMs = options.pipeDrainMs ?? DEFAULT_PIPE_DRAIN_MS;
  const { signal } = options;

  if (signal?.aborted) {
    return Promise.resolve({
      output: "",
      exitCode: ABORT_EXIT_CODE,
      timedOut: false,
      aborted: true,
      truncated: false,
      totalChars: 0,
      durationMs: 0,
    });
  }

  return new Promise<RunResult>((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn(LAUNCHER_SHELL, ["-c", LAUNCHER, "sh", command], {
        cwd: options.cwd,
        env: options.env ?? process.env,
        stdio: ["ignore", "pipe", "ignore"],
        detached: true,
        windowsHide: true,
      });
    } catch (err) {
      reject(err);
      return;
    }
    const stdout = child.stdout!;

    let finished = false;
    let mainExited = false;
    let exitCode: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;
    let streamDone = false;
    /** Why we are killing the group, if we are. */
    let killReason: "timeout" | "abort" | undefined;
    /** Set once the group is gone (or SIGKILL was sent and had its chance). */
    let groupSettled = true;

    let timeoutTimer: NodeJS.Timeout | undefined;
    let drainTimer: NodeJS.Timeout | undefined;
    let killPoll: NodeJS.Timeout | undefined;

    const cleanup = () => {
      if (timeoutTimer) clearTimeout(timeoutTimer);
      if (drainTimer) clearTimeout(drainTimer);
      if (killPoll) clearTimeout(killPoll);
      signal?.removeEventListener("abort", onAbort);
    };

    const maybeFinish = () => {
      if (finished || !mainExited || !streamDone || !groupSettled) return;
      finished = true;
      cleanup();
      output.end();
      let code: number;
      if (killReason === "timeout") code = TIMEOUT_EXIT_CODE;
      else if (killReason === "abort") code = ABORT_EXIT_CODE;
      else if (exitCode !== null) code = exitCode;
      else if (exitSignal !== null) code = 128 + (signalNumber(exitSignal) ?? 0);
      else code = 1;
      const result: RunResult = {
        output: output.toString(),
        exitCode: code,
        timedOut: killReason === "timeout",
        aborted: killReason === "abort",
        truncated: output.truncated,
        totalChars: output.totalChars,
        durationMs: Math.round(performance.now() - started),
      };
      if (exitSignal !== null) result.signal = exitSignal;
      resolve(result);
    };

    const stopReading = () => {
      if (streamDone) return;
      stdout.removeAllListeners("data");
      stdout.destroy();
      streamDone = true;
      maybeFinish();
    };

    const killGroup = (reason: "timeout" | "abort") => {
      if (killReason || finished) return;
      const pid = child.pid;
      if (pid === undefined) return;
      if (mainExited) {
        // The command already finished on its own; only leftover readers of the pipe
        // remain. Do not relabel the result, just stop waiting.
        stopReading();
        return;
      }
      killReason = reason;
      groupSettled = false;
      signalGroup(pid, "SIGTERM");
      const termSent = performance.now();
      let killSent = false;
      const poll = () => {
        killPoll = undefined;
        if (finished) return;
        if (!groupAlive(pid)) {
          groupSettled = true;
          maybeFinish();
          return;
        }
        const elapsed = performance.now() - termSent;
        if (!killSent && elapsed >= killGraceMs) {
          signalGroup(pid, "SIGKILL");
          killSent = true;
        } else if (killSent && elapsed >= killGraceMs + 1_000) {
          // SIGKILL cannot be ignored; whatever still shows up is stuck in the kernel
          // (uninterruptible sleep) and will die when it leaves it. Stop waiting.
          groupSettled = true;
          maybeFinish();
          return;
        }
        killPoll = setTimeout(poll, 25);
      };
      killPoll = setTimeout(poll, 10);
    };

    function onAbort() {
      killGroup("abort");
    }

    stdout.on("data", (chunk: Buffer) => {
      output.push(chunk);
    });
    stdout.on("error", () => {
      streamDone = true;
      maybeFinish();
    });
    stdout.on("close", () => {
      streamDone = true;
      maybeFinish();
    });

    child.on("error", (err: NodeJS.ErrnoException) => {
      // Only spawn failures reach here (we signal through process.kill, not child.kill).
      if (finished) return;
      finished = true;
      cleanup();
      stdout.destroy();
      const where = options.cwd !== undefined ? ` (cwd: ${options.cwd})` : "";
      reject(new Error(`Failed to start command${where}: ${err.message}`, { cause: err }));
    });

    child.on("exit", (code, sig) => {
      mainExited = true;
      exitCode = code;
      exitSignal = sig;
      if (timeoutTimer) {
        clearTimeout(timeoutTimer);
        timeoutTimer = undefined;
      }
      if (!streamDone) drainTimer = setTimeout(stopReading, pipeDrainMs);
      maybeFinish();
    });

    if (Number.isFinite(options.timeoutMs) && options.timeoutMs > 0) {
      timeoutTimer = setTimeout(() => {
        timeoutTimer = undefined;
        killGroup("timeout");
      }, options.timeoutMs);
    }
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
