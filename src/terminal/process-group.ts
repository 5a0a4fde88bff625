/**
 * Runs one program in a process group of its own and supervises it to the end.
 * The terminal's `runLocal` and execute_code's `runCode` both sit on top of it.
 *
 * - `argv` runs behind `sh -c 'exec 2>&1; exec "$@"'`: stderr is merged into
 *   stdout on one pipe (so both keep their real order), stdin is closed, and
 *   the `exec`s keep the pid, the process group and an IPC channel (fd 3).
 *   A bash script that merges stderr itself (`exec 2>&1` on its first line)
 *   can skip that extra `sh` (`mergeStderr: "program"`, about a millisecond
 *   per command); what it writes to stderr before that line is still kept.
 * - `detached: true` (`setsid`) gives the child its own group, so a timeout or
 *   an abort kills the whole tree: SIGTERM to the group, then SIGKILL once the
 *   grace period has passed if anything in it survived.
 * - Output goes through a `CappedOutput`, so memory stays bounded no matter how
 *   much the program prints.
 * - A background grandchild that inherited the pipe (`sleep 100 &`) cannot
 *   make the run hang: once the main process has exited, the pipe gets only a
 *   short time to close before reading stops.
 */

import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { constants as osConstants } from "node:os";
import { performance } from "node:perf_hooks";

import { CappedOutput } from "./output-buffer.js";
import {
  ABORT_EXIT_CODE,
  DEFAULT_KILL_GRACE_MS,
  DEFAULT_PIPE_DRAIN_MS,
  TIMEOUT_EXIT_CODE,
  type ProcessGroupOptions,
  type ProcessGroupResult,
} from "./process-group-types.js";

export {
  ABORT_EXIT_CODE,
  DEFAULT_KILL_GRACE_MS,
  DEFAULT_PIPE_DRAIN_MS,
  TIMEOUT_EXIT_CODE,
  type ProcessGroupOptions,
  type ProcessGroupResult,
} from "./process-group-types.js";

/** Why the supervisor killed the group. */
export type KillReason = "timeout" | "abort";

export interface SpawnGroupOptions extends ProcessGroupOptions {
  /** Open an IPC channel (fd 3, JSON serialization) to the child. */
  ipc?: boolean;
  /** SIGKILL whatever is left in the group as soon as the main process exits. */
  killLeftoversOnExit?: boolean;
  /**
   * Who merges stderr into stdout. "launcher" (default): the `sh` launcher, for
   * any program. "program": `argv` is spawned directly and merges it itself;
   * stderr still has a pipe of its own, read into the same output, for what
   * the program prints before its merge.
   */
  mergeStderr?: "launcher" | "program";
  /** `performance.now()` that `durationMs` counts from, when the caller's run began before the spawn. */
  startedAt?: number;
  /** Called once when a timeout or abort starts killing the group, before SIGTERM is sent. */
  onKill?: (reason: KillReason) => void;
  /** Called once when the main process exits; the result waits until the returned promise settles. */
  onExit?: () => PromiseLike<unknown> | void;
}

export interface SpawnedGroup {
  /** The main process, for callers that talk to it over IPC. */
  child: ChildProcess;
  /** Rejects with the spawn error if the program could not be started (missing cwd or binary). */
  result: Promise<ProcessGroupResult>;
}

const LAUNCHER = 'exec 2>&1; exec "$@"';
/** `mergeStderr: "program"`: stdout buffered at most this much while the stderr pipe is still open. */
const MAX_HELD_STDOUT_BYTES = 64 * 1024;
const LAUNCHER_SHELL = "/bin/sh";

/** Is any live (non-zombie) process left in the group? */
function groupAlive(pgid: number): boolean {
  if (!Number.isSafeInteger(pgid) || pgid <= 1) return false;
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
  // -0 would be this process's own group and -1 every process: a group is a pid above 1, or nothing is sent.
  if (!Number.isSafeInteger(pgid) || pgid <= 1) return;
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

function exitCodeOf(killReason: KillReason | undefined, code: number | null, signal: NodeJS.Signals | null): number {
  if (killReason === "timeout") return TIMEOUT_EXIT_CODE;
  if (killReason === "abort") return ABORT_EXIT_CODE;
  if (code !== null) return code;
  if (signal !== null) return 128 + ((osConstants.signals as Record<string, number | undefined>)[signal] ?? 0);
  return 1;
}

/**
 * Starts `argv` in its own process group. Throws when `spawn` rejects its
 * arguments outright; a program that fails to start rejects `result` instead.
 */
export function spawnGroup(argv: readonly string[], options: SpawnGroupOptions): SpawnedGroup {
  const started = options.startedAt ?? performance.now();
  const output = new CappedOutput(options.maxOutputChars, { headRatio: options.headRatio ?? 0.2 });
  const killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const pipeDrainMs = options.pipeDrainMs ?? DEFAULT_PIPE_DRAIN_MS;
  const { signal, timeoutMs } = options;

  const direct = options.mergeStderr === "program";
  const stderrStdio = direct ? "pipe" : "ignore";
  const [file, ...args] = direct ? argv : [LAUNCHER_SHELL, "-c", LAUNCHER, "sh", ...argv];
  const child = spawn(file!, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: options.ipc ? ["ignore", "pipe", stderrStdio, "ipc"] : ["ignore", "pipe", stderrStdio],
    serialization: "json",
    detached: true,
    windowsHide: true,
  });
  const streams = direct ? [child.stdout!, child.stderr!] : [child.stdout!];
  const pid = child.pid;

  const result = new Promise<ProcessGroupResult>((resolve, reject) => {
    let finished = false;
    let mainExited = false;
    let exitCode: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;
    let streamDone = false;
    let openStreams = streams.length;
    let heldStdout: Buffer[] | undefined = direct ? [] : undefined;
    let heldBytes = 0;
    const releaseStdout = () => {
      if (!heldStdout) return;
      for (const chunk of heldStdout) output.push(chunk);
      heldStdout = undefined;
    };
    let killReason: KillReason | undefined;
    /** False while a kill is under way: the group is neither gone nor past its last SIGKILL chance. */
    let groupSettled = true;
    /** True while `onExit`'s promise is pending. */
    let held = false;

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
      if (finished || !mainExited || !streamDone || !groupSettled || held) return;
      finished = true;
      cleanup();
      releaseStdout();
      output.end();
      const run: ProcessGroupResult = {
        output: output.toString(),
        exitCode: exitCodeOf(killReason, exitCode, exitSignal),
        timedOut: killReason === "timeout",
        aborted: killReason === "abort",
        truncated: output.truncated,
        totalChars: output.totalChars,
        durationMs: Math.round(performance.now() - started),
      };
      if (exitSignal !== null) run.signal = exitSignal;
      resolve(run);
    };

    const stopReading = () => {
      if (streamDone) return;
      releaseStdout();
      for (const stream of streams) {
        stream.removeAllListeners("data");
        stream.destroy();
      }
      streamDone = true;
      maybeFinish();
    };

    const killGroup = (reason: KillReason) => {
      if (killReason || finished || pid === undefined) return;
      if (mainExited) {
        // The program already finished on its own; only leftover readers of the pipe
        // remain. Do not relabel the result, just stop waiting.
        stopReading();
        return;
      }
      killReason = reason;
      groupSettled = false;
      options.onKill?.(reason);
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

    const streamEnded = () => {
      openStreams -= 1;
      if (openStreams > 0) return;
      streamDone = true;
      maybeFinish();
    };
    // With two pipes, what reaches stderr (before the program's own merge) was
    // printed first, but its events may come after stdout's: stdout waits
    // until the stderr pipe closes (or has buffered more than a little).
    child.stdout!.on("data", (chunk: Buffer) => {
      if (!heldStdout) return output.push(chunk);
      heldStdout.push(chunk);
      heldBytes += chunk.length;
      if (heldBytes > MAX_HELD_STDOUT_BYTES) releaseStdout();
    });
    child.stderr?.on("data", (chunk: Buffer) => output.push(chunk));
    child.stderr?.on("close", releaseStdout);
    for (const stream of streams) {
      // "close" follows "error" as well, so counting closes is enough.
      stream.on("close", streamEnded);
      stream.on("error", () => undefined);
    }

    child.on("error", (err: Error) => {
      // With a pid the program did start, and a later error can only be a failed IPC
      // send, which its own callback reports (signals go through process.kill).
      if (finished || pid !== undefined) return;
      finished = true;
      cleanup();
      for (const stream of streams) stream.destroy();
      reject(err);
    });

    child.on("exit", (code, sig) => {
      mainExited = true;
      exitCode = code;
      exitSignal = sig;
      if (timeoutTimer) {
        clearTimeout(timeoutTimer);
        timeoutTimer = undefined;
      }
      if (options.killLeftoversOnExit && pid !== undefined) signalGroup(pid, "SIGKILL");
      if (options.onExit) {
        held = true;
        const release = () => {
          held = false;
          maybeFinish();
        };
        // A failing hook must not keep the run open forever.
        void new Promise((settle) => settle(options.onExit!())).then(release, release);
      }
      if (!streamDone) drainTimer = setTimeout(stopReading, pipeDrainMs);
      maybeFinish();
    });

    if (Number.isFinite(timeoutMs) && timeoutMs > 0) {
      timeoutTimer = setTimeout(() => {
        timeoutTimer = undefined;
        killGroup("timeout");
      }, timeoutMs);
    }
    signal?.addEventListener("abort", onAbort, { once: true });
    if (signal?.aborted) onAbort();
  });
  return { child, result };
}
