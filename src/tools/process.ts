/**
 * The built-in `process` tool: manages the background processes that
 * `terminal` started with `background: true` (src/process/process-registry.ts).
 *
 * Actions: `list`, `poll`, `log`, `wait`, `kill`, `write`, `submit`, `close`.
 * Every action but `list` names a `process_id`; an id that does not exist and
 * one that belongs to another session get the same `not_found` answer.
 * Output handed to the model is cleaned (ANSI escapes, CRLF) and redacted like
 * `terminal`'s.
 *
 * Result: a JSON object string; `{"error": "...", "code": "not_found" | "invalid_state" | "invalid_arguments"}` on failure.
 */

import type { ProcessInfo, ProcessRegistry } from "../process/process-registry.js";
import type { RedactOutputOption } from "../redaction/tool-output.js";
import { redactionSource, redactTextLazily } from "./handlers/lazy-redaction.js";
import { registry } from "../registry/singleton.js";
import { sessionIdOf } from "./call-scope.js";
import type { FunctionSchema, ToolContext } from "../registry/types.js";

export const PROCESS_ACTIONS = ["list", "poll", "log", "wait", "kill", "write", "submit", "close"] as const;
export type ProcessAction = (typeof PROCESS_ACTIONS)[number];

export const DEFAULT_WAIT_SECONDS = 60;
export const MAX_WAIT_SECONDS = 600;
export const DEFAULT_LOG_LINES = 200;
const MAX_LOG_LINES = 2_000;
/** Characters of output `wait` returns (the latest). */
const WAIT_OUTPUT_CHARS = 50_000;
/** Longest input one `write` may send. */
const MAX_INPUT_CHARS = 64 * 1024;

export const PROCESS_SCHEMA: FunctionSchema = {
  name: "process",
  description: [
    "Manage background processes started with terminal(background=true) in this session.",
    "Actions: `list` (all of this session's processes); `poll` (status, exit code and the latest output of one process); `log` (lines of its full output: the last `limit` lines, or from line `offset`); `wait` (until it ends or `timeout` seconds pass; returns its output); `kill` (SIGTERM to the process and everything it started, SIGKILL after a grace period); `write` (send `data` to its input as is); `submit` (send `data` followed by Enter, e.g. to answer a prompt); `close` (end its input, so a program reading it sees end-of-file).",
    "A process started with pty=true reads input through a terminal: use `submit` to answer prompts; `write` with \"\\u0003\" sends Ctrl-C.",
  ].join("\n\n"),
  parameters: {
    type: "object",
    properties: {
      action: { type: "string", enum: [...PROCESS_ACTIONS], description: "What to do." },
      process_id: { type: "string", description: "The id terminal returned (`proc_...`). Required for every action but `list`." },
      data: { type: "string", description: "For `write` and `submit`: the text to send." },
      timeout: {
        type: "integer",
        minimum: 0,
        description: `For \`wait\`: seconds to wait at most (default ${DEFAULT_WAIT_SECONDS}, maximum ${MAX_WAIT_SECONDS}).`,
      },
      offset: { type: "integer", minimum: 1, description: "For `log`: first line to return (1-based). Default: the last `limit` lines." },
      limit: { type: "integer", minimum: 1, description: `For \`log\`: number of lines (default ${DEFAULT_LOG_LINES}, at most ${MAX_LOG_LINES}).` },
    },
    required: ["action"],
    additionalProperties: false,
  },
};

export interface ProcessHandlerOptions {
  /** The registry to act on. Default: the process-wide one (`getProcessRegistry()`). */
  processes?: () => ProcessRegistry | Promise<ProcessRegistry>;
  /** Redact secrets in output (src/redaction/tool-output.ts). Default: config `terminal.redact_output` (default true). */
  redactOutput?: RedactOutputOption;
}

class ArgumentError extends Error {}

function fail(message: string, code: string): string {
  return JSON.stringify({ error: message, code });
}

function describe(info: ProcessInfo): Record<string, unknown> {
  const now = info.endedAt ?? Date.now();
  const described: Record<string, unknown> = {
    process_id: info.id,
    command: info.command,
    status: info.status,
    exit_code: info.exitCode ?? null,
    pid: info.pid,
    pty: info.pty,
    task_id: info.taskId,
    backend: info.backend,
    started_at: new Date(info.startedAt).toISOString(),
    uptime_seconds: Math.round((now - info.startedAt) / 100) / 10,
  };
  if (info.endedAt !== undefined) described.ended_at = new Date(info.endedAt).toISOString();
  if (info.reason) described.reason = info.reason;
  if (info.source === "elsewhere" && info.managedBy) described.managed_by = `mibyan process ${info.managedBy.pid} on ${info.managedBy.host}`;
  if (info.source === "receipt") described.from_receipt = true;
  if (info.warning) described.warning = info.warning;
  return described;
}

function integerArg(args: Record<string, unknown>, name: string, min: number, max: number, fallback: number | undefined): number | undefined {
  const value = args[name];
  if (value === undefined || value === null) return fallback;
  const number = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  if (typeof number !== "number" || !Number.isInteger(number) || number < min) {
    throw new ArgumentError(`${name} must be an integer of at least ${min}.`);
  }
  if (number > max) throw new ArgumentError(`${name} must be at most ${max}.`);
  return number;
}

export function createProcessHandler(options: ProcessHandlerOptions = {}) {
  const processes = options.processes ?? (async () => (await import("../process/default-registry.js")).getProcessRegistry());
  const redact = redactionSource(options.redactOutput);
  const clean = async (text: string): Promise<string> => {
    const cleaned = (await import("../terminal/ansi.js")).cleanTerminalOutput(text);
    return (await redact()) ? redactTextLazily(cleaned) : cleaned;
  };

  return async function processTool(args: Record<string, unknown>, ctx: ToolContext): Promise<string> {
    const a = args ?? {};
    const sessionId = sessionIdOf(ctx);
    const action = a.action as ProcessAction;
    if (!PROCESS_ACTIONS.includes(action)) {
      return fail(`action must be one of ${PROCESS_ACTIONS.join(", ")}.`, "invalid_arguments");
    }
    const registry = await processes();
    if (action === "list") {
      return JSON.stringify({ processes: (await registry.list(sessionId)).map(describe) });
    }
    const id = a.process_id;
    if (typeof id !== "string" || id === "") return fail(`process_id is required for ${action}.`, "invalid_arguments");
    try {
      switch (action) {
        case "poll": {
          const info = await registry.poll(sessionId, id);
          return JSON.stringify({ ...describe(info), output_preview: await clean(info.preview) });
        }
        case "log": {
          const limit = integerArg(a, "limit", 1, MAX_LOG_LINES, DEFAULT_LOG_LINES)!;
          const offset = integerArg(a, "offset", 1, Number.MAX_SAFE_INTEGER, undefined);
          const log = await registry.log(sessionId, id, offset === undefined ? { limit } : { offset, limit });
          return JSON.stringify({ process_id: id, from_line: log.from, total_lines: log.totalLines, output: await clean(log.lines.join("\n")) });
        }
        case "wait": {
          const seconds = integerArg(a, "timeout", 0, MAX_WAIT_SECONDS, DEFAULT_WAIT_SECONDS)!;
          const result = await registry.wait(sessionId, id, seconds * 1000, ctx?.signal);
          const output = result.output.length > WAIT_OUTPUT_CHARS ? result.output.slice(-WAIT_OUTPUT_CHARS) : result.output;
          const note = result.timedOut ? { note: `Still running after ${seconds} seconds; wait again, poll, or kill it.` } : {};
          return JSON.stringify({ ...describe(result), output: await clean(output), ...note });
        }
        case "kill":
          return JSON.stringify(describe(await registry.kill(sessionId, id)));
        case "write":
        case "submit": {
          const data = a.data;
          if (typeof data !== "string") throw new ArgumentError(`data must be a string for ${action}.`);
          if (data.length > MAX_INPUT_CHARS) throw new ArgumentError(`data is limited to ${MAX_INPUT_CHARS} characters per call.`);
          const info = action === "write" ? await registry.write(sessionId, id, data) : await registry.submit(sessionId, id, data);
          return JSON.stringify({ ...describe(info), sent_chars: data.length + (action === "submit" ? 1 : 0) });
        }
        case "close":
          return JSON.stringify(describe(await registry.closeInput(sessionId, id)));
      }
    } catch (err) {
      if (err instanceof ArgumentError) return fail(err.message, "invalid_arguments");
      const code = (err as { code?: unknown }).code;
      if (code === "not_found" || code === "invalid_state") return fail((err as Error).message, code);
      throw err;
    }
    return fail(`unhandled action ${action}`, "invalid_arguments");
  };
}

export const processHandler = createProcessHandler();

registry.register({
  name: "process",
  toolset: "terminal",
  emoji: "⚙️",
  parallelSafe: false,
  description: "Manage background processes started by terminal (list, poll, log, wait, kill, write, submit, close).",
  schema: PROCESS_SCHEMA,
  handler: processHandler,
  // `wait` is bounded by its own timeout; this is only a backstop.
  timeoutMs: 15 * 60 * 1000,
  maxResultChars: 200_000,
  source: { kind: "builtin" },
});
