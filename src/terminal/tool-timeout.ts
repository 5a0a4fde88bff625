/**
 * The `timeout` side of the tools that run a process (terminal, execute_code):
 * reading the argument the model sent, and telling the model when the run was
 * cut short.
 */

import { TIMEOUT_EXIT_CODE } from "./process-group-types.js";

export interface TimeoutLimits {
  defaultSeconds: number;
  maxSeconds: number;
  /** Message for a value above `maxSeconds`, for a tool that has advice to give; otherwise the range error names both bounds. */
  overMax?: (seconds: number) => string;
}

/** Whole seconds from 1 to `maxSeconds`; `invalid` builds the tool's own argument error. */
export function parseTimeoutSeconds(value: unknown, limits: TimeoutLimits, invalid: (message: string) => Error): number {
  if (value === undefined || value === null) return limits.defaultSeconds;
  let seconds: number;
  if (typeof value === "number") seconds = value;
  // Models often quote numbers.
  else if (typeof value === "string" && /^\s*\d+\s*$/.test(value)) seconds = Number(value);
  else throw invalid(`timeout must be a whole number of seconds, got ${JSON.stringify(value)}.`);
  const { maxSeconds, overMax } = limits;
  if (overMax === undefined) {
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > maxSeconds) {
      throw invalid(`timeout must be a whole number of seconds from 1 to ${maxSeconds}, got ${seconds}.`);
    }
    return seconds;
  }
  if (!Number.isInteger(seconds) || seconds < 1) {
    throw invalid(`timeout must be a whole number of seconds of at least 1, got ${seconds}.`);
  }
  if (seconds > maxSeconds) throw invalid(overMax(seconds));
  return seconds;
}

export interface KilledStatus {
  error: string;
  status: "timeout" | "cancelled";
}

/**
 * Whether an AbortSignal's reason says a time limit fired: dispatch aborts a
 * call that ran past its `timeoutMs` with a `TimeoutError`, as
 * `AbortSignal.timeout()` does.
 */
export function isTimeoutReason(reason: unknown): boolean {
  return typeof reason === "object" && reason !== null && (reason as { name?: unknown }).name === "TimeoutError";
}

/**
 * The `error` and `status` fields for a run whose process group was killed;
 * `subject` is "Command", "Program", ... An abort whose reason is a time
 * limit (the call's, not the tool's own `timeout`) is a `timeout` too.
 */
export function killedStatus(
  run: { timedOut: boolean; aborted: boolean },
  subject: string,
  timeoutSeconds: number,
  abortReason?: unknown,
): KilledStatus | undefined {
  if (run.timedOut) return { error: `${subject} timed out after ${timeoutSeconds} seconds (process group killed)`, status: "timeout" };
  if (run.aborted && isTimeoutReason(abortReason)) {
    return { error: `${subject} was stopped by the call's time limit (process group killed)`, status: "timeout" };
  }
  if (run.aborted) return { error: `${subject} was cancelled (process group killed)`, status: "cancelled" };
  return undefined;
}

/** The exit code to report: 124 (as for the tool's own timeout) when the call's time limit killed the run. */
export function killedExitCode(run: { exitCode: number }, killed: KilledStatus | undefined): number {
  return killed?.status === "timeout" ? TIMEOUT_EXIT_CODE : run.exitCode;
}
