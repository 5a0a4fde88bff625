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

import { backendPrerequisiteProblem } from "../environments/backend-prerequisites.js";
import { BACKEND_NAMES, isBackendName } from "../environments/backends.js";
import { localSandboxProblem } from "../environments/local-sandbox-check.js";
import { sharedEnvironmentManager } from "../environments/shared-manager.js";
import { closeMatches } from "../toolsets/suggest.js";
import { registry } from "../registry/singleton.js";
import type { FunctionSchema, ToolContext } from "../registry/types.js";
import { ToolUnavailableError } from "../registry/availability.js";
import { getConfig } from "../config/load-config.js";
import { groupDigits } from "../util/format.js";
import type { EnvVars } from "../util/env-vars.js";
import { lazyToolBody } from "./handlers/lazy-body.js";
import type { TerminalHandlerOptions } from "./handlers/terminal.js";
import { DEFAULT_MAX_OUTPUT_CHARS, DEFAULT_TIMEOUT_SECONDS, MAX_FOREGROUND_TIMEOUT_SECONDS } from "../terminal/tool-limits.js";

export { DEFAULT_MAX_OUTPUT_CHARS, DEFAULT_TIMEOUT_SECONDS, MAX_FOREGROUND_TIMEOUT_SECONDS, OUTPUT_HEAD_RATIO } from "../terminal/tool-limits.js";
export type { CommandGate, TerminalHandlerOptions, TerminalToolResult } from "./handlers/terminal.js";

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

/**
 * Builds a terminal handler; the registered tool uses the defaults. Its body
 * (./handlers/terminal.ts) and everything a command needs load on the first
 * command, not when the tool is listed.
 */
export function createTerminalHandler(options: TerminalHandlerOptions = {}) {
  const body = lazyToolBody(async () => (await import("./handlers/terminal.js")).terminalToolBody(options));
  return function terminal(args: Record<string, unknown>, ctx: ToolContext): Promise<string> {
    return body(args, ctx);
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
  const manager = sharedEnvironmentManager();
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
