/**
 * What a terminal call runs: argument checks, the task's environment, the
 * approval gate, foreground or background execution, the result's JSON. Loaded
 * on the first command by `createTerminalHandler` (src/tools/terminal.ts), which keeps
 * the tool's schema, availability check and registration: listing tools never
 * loads this module or what it imports (environments, the process registry,
 * pty, output cleaning). The handler options and result types live here and
 * are re-exported by src/tools/terminal.ts.
 */

import { stat } from "node:fs/promises";
import { isAbsolute } from "node:path";

import type { ApprovalGate } from "../../approval/flow/gate.js";
import type { BackendInfo } from "../../approval/flow/types.js";
import type { EnvironmentManager } from "../../environments/manager.js";
import type { Environment, EnvironmentProvider } from "../../environments/types.js";
import type { ProcessRegistry } from "../../process/process-registry.js";
import type { ToolContext } from "../../registry/types.js";
import { MAX_BACKGROUND_TIMEOUT_SECONDS } from "../../process/types.js";
import { checkWatchPatterns } from "../../process/process-watch.js";
import { sessionIdOf, taskIdOf } from "../call-scope.js";
import { redactionSwitch, redactText, type RedactOutputOption } from "../../redaction/tool-output.js";
import { cleanTerminalOutput } from "../../terminal/ansi.js";
import type { CommandRunner, RunResult } from "../../terminal/local-runner.js";
import { ptyCommand } from "../../terminal/pty-command.js";
import { killedExitCode, killedStatus, parseTimeoutSeconds, type TimeoutLimits } from "../../terminal/tool-timeout.js";
import type { EnvVars } from "../../util/env-vars.js";
import { DEFAULT_MAX_OUTPUT_CHARS, DEFAULT_TIMEOUT_SECONDS, MAX_FOREGROUND_TIMEOUT_SECONDS, OUTPUT_HEAD_RATIO } from "../../terminal/tool-limits.js";

/** What the gate is told for the legacy `runner` option, which runs on this machine. */
const LOCAL_BACKEND: BackendInfo = { name: "local" };

export interface TerminalToolResult {
  output: string;
  /** `null` for a command started in the background. */
  exit_code: number | null;
  error: string | null;
  status?: "timeout" | "cancelled" | "blocked" | "background";
  /** For `background: true`: the id the `process` tool takes. */
  process_id?: string;
  pid?: number;
}

/** The part of the approval gate the tool uses. */
export type CommandGate = Pick<ApprovalGate, "check">;

export interface TerminalHandlerOptions {
  /** The approval gate every command passes first. Default: the process-wide gate (`getApprovalGate()`). */
  gate?: () => CommandGate | Promise<CommandGate>;
  /**
   * Where commands run: the task's environment comes from `environments.get(taskId)`.
   * Default: the process-wide `getEnvironmentManager()` (or, with `env`, a private
   * manager whose `local` backend starts shells from that environment).
   */
  environments?: EnvironmentProvider | (() => EnvironmentProvider);
  /**
   * Legacy: run every command through this function instead of an environment
   * (stateless: no per-task directory or variables; told to the gate as `local`).
   */
  runner?: CommandRunner;
  /** Output cap in characters. Default 50,000. */
  maxOutputChars?: number;
  /** The environment the `local` backend's shells start from. Default: the current process's. */
  env?: () => EnvVars;
  /**
   * Replace secrets in the output (API keys, tokens, passwords, private keys)
   * with `[REDACTED]` before the model sees them (the policy every tool shares:
   * src/redaction/tool-output.ts). Default: config `terminal.redact_output`
   * (default true), read at each call.
   */
  redactOutput?: RedactOutputOption;
  /** Where `background: true` registers its processes. Default: the process-wide registry (`getProcessRegistry()`). */
  processes?: () => ProcessRegistry | Promise<ProcessRegistry>;
}

/** Argument errors carry a message meant for the model. */
class TerminalArgumentError extends Error {}

function errorResult(message: string): string {
  const result: TerminalToolResult = { output: "", exit_code: -1, error: message };
  return JSON.stringify(result);
}

function validateCommand(value: unknown): string {
  if (typeof value !== "string") {
    throw new TerminalArgumentError(
      `command must be a string, got ${value === null ? "null" : Array.isArray(value) ? "array" : typeof value}.`,
    );
  }
  if (value.trim() === "") throw new TerminalArgumentError("command must not be empty.");
  if (value.includes("\0")) throw new TerminalArgumentError("command must not contain NUL characters.");
  return value;
}

const TIMEOUT_LIMITS: TimeoutLimits = {
  defaultSeconds: DEFAULT_TIMEOUT_SECONDS,
  maxSeconds: MAX_FOREGROUND_TIMEOUT_SECONDS,
  overMax: (seconds) =>
    `timeout of ${seconds} seconds exceeds the maximum of ${MAX_FOREGROUND_TIMEOUT_SECONDS} seconds for a foreground command. ` +
    "Work that needs longer (servers, watchers, long builds) must be started with background=true instead (then use the process tool to follow it); " +
    `otherwise use a timeout of at most ${MAX_FOREGROUND_TIMEOUT_SECONDS}.`,
};
/** `timeout` of a background process: a limit enforced inside its environment, not a foreground wait. */
const BACKGROUND_TIMEOUT_LIMITS: TimeoutLimits = { defaultSeconds: 0, maxSeconds: MAX_BACKGROUND_TIMEOUT_SECONDS };

// C0 controls (including tab, newline, NUL) and DEL.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

/** An optional boolean argument; models sometimes send "true"/"false" as strings. */
function parseFlag(value: unknown, name: string): boolean {
  if (value === undefined || value === null || value === false || value === "false") return false;
  if (value === true || value === "true") return true;
  throw new TerminalArgumentError(`${name} must be true or false, got ${JSON.stringify(value)}.`);
}

/** Checks the form of `workdir`; returns it, or undefined for the task's own directory. */
function parseWorkdir(value: unknown): string | undefined {
  // Models often fill optional strings with "": treat that as "not given".
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string") throw new TerminalArgumentError(`workdir must be a string, got ${typeof value}.`);
  if (CONTROL_CHARS.test(value)) {
    throw new TerminalArgumentError("workdir must not contain NUL, newline or other control characters.");
  }
  if (!isAbsolute(value)) {
    throw new TerminalArgumentError(`workdir must be an absolute path (starting with "/"), got ${JSON.stringify(value)}.`);
  }
  return value;
}

/**
 * On the local machine, checks that `workdir` is an existing directory, so the
 * model gets a precise error. Inside other environments the wrapper's own
 * `cd` reports a bad directory (exit code 1, bash's message).
 */
async function checkLocalWorkdir(value: string): Promise<void> {
  let info;
  try {
    info = await stat(value);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") throw new TerminalArgumentError(`workdir does not exist: ${value}`);
    if (code === "EACCES") throw new TerminalArgumentError(`workdir is not accessible (permission denied): ${value}`);
    throw new TerminalArgumentError(`workdir cannot be used: ${value} (${(err as Error).message})`);
  }
  if (!info.isDirectory()) throw new TerminalArgumentError(`workdir is not a directory: ${value}`);
}

function formatResult(run: RunResult, timeoutSeconds: number, redact: boolean, abortReason: unknown): string {
  const output = cleanTerminalOutput(run.output);
  const killed = killedStatus(run, "Command", timeoutSeconds, abortReason);
  const result: TerminalToolResult = {
    output: redact ? redactText(output) : output,
    exit_code: killedExitCode(run, killed),
    error: null,
    ...killed,
  };
  return JSON.stringify(result);
}

/**
 * The body of a terminal handler (`createTerminalHandler` in src/tools/terminal.ts loads it on the
 * first command); the registered tool uses the defaults.
 */
export function terminalToolBody(options: TerminalHandlerOptions = {}) {
  // The gate and the environments load on the first command, not when the tool is listed.
  const gate = options.gate ?? (async () => (await import("../../approval/default-gate.js")).getApprovalGate());
  const maxOutputChars = options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS;
  const redactOutput = redactionSwitch(options.redactOutput);
  let environments: () => EnvironmentProvider | Promise<EnvironmentProvider>;
  if (typeof options.environments === "function") environments = options.environments;
  else if (options.environments !== undefined) {
    const provider = options.environments;
    environments = () => provider;
  } else if (options.env !== undefined) {
    // A private manager whose local shells start from the given environment.
    let own: EnvironmentManager | undefined;
    const env = options.env;
    environments = async () => {
      if (own === undefined) {
        const [{ EnvironmentManager }, { createLocalFactory }] = await Promise.all([import("../../environments/manager.js"), import("../../environments/local.js")]);
        own ??= new EnvironmentManager({ factories: [createLocalFactory({ env })] });
      }
      return own;
    };
  } else environments = async () => (await import("../../environments/manager.js")).getEnvironmentManager();
  const processes = options.processes ?? (async () => (await import("../../process/default-registry.js")).getProcessRegistry());

  return async function terminal(args: Record<string, unknown>, ctx: ToolContext): Promise<string> {
    let command: string;
    let timeoutSeconds: number;
    let workdir: string | undefined;
    let background: boolean;
    let pty: boolean;
    let notifyOnComplete: boolean;
    let watchPatterns: string[];
    try {
      const a = args ?? {};
      command = validateCommand(a.command);
      background = parseFlag(a.background, "background");
      pty = parseFlag(a.pty, "pty");
      notifyOnComplete = parseFlag(a.notify_on_complete, "notify_on_complete");
      // A background process has no time limit unless `timeout` is given; then up to a week.
      timeoutSeconds = background
        ? a.timeout === undefined || a.timeout === null
          ? 0
          : parseTimeoutSeconds(a.timeout, BACKGROUND_TIMEOUT_LIMITS, (message) => new TerminalArgumentError(message))
        : parseTimeoutSeconds(a.timeout, TIMEOUT_LIMITS, (message) => new TerminalArgumentError(message));
      try {
        watchPatterns = checkWatchPatterns(a.watch_patterns);
      } catch (err) {
        throw new TerminalArgumentError((err as Error).message);
      }
      if (!background && (notifyOnComplete || watchPatterns.length > 0)) {
        throw new TerminalArgumentError("notify_on_complete and watch_patterns apply to background processes only (background: true).");
      }
      workdir = parseWorkdir(a.workdir);
      if (background && options.runner !== undefined) throw new TerminalArgumentError("background processes are not available with a custom command runner.");
    } catch (err) {
      if (err instanceof TerminalArgumentError) return errorResult(err.message);
      throw err;
    }

    let environment: Environment | undefined;
    if (options.runner === undefined) {
      try {
        environment = await (await environments()).get(taskIdOf(ctx));
      } catch (err) {
        return errorResult(`Could not start the terminal environment: ${(err as Error).message}`);
      }
    }
    const backend = environment?.isolation ?? LOCAL_BACKEND;

    if (workdir !== undefined && backend.name === "local") {
      try {
        await checkLocalWorkdir(workdir);
      } catch (err) {
        if (err instanceof TerminalArgumentError) return errorResult(err.message);
        throw err;
      }
    }

    const decision = await (await gate()).check(command, { sessionId: sessionIdOf(ctx), backend, signal: ctx?.signal, approvalScope: ctx?.approvalScope });
    if (!decision.allowed) {
      const result: TerminalToolResult = { output: "", exit_code: -1, error: decision.reason, status: "blocked" };
      return JSON.stringify(result);
    }

    if (background) {
      try {
        const registry = await processes();
        const info = await registry.start(environment!, command, {
          sessionId: sessionIdOf(ctx),
          pty,
          timeoutSeconds,
          notifyOnComplete,
          watchPatterns,
          ...(workdir !== undefined ? { cwd: workdir } : {}),
          ...(ctx?.signal ? { signal: ctx.signal } : {}),
        });
        const result: TerminalToolResult = {
          output: "",
          exit_code: null,
          error: null,
          status: "background",
          process_id: info.id,
          pid: info.pid,
        };
        return JSON.stringify(result);
      } catch (err) {
        return errorResult(`Could not start the background process: ${(err as Error).message}`);
      }
    }

    const limits = { timeoutMs: timeoutSeconds * 1000, signal: ctx?.signal, maxOutputChars, headRatio: OUTPUT_HEAD_RATIO };
    const line = pty ? ptyCommand(command) : command;
    let run: RunResult;
    try {
      run = environment
        ? await environment.exec(line, { ...limits, cwd: workdir })
        : await options.runner!(line, { ...limits, cwd: workdir, env: options.env?.() });
    } catch (err) {
      return errorResult((err as Error).message);
    }
    return formatResult(run, timeoutSeconds, redactOutput(), ctx?.signal?.reason);
  };
}
