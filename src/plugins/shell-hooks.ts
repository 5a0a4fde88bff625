/**
 * Shell hooks: `hooks.<event>: [{matcher, command, timeout}]` in config.yaml, for people who do not write
 * JavaScript. Each hook is a program run without a shell:
 *
 * - `command` is split into words by our bash parser (src/shell); anything that needs a shell to mean what
 *   it says (a pipe, `&&`, a redirect, `$VAR`, `$(…)`) is refused with a warning, never run through `sh -c`.
 *   A leading `~/` is the user's home.
 * - stdin gets one JSON object: `{hook_event_name, tool_name, tool_input, session_id, cwd}` (plus
 *   `tool_result`, `status`, `duration_ms` after a call). stdout may answer with a block:
 *   `{"decision": "block", "reason": …}` (Claude Code's shape) or `{"action": "block", "message": …}`,
 *   or, for `transform_tool_result`, `{"result": "<new text>"}`.
 * - `matcher` is a regular expression over the tool name (tool events only; absent matches every tool).
 * - `timeout` in seconds: default 60, at most 300 (a larger value is clamped, with a warning).
 * - A non-zero exit, output that is not JSON, or the time limit → a warning, and the call proceeds.
 * - The environment is minimal (PATH, HOME, USER, LOGNAME, LANG, LC_ALL, LC_CTYPE, TERM, SHELL, TMPDIR,
 *   TZ, MIBYAN_HOME): no API keys or tokens of the agent's environment. A hook that needs one reads it
 *   from its own file.
 * - The hook runs in its own process group, killed as a whole at the time limit and on `close()`.
 */

import { spawn, type ChildProcess } from "node:child_process";

import type { HooksConfig, ShellHookConfig } from "../config/config-types.js";
import { userHomeDir } from "../config/home.js";
import type { Logger, ToolContext } from "../registry/types.js";
import { parseShellAsync } from "../shell/parser.js";
import type { EnvVars } from "../util/env-vars.js";
import type { PostToolCallEvent, SessionEvent, SubagentHookEvent, SubagentStopHookEvent, ToolCallEvent, TransformToolResultEvent } from "./types.js";

export const SHELL_HOOK_DEFAULT_TIMEOUT_S = 60;
export const SHELL_HOOK_MAX_TIMEOUT_S = 300;
const MAX_STDOUT = 1024 * 1024;
const MAX_STDERR = 8 * 1024;
/** Variables a hook inherits; everything else (API keys, tokens) stays with the agent. */
export const SHELL_HOOK_ENV_KEYS = ["PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "SHELL", "TMPDIR", "TZ", "MIBYAN_HOME"] as const;

type ShellEvent = "pre_tool_call" | "post_tool_call" | "transform_tool_result" | "on_session_start" | "on_session_end" | "subagent_start" | "subagent_stop";
const CONFIG_KEYS: Record<ShellEvent, keyof HooksConfig> = {
  pre_tool_call: "preToolCall",
  post_tool_call: "postToolCall",
  transform_tool_result: "transformToolResult",
  on_session_start: "onSessionStart",
  on_session_end: "onSessionEnd",
  subagent_start: "subagentStart",
  subagent_stop: "subagentStop",
};

export interface ShellHook {
  event: ShellEvent;
  /** The command as written in config.yaml. */
  command: string;
  argv: string[];
  matcher?: RegExp;
  timeoutMs: number;
}

export interface ShellHooksOptions {
  logger: Logger;
  cwd: string;
  env: EnvVars;
}

interface RunOutcome {
  answer?: Record<string, unknown>;
}

/** The words of `command`, or why it cannot run without a shell. */
export async function splitCommand(command: string, env: EnvVars): Promise<string[] | string> {
  const { script, problems } = await parseShellAsync(command);
  if (problems.length > 0) return problems[0]!;
  const pipeline = script.pipelines[0];
  if (script.pipelines.length !== 1 || pipeline === undefined || pipeline.commands.length !== 1 || pipeline.negated || pipeline.background) {
    return "it is more than one command (pipes, `;`, `&&`, `&` need a shell; put them in a script)";
  }
  const cmd = pipeline.commands[0]!;
  if (cmd.kind !== "simple") return "it is not a simple command";
  if (cmd.assignments.length > 0) return "variable assignments need a shell";
  if (cmd.redirects.length > 0) return "redirects need a shell";
  if (cmd.argv.length === 0) return "it names no program";
  const argv: string[] = [];
  for (const word of cmd.argv) {
    if (!word.static || word.substitutions.length > 0) return `${word.raw} needs a shell to expand`;
    if (word.braceExpansion || word.glob) return `${word.raw} needs a shell to expand (quote it to pass it as written)`;
    argv.push(word.tilde && (word.value === "~" || word.value.startsWith("~/")) ? userHomeDir(env) + word.value.slice(1) : word.value);
  }
  return argv;
}

export class ShellHooks {
  private readonly running = new Set<ChildProcess>();
  private closed = false;

  private constructor(
    private readonly hooks: ShellHook[],
    private readonly options: ShellHooksOptions,
  ) {}

  /** Checks and splits every configured hook; unusable ones are dropped with a warning. */
  static async compile(config: HooksConfig, options: ShellHooksOptions): Promise<ShellHooks> {
    const hooks: ShellHook[] = [];
    for (const event of Object.keys(CONFIG_KEYS) as ShellEvent[]) {
      const list: ShellHookConfig[] = config[CONFIG_KEYS[event]] ?? [];
      for (const [index, item] of list.entries()) {
        const where = `hooks.${event}[${index}]`;
        const argv = await splitCommand(item.command, options.env);
        if (typeof argv === "string") {
          options.logger.warn(`${where}: not run: ${JSON.stringify(item.command)} cannot run without a shell: ${argv}`);
          continue;
        }
        let seconds = item.timeout ?? SHELL_HOOK_DEFAULT_TIMEOUT_S;
        if (seconds > SHELL_HOOK_MAX_TIMEOUT_S) {
          options.logger.warn(`${where}: timeout ${seconds} s is above the limit; clamped to ${SHELL_HOOK_MAX_TIMEOUT_S} s`);
          seconds = SHELL_HOOK_MAX_TIMEOUT_S;
        }
        const hook: ShellHook = { event, command: item.command, argv, timeoutMs: Math.round(seconds * 1000) };
        if (item.matcher !== undefined && item.matcher !== null) {
          try {
            hook.matcher = new RegExp(item.matcher);
          } catch (err) {
            options.logger.warn(`${where}: not run: invalid matcher: ${(err as Error).message}`);
            continue;
          }
        }
        hooks.push(hook);
      }
    }
    return new ShellHooks(hooks, options);
  }

  get size(): number {
    return this.hooks.length;
  }

  /** The hooks of `event` that match `toolName` (every hook of the event when no tool is given). */
  matching(event: ShellEvent, toolName?: string): ShellHook[] {
    return this.hooks.filter((h) => h.event === event && (toolName === undefined || h.matcher === undefined || h.matcher.test(toolName)));
  }

  has(event: ShellEvent, toolName?: string): boolean {
    return this.matching(event, toolName).length > 0;
  }

  hasToolHooks(): boolean {
    return this.hooks.some((h) => h.event === "pre_tool_call" || h.event === "post_tool_call" || h.event === "transform_tool_result");
  }

  hasAfter(toolName: string): boolean {
    return this.has("post_tool_call", toolName) || this.has("transform_tool_result", toolName);
  }

  /** The first block answered by a matching `pre_tool_call` hook, in order; later hooks are not started. */
  async runPre(event: ToolCallEvent, ctx: ToolContext): Promise<{ message: string; owner: string } | undefined> {
    for (const hook of this.matching("pre_tool_call", event.toolName)) {
      const { answer } = await this.run(hook, this.payload(hook, event), ctx.signal);
      const message = blockMessage(answer);
      if (message !== undefined) return { message: message || `Blocked by the hook ${JSON.stringify(hook.command)}`, owner: `shell hook ${hook.command}` };
    }
    return undefined;
  }

  async runTransform(event: TransformToolResultEvent, ctx: ToolContext): Promise<string | undefined> {
    for (const hook of this.matching("transform_tool_result", event.toolName)) {
      const { answer } = await this.run(hook, { ...this.payload(hook, event), tool_result: event.result, status: event.status }, ctx.signal);
      if (typeof answer?.result === "string") return answer.result;
    }
    return undefined;
  }

  async runPost(event: PostToolCallEvent, ctx: ToolContext): Promise<void> {
    for (const hook of this.matching("post_tool_call", event.toolName)) {
      await this.run(hook, { ...this.payload(hook, event), tool_result: event.result, status: event.status, duration_ms: event.durationMs }, ctx.signal);
    }
  }

  async runSession(event: "on_session_start" | "on_session_end", data: SessionEvent): Promise<void> {
    for (const hook of this.matching(event)) {
      await this.run(hook, { hook_event_name: event, tool_name: null, tool_input: null, session_id: data.sessionId, cwd: this.options.cwd });
    }
  }

  /** `subagent_start` / `subagent_stop`: the child's fields in snake_case beside the usual ones (session_id is the parent's). */
  async runSubagent(event: "subagent_start" | "subagent_stop", data: SubagentHookEvent | SubagentStopHookEvent): Promise<void> {
    for (const hook of this.matching(event)) {
      const payload: Record<string, unknown> = {
        hook_event_name: event,
        tool_name: null,
        tool_input: null,
        session_id: data.parentSessionId ?? null,
        cwd: this.options.cwd,
        parent_session_id: data.parentSessionId ?? null,
        child_session_id: data.childSessionId,
        child_role: data.childRole,
        task_index: data.taskIndex,
        goal: data.goal,
      };
      if ("childStatus" in data) Object.assign(payload, { child_status: data.childStatus, child_summary: data.childSummary, duration_ms: data.durationMs });
      await this.run(hook, payload);
    }
  }

  /** Kills every hook still running. */
  close(): void {
    this.closed = true;
    for (const child of this.running) killGroup(child);
    this.running.clear();
  }

  private payload(hook: ShellHook, event: ToolCallEvent): Record<string, unknown> {
    return { hook_event_name: hook.event, tool_name: event.toolName, tool_input: event.args, session_id: event.sessionId ?? null, cwd: this.options.cwd, surface: event.surface };
  }

  private env(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const key of SHELL_HOOK_ENV_KEYS) {
      const value = this.options.env[key];
      if (value !== undefined) out[key] = value;
    }
    return out;
  }

  private run(hook: ShellHook, payload: Record<string, unknown>, signal?: AbortSignal): Promise<RunOutcome> {
    const { logger } = this.options;
    const label = `shell hook ${hook.event} ${JSON.stringify(hook.command)}`;
    if (this.closed) return Promise.resolve({});
    return new Promise<RunOutcome>((resolve) => {
      let child: ChildProcess;
      try {
        child = spawn(hook.argv[0]!, hook.argv.slice(1), { cwd: this.options.cwd, env: this.env(), stdio: ["pipe", "pipe", "pipe"], detached: true });
      } catch (err) {
        logger.warn(`${label}: could not start: ${(err as Error).message}; the call proceeds`);
        resolve({});
        return;
      }
      this.running.add(child);
      let stdout = "";
      let stderr = "";
      let timedOut = false;
      let done = false;
      const finish = (outcome: RunOutcome): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.running.delete(child);
        resolve(outcome);
      };
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup(child);
      }, hook.timeoutMs);
      const onAbort = (): void => killGroup(child);
      signal?.addEventListener("abort", onAbort, { once: true });
      child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
        if (stdout.length < MAX_STDOUT) stdout += chunk;
      });
      child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
        if (stderr.length < MAX_STDERR) stderr += chunk;
      });
      // A hook that does not read its stdin closes the pipe early: not an error.
      child.stdin!.on("error", () => undefined);
      child.stdin!.end(JSON.stringify(payload));
      child.on("error", (err) => {
        logger.warn(`${label}: could not start: ${err.message}; the call proceeds`);
        finish({});
      });
      child.on("close", (code, sig) => {
        if (timedOut) {
          logger.warn(`${label}: timed out after ${hook.timeoutMs / 1000} s; the call proceeds`);
          return finish({});
        }
        if (code !== 0) {
          const why = sig ? `was killed by ${sig}` : `exited with ${code}`;
          logger.warn(`${label}: ${why}; the call proceeds${stderr.trim() ? `: ${stderr.trim().slice(0, 500)}` : ""}`);
          return finish({});
        }
        const text = stdout.trim();
        if (text === "") return finish({});
        try {
          const parsed = JSON.parse(text) as unknown;
          if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) return finish({ answer: parsed as Record<string, unknown> });
          logger.warn(`${label}: stdout is not a JSON object; ignored`);
        } catch {
          logger.warn(`${label}: stdout is not JSON; ignored`);
        }
        finish({});
      });
    });
  }
}

/** The block message of an answer in either shape ("" for a block without one), or undefined for no block. */
function blockMessage(answer: Record<string, unknown> | undefined): string | undefined {
  if (answer === undefined) return undefined;
  if (answer.decision === "block") return typeof answer.reason === "string" ? answer.reason : "";
  if (answer.action === "block") return typeof answer.message === "string" ? answer.message : "";
  return undefined;
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.pid <= 1) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
  }
}
