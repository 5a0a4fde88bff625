/**
 * The built-in `terminal` tool: runs a shell command in the task's environment
 * and returns its merged output and exit code as a JSON string.
 *
 * Result shape (always a JSON object string):
 *   { "output": string, "exit_code": number, "error": string | null, "status"?: "timeout" | "cancelled" | "blocked" }
 *
 * The tool knows no backend. Each call asks the environment manager
 * (src/environments/manager.ts) for the environment of `ctx.taskId` (calls
 * without a task share the task "default"): created on first use on the
 * task's backend (config `terminal.backend`, default `local`, or what
 * `manager.setBackend(taskId, name)` chose), kept with its working directory
 * and exported variables between calls, closed when idle or at exit.
 *
 * Every command passes the approval gate first (src/approval/: parsed
 * dangerous-command detection, then the configured approval flow), told the
 * environment's isolation (`backend: env.isolation`); a refused command comes
 * back with `"status": "blocked"` and the reason.
 *
 * `pty: true` runs the command on a pseudo-terminal inside the environment
 * (src/terminal/pty-command.ts); `background: true` hands it to the process
 * registry (src/process/) and returns its id at once; the `process` tool
 * (src/tools/process.ts) manages it from there.
 */

import { stat } from "node:fs/promises";
import { isAbsolute } from "node:path";

import type { ApprovalGate } from "../approval/flow/gate.js";
import type { BackendInfo } from "../approval/flow/types.js";
import { backendPrerequisiteProblem } from "../environments/backend-prerequisites.js";
import { BACKEND_NAMES, isBackendName } from "../environments/backends.js";
import { closeMatches } from "../toolsets/suggest.js";
import { localSandboxProblem } from "../environments/local.js";
import { peekEnvironmentManager, type EnvironmentManager } from "../environments/manager.js";
import type { Environment, EnvironmentProvider } from "../environments/types.js";
import type { ProcessRegistry } from "../process/process-registry.js";
import { registry } from "../registry/singleton.js";
import type { FunctionSchema, ToolContext } from "../registry/types.js";
import { ToolUnavailableError } from "../registry/availability.js";
import { getConfig } from "../config/load-config.js";
import { MAX_BACKGROUND_TIMEOUT_SECONDS } from "../process/types.js";
import { checkWatchPatterns } from "../process/process-watch.js";
import { sessionIdOf, taskIdOf } from "./call-scope.js";
import { redactionSwitch, redactText, type RedactOutputOption } from "../redaction/tool-output.js";
import { cleanTerminalOutput } from "../terminal/ansi.js";
import type { CommandRunner, RunResult } from "../terminal/local-runner.js";
import { ptyCommand } from "../terminal/pty-command.js";
import { killedExitCode, killedStatus, parseTimeoutSeconds, type TimeoutLimits } from "../terminal/tool-timeout.js";
import { groupDigits } from "../util/format.js";
import type { EnvVars } from "../util/env-vars.js";

export const DEFAULT_TIMEOUT_SECONDS = 180;
/** What the gate is told for the legacy `runner` option, which runs on this machine. */
const LOCAL_BACKEND: BackendInfo = { name: "local" };
export const MAX_FOREGROUND_TIMEOUT_SECONDS = 600;
export const DEFAULT_MAX_OUTPUT_CHARS = 50_000;
/** Share of the output cap kept from the start; the rest comes from the end. */
export const OUTPUT_HEAD_RATIO = 0.2;

export const TERMINAL_SCHEMA: FunctionSchema = {
  name: "terminal",
  description: [
    "Run a shell command with bash in this task's environment (the local machine unless a sandbox backend is configured) and get back its combined stdout and stderr (in the order they were printed) and its exit code.",
    "Each call runs in a new non-interactive shell with stdin closed, but the task's shell state carries over: the working directory left by `cd` and exported variables (`export`, `unset`) apply to the next call of the same task. Shell options, functions, aliases and non-exported variables do not carry over. Use `workdir` to run one command in another directory without moving the task's working directory.",
    `Output is capped at ${groupDigits(DEFAULT_MAX_OUTPUT_CHARS)} characters: when it is longer, the beginning and the end are kept and the middle is replaced by an omission marker. Narrow large output yourself (grep, head, tail, wc -l, --quiet flags) rather than printing it whole.`,
    `The command and every process it started are killed after \`timeout\` seconds (default ${DEFAULT_TIMEOUT_SECONDS}, maximum ${MAX_FOREGROUND_TIMEOUT_SECONDS}).`,
    "Do not start long-running or never-ending work in the foreground (servers, file watchers, `tail -f`, `sleep` loops): start it with `background: true` and follow it with the `process` tool. Interactive programs (prompts waiting for input) only block a foreground call until the timeout: pass non-interactive flags such as `-y`, `--yes`, `--no-pager`, `--no-edit`, or start them with `background: true` (and `pty: true` if they need a terminal) and answer with process(action=\"submit\").",
    'Returns JSON: {"output": "...", "exit_code": 0, "error": null}; on a timeout, a cancellation or a command refused by the safety check it also has "status" ("timeout", "cancelled" or "blocked") and "error" explains what happened; a background start returns {"status": "background", "process_id": "proc_...", "exit_code": null}; do not try to get a blocked command past the check another way. A non-zero exit_code is not an error of the tool: read the output.',
  ].join("\n\n"),
  parameters: {
    type: "object",
    properties: {
      command: {
        type: "string",
        description: "The bash command line to run, e.g. `ls -la src` or `npm test 2>&1 | tail -n 50`.",
      },
      timeout: {
        type: "integer",
        description: `Seconds before the command is killed. Default ${DEFAULT_TIMEOUT_SECONDS}, maximum ${MAX_FOREGROUND_TIMEOUT_SECONDS}.`,
        minimum: 1,
        // No `maximum` keyword on purpose: schema validation would refuse a larger
        // value with a bare "must be <= 600", while the handler's own error tells the
        // model what to do instead (run it as a background process).
        default: DEFAULT_TIMEOUT_SECONDS,
      },
      workdir: {
        type: "string",
        description: "Absolute path of an existing directory to run this one command in. Defaults to the task's current working directory (where the last `cd` left it).",
      },
      background: {
        type: "boolean",
        description:
          "Start the command in the background and return at once with a `process_id` (servers, watchers, long builds). It runs until it ends or is killed, with no time limit unless `timeout` is given (then up to a week); manage it with the `process` tool (poll, log, wait, kill, write, submit). It starts in the task's working directory and exported variables, but its own `cd`/`export` do not carry to later calls.",
        default: false,
      },
      notify_on_complete: {
        type: "boolean",
        description: "With `background`: you are told when the process ends (its status, exit code and last output), without polling.",
        default: false,
      },
      watch_patterns: {
        type: "array",
        items: { type: "string" },
        maxItems: 10,
        description:
          "With `background`: plain substrings (not regular expressions) to watch for in its output, e.g. [\"listening on\", \"ERROR\"]; you are told when a line contains one (at most one notice per process every few seconds).",
      },
      pty: {
        type: "boolean",
        description:
          "Run the command in a pseudo-terminal, for programs that need one (they check isatty, print prompts or colours). Enter is a carriage return there. With `background`, answer its prompts later with process(action=\"submit\"). Its own `cd`/`export` do not carry to later calls.",
        default: false,
      },
    },
    required: ["command"],
    additionalProperties: false,
  },
};

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

/** Builds a terminal handler; the registered tool uses the defaults. */
export function createTerminalHandler(options: TerminalHandlerOptions = {}) {
  // The gate and the environments load on the first command, not when the tool is listed.
  const gate = options.gate ?? (async () => (await import("../approval/default-gate.js")).getApprovalGate());
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
        const [{ EnvironmentManager }, { createLocalFactory }] = await Promise.all([import("../environments/manager.js"), import("../environments/local.js")]);
        own ??= new EnvironmentManager({ factories: [createLocalFactory({ env })] });
      }
      return own;
    };
  } else environments = async () => (await import("../environments/manager.js")).getEnvironmentManager();
  const processes = options.processes ?? (async () => (await import("../process/default-registry.js")).getProcessRegistry());

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

    const decision = await (await gate()).check(command, { sessionId: sessionIdOf(ctx), backend, signal: ctx?.signal });
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

/**
 * The tool's availability, judged on the backend it will actually use (the
 * process-wide manager's default, else config `terminal.backend`): a known
 * backend name, its program, credentials and essential settings present, a
 * docker daemon socket where one is expected (checked without loading the
 * backend or spawning anything). Throws `ToolUnavailableError` with the reason, which the registry reports as it is.
 */
export function terminalBackendAvailable(env: EnvVars = process.env): boolean {
  let backend = "local";
  const manager = peekEnvironmentManager();
  try {
    backend = manager?.defaultBackend() ?? getConfig().config.terminal.backend ?? "local";
  } catch {
    // An unreadable config.yaml is reported where it is loaded; the tool then fails per call.
  }
  if (!(manager?.isKnownBackend(backend) ?? isBackendName(backend))) {
    const known = manager?.knownBackends() ?? [...BACKEND_NAMES];
    const matches = closeMatches(backend, known);
    const hint = matches.length > 0 ? `; did you mean: ${matches.join(", ")}?` : "";
    throw new ToolUnavailableError(`the terminal backend ${JSON.stringify(backend)} (terminal.backend) is not a known backend${hint} (known: ${known.join(", ")})`);
  }
  const problem = backendPrerequisiteProblem(backend, env);
  if (problem !== undefined) throw new ToolUnavailableError(problem);
  // A configured sandbox that cannot run refuses every command: say so in the listing, not only per call.
  if (backend === "local") {
    let sandboxProblem: string | undefined;
    try {
      sandboxProblem = localSandboxProblem();
    } catch (err) {
      throw new ToolUnavailableError(`the local sandbox setting is invalid, so local commands are refused: ${(err as Error).message}`);
    }
    if (sandboxProblem !== undefined) throw new ToolUnavailableError(sandboxProblem.replace(", so the command was not run", ", so local commands are refused"));
  }
  return true;
}

/** The handler the registered `terminal` tool uses. */
export const terminalHandler = createTerminalHandler();

registry.register({
  name: "terminal",
  toolset: "terminal",
  emoji: "💻",
  parallelSafe: false,
  description: "Run shell commands in the task's environment (local or a sandbox backend; bash, per-task cwd and exported variables, merged output, capped, process-group timeouts).",
  schema: TERMINAL_SCHEMA,
  handler: terminalHandler,
  checkFn: () => terminalBackendAvailable(),
  // The handler enforces the command's own timeout (and kills the process group);
  // this is only a backstop above the largest allowed timeout, an approval wait and the kill grace.
  timeoutMs: 20 * 60 * 1000,
  // The output is already capped at 50,000 characters; leave room for JSON escaping
  // so the registry never cuts the JSON itself.
  maxResultChars: 200_000,
  source: { kind: "builtin" },
});
