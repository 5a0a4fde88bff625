/**
 * The options, result and exit codes of a supervised process group (process-group.ts),
 * in a file of their own: they are part of the public types (`runLocal`, `ExecResult`),
 * and this file's declarations need nothing from @types/node, unlike the supervisor's.
 */

import type { EnvVars } from "../util/env-vars.js";

/** Exit code reported when the time limit killed the program (as GNU `timeout` does). */
export const TIMEOUT_EXIT_CODE = 124;
/** Exit code reported when the caller's AbortSignal killed the program (128 + SIGINT). */
export const ABORT_EXIT_CODE = 130;
/** Time between SIGTERM and SIGKILL when killing a process group. */
export const DEFAULT_KILL_GRACE_MS = 2_000;
/** How long the pipe may stay open after the main process exited (background grandchildren). */
export const DEFAULT_PIPE_DRAIN_MS = 250;

export interface ProcessGroupOptions {
  /** Working directory; defaults to the current process's. */
  cwd?: string;
  /** The child's complete environment (as with `child_process.spawn`); defaults to `process.env`. */
  env?: EnvVars;
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

export interface ProcessGroupResult {
  /** Merged stdout+stderr, raw (not ANSI-stripped), cut to the cap with an omission marker. */
  output: string;
  /** The program's exit code; 124 on timeout, 130 on abort, 128+signo when killed by a signal. */
  exitCode: number;
  timedOut: boolean;
  aborted: boolean;
  /** Whether output was cut. */
  truncated: boolean;
  /** Characters the program printed in total (after UTF-8 decoding). */
  totalChars: number;
  durationMs: number;
  /** Name of the signal that ended the main process, if one did. */
  signal?: string;
}
