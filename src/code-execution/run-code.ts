/**
 * Runs one JavaScript program for the `execute_code` tool and serves the tool
 * calls it makes.
 *
 * - The program is an ES module run by a separate `node` process (the same
 *   binary as the host, `process.execPath`). It is written to a fresh temporary
 *   directory together with the prelude that defines `globalThis.tools`; its
 *   working directory is an empty `work/` folder inside it, and the whole
 *   directory is deleted when the run ends.
 * - The child's environment is reduced to `SANDBOX_ENV_KEYS` (PATH, HOME,
 *   locale, TZ, TMPDIR): no API keys, no NODE_OPTIONS.
 * - The child runs in its own process group under `spawnGroup` (merged
 *   stdout/stderr, capped output, the group killed on timeout or abort), with
 *   an IPC channel for tool calls. Unlike a terminal command, when the
 *   program's main process ends, anything it left behind in its group is
 *   killed as well.
 * - Tool calls arrive over IPC and go through `registry.dispatch` with the
 *   caller's session and task, one after another, so hooks, validation and
 *   availability checks apply to them exactly as to the model's own calls.
 *
 * This isolates the tool runtime from a crashing or hanging program; by
 * itself it is NOT a security boundary (same user, same machine, same file
 * system). With the local sandbox on (`terminal.local.sandbox`, docs/sandbox.md)
 * the program runs inside it: everything read-only but its own `work/`
 * folder (in `workspace-write` mode) and a private /tmp, the network as
 * configured. A sandbox that is configured but cannot work refuses the run.
 * The program's tool calls run where those tools run (terminal commands in
 * the task's environment, sandboxed there too on the local backend).
 */

import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

import type { CallApprovalScope } from "../approval/flow/types.js";
import type { ToolRegistry } from "../registry/tool-registry.js";
import type { CallSurface } from "../registry/types.js";
import { createCommandSandbox, type CommandSandbox } from "../sandbox/command-sandbox.js";
import { configuredSandboxPolicy, type SandboxPolicy } from "../sandbox/policy.js";
import { registry as defaultRegistry } from "../registry/singleton.js";
import { ABORT_EXIT_CODE, spawnGroup, type ProcessGroupResult, type SpawnedGroup } from "../terminal/process-group.js";
import { describeThrown } from "../util/text.js";
import {
  TOOL_CALL_MESSAGE,
  TOOL_RESULT_MESSAGE,
  buildSandboxPrelude,
  type ToolCallMessage,
  type ToolResultMessage,
} from "./sandbox-prelude.js";
import type { EnvVars } from "../util/env-vars.js";
import {
  CODE_OUTPUT_HEAD_RATIO,
  DEFAULT_CODE_OUTPUT_CHARS,
  DEFAULT_CODE_TIMEOUT_SECONDS,
  DEFAULT_MAX_TOOL_CALLS,
  EXECUTE_CODE_TOOL,
  MAX_CODE_TIMEOUT_SECONDS,
  SANDBOX_TOOLS,
} from "./limits.js";

// The tool's name, allow-list and limits live in ./limits.ts, which the schema (loaded whenever tools are listed) imports without this module.
export {
  CODE_OUTPUT_HEAD_RATIO,
  DEFAULT_CODE_OUTPUT_CHARS,
  DEFAULT_CODE_TIMEOUT_SECONDS,
  DEFAULT_MAX_TOOL_CALLS,
  EXECUTE_CODE_TOOL,
  MAX_CODE_TIMEOUT_SECONDS,
  SANDBOX_TOOLS,
};

/** SIGTERM → SIGKILL grace period on timeout or abort. */
export const DEFAULT_CODE_KILL_GRACE_MS = 1_000;

/** Environment variables the child keeps (when set in the host). Everything else is dropped. */
export const SANDBOX_ENV_KEYS: readonly string[] = Object.freeze(["PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR"]);

export interface RunCodeOptions {
  /** The program: JavaScript, run as an ES module (top-level await works). */
  code: string;
  /** Time limit in milliseconds. Default 60 s; `0` or less means none. */
  timeoutMs?: number;
  /** Aborting it kills the program's process group (and cancels a running tool call). */
  signal?: AbortSignal;
  /** Registry nested calls are dispatched through. Default: the process-wide `registry`. */
  registry?: ToolRegistry;
  /** Passed on to every nested call. */
  sessionId?: string;
  taskId?: string;
  session?: unknown;
  /** Where the program's own call came from (hooks see nested calls as coming from there too). */
  surface?: CallSurface;
  /**
   * The approval scope of the program's own call (a framework adapter's): every nested call carries
   * it, so what the person approved for this call (and the framework's route for questions) covers
   * the checks of the calls the program makes, and nothing outside this run.
   */
  approvalScope?: CallApprovalScope | undefined;
  /** Names added to `SANDBOX_TOOLS` for this run (still only if registered and available). */
  extraSandboxTools?: readonly string[];
  /**
   * When given, only these tools may be called (intersected with the allow-list):
   * an embedder passes the tool names the model was actually given.
   */
  allowedTools?: Iterable<string>;
  /** Default 50. */
  maxToolCalls?: number;
  /** Default 50,000. */
  maxOutputChars?: number;
  /** Default 1,000 ms. */
  killGraceMs?: number;
  /** The child's complete environment. Default: `sandboxEnv()`. */
  env?: EnvVars;
  /** The node binary. Default: `process.execPath`. */
  nodePath?: string;
  /** The OS sandbox the program runs in. Default: config `terminal.local.sandbox`. */
  sandbox?: SandboxPolicy;
  /** The bubblewrap program (tests). Default: `bwrap` on PATH. */
  sandboxProgram?: string;
}

export interface RunCodeResult {
  /** Merged stdout+stderr, raw (not ANSI-stripped), cut to the cap with an omission marker. */
  output: string;
  /** The program's exit code; 124 on timeout, 130 on abort, 128+signo when killed by a signal, -1 if it never ran. */
  exitCode: number;
  /** Nested tool calls that were run. */
  toolCalls: number;
  /** Tools the program could call. */
  callableTools: string[];
  timedOut: boolean;
  aborted: boolean;
  truncated: boolean;
  durationMs: number;
  /** Set when the program could not be started. */
  error?: string;
  /** Name of the signal that ended the main process, if one did. */
  signal?: string;
}

/** The child's environment: only `SANDBOX_ENV_KEYS`, taken from `source`. */
export function sandboxEnv(source: EnvVars = process.env): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const key of SANDBOX_ENV_KEYS) {
    const value = source[key];
    if (value !== undefined && value !== "") env[key] = value;
  }
  return env;
}

export interface CallableToolsOptions {
  extraSandboxTools?: readonly string[];
  allowedTools?: Iterable<string>;
}

/** The tools a program may call: allow-listed, registered, available, not agent-loop tools, never `execute_code`. Sorted. */
export function sandboxCallableTools(target: ToolRegistry, options: CallableToolsOptions = {}): string[] {
  const wanted = new Set([...SANDBOX_TOOLS, ...(options.extraSandboxTools ?? [])]);
  wanted.delete(EXECUTE_CODE_TOOL);
  if (options.allowedTools !== undefined) {
    const allowed = new Set(options.allowedTools);
    for (const name of [...wanted]) if (!allowed.has(name)) wanted.delete(name);
  }
  return target
    .availableEntries(wanted)
    .map((entry) => entry.name)
    .filter((name) => !target.isAgentLoopTool(name));
}

/** The program file: the prelude import on the program's first line, so line numbers in stack traces stay right. */
function programSource(code: string): string {
  // A leading hashbang would no longer be first; keep it as a comment instead.
  const body = code.startsWith("#!") ? `//${code.slice(2)}` : code;
  return `import "./prelude.mjs"; ${body}`;
}

function isToolCallMessage(message: unknown): message is ToolCallMessage {
  if (message === null || typeof message !== "object") return false;
  const m = message as Partial<ToolCallMessage>;
  return m.type === TOOL_CALL_MESSAGE && typeof m.id === "number" && typeof m.name === "string";
}

/** The result of a run that never got to start the program (or was refused before it). */
function notRun(callableTools: string[], started: number, exitCode: number, extra: Partial<RunCodeResult>): RunCodeResult {
  return {
    output: "",
    exitCode,
    toolCalls: 0,
    callableTools,
    timedOut: false,
    aborted: false,
    truncated: false,
    durationMs: Math.round(performance.now() - started),
    ...extra,
  };
}

/** Runs a program to its end (or its time limit) and collects its output. Never rejects. */
export async function runCode(options: RunCodeOptions): Promise<RunCodeResult> {
  const started = performance.now();
  const target = options.registry ?? defaultRegistry;
  const callableTools = sandboxCallableTools(target, options);
  if (options.signal?.aborted) return notRun(callableTools, started, ABORT_EXIT_CODE, { aborted: true });

  let root: string;
  try {
    root = await mkdtemp(join(tmpdir(), "mibyan-code-"));
  } catch (thrown) {
    return notRun(callableTools, started, -1, { error: `cannot create a temporary directory for the program: ${describeThrown(thrown)}` });
  }
  try {
    const workdir = join(root, "work");
    const programPath = join(root, "program.mjs");
    await mkdir(workdir);
    await writeFile(join(root, "prelude.mjs"), buildSandboxPrelude({ callable: callableTools, selfName: EXECUTE_CODE_TOOL }));
    await writeFile(programPath, programSource(options.code));
    let sandbox: CommandSandbox | undefined;
    try {
      sandbox = programSandbox(options, root, workdir);
    } catch (thrown) {
      // Fail closed: a configured sandbox that cannot be built means the program does not run.
      return notRun(callableTools, started, -1, { error: `the program was not run: ${describeThrown(thrown)}` });
    }
    return await supervise(options, target, callableTools, programPath, workdir, started, sandbox);
  } catch (thrown) {
    return notRun(callableTools, started, -1, { error: `cannot run the program: ${describeThrown(thrown)}` });
  } finally {
    await rm(root, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** The sandbox of one run (undefined when off): `work/` is its workspace, `tmp/` beside it its /tmp, the program's files readable. */
function programSandbox(options: RunCodeOptions, root: string, workdir: string): CommandSandbox | undefined {
  const policy = options.sandbox ?? configuredSandboxPolicy();
  if (policy.mode === "off") return undefined;
  return createCommandSandbox(
    // The configured extra roots are for the terminal's workspace; a program gets its own folder only.
    { ...policy, writableRoots: [] },
    {
      workspace: workdir,
      runtimeReadable: [root],
      privateTmp: join(root, "tmp"),
      ...(options.sandboxProgram !== undefined ? { program: options.sandboxProgram } : {}),
    },
  );
}

async function supervise(
  options: RunCodeOptions,
  target: ToolRegistry,
  callableTools: string[],
  programPath: string,
  workdir: string,
  started: number,
  sandbox: CommandSandbox | undefined,
): Promise<RunCodeResult> {
  const maxToolCalls = options.maxToolCalls ?? DEFAULT_MAX_TOOL_CALLS;
  const callable = new Set(callableTools);

  // Aborted when the caller cancels, the time limit kills the program, or the program ends:
  // the signal nested calls run with.
  const runAbort = new AbortController();
  const endRun = (why: string) => {
    if (!runAbort.signal.aborted) runAbort.abort(new Error(why));
  };
  let toolCalls = 0;
  let queue: Promise<void> = Promise.resolve();

  let group: SpawnedGroup;
  try {
    const argv = [options.nodePath ?? process.execPath, programPath];
    group = spawnGroup(sandbox ? sandbox.wrap(argv) : argv, {
      cwd: workdir,
      env: options.env ?? sandboxEnv(),
      timeoutMs: options.timeoutMs ?? DEFAULT_CODE_TIMEOUT_SECONDS * 1000,
      signal: options.signal,
      maxOutputChars: options.maxOutputChars ?? DEFAULT_CODE_OUTPUT_CHARS,
      headRatio: CODE_OUTPUT_HEAD_RATIO,
      killGraceMs: options.killGraceMs ?? DEFAULT_CODE_KILL_GRACE_MS,
      startedAt: started,
      ipc: true,
      // Whatever the program left running goes with it, and so does a tool call it
      // did not wait for; the result still waits for that call to wind down.
      killLeftoversOnExit: true,
      onKill: (reason) => endRun(reason === "timeout" ? "the program timed out" : "the program was cancelled"),
      onExit: () => {
        endRun("the program ended");
        return queue;
      },
    });
  } catch (thrown) {
    return notRun(callableTools, started, -1, { error: `cannot start node: ${describeThrown(thrown)}` });
  }
  const { child } = group;

  const reply = (message: ToolResultMessage) => {
    if (!child.connected) return;
    try {
      child.send(message, () => undefined);
    } catch {
      // The channel closed between the check and the send: the program is gone.
    }
  };
  const refuse = (id: number, error: string) => reply({ type: TOOL_RESULT_MESSAGE, id, ok: false, error });

  child.on("message", (message: unknown) => {
    if (!isToolCallMessage(message)) return;
    const { id, name } = message;
    if (name === EXECUTE_CODE_TOOL) return refuse(id, `${EXECUTE_CODE_TOOL} cannot call itself from inside a program.`);
    if (!callable.has(name)) {
      const listed = callableTools.length === 0 ? "no tools can be called from code in this run" : `callable tools: ${callableTools.join(", ")}`;
      return refuse(id, `tools.${name} is not available in this run (${listed}).`);
    }
    if (toolCalls >= maxToolCalls) {
      return refuse(id, `tools.${name} was refused: a program may make at most ${maxToolCalls} tool calls and that limit was reached.`);
    }
    const args = message.args;
    if (args === null || typeof args !== "object" || Array.isArray(args)) {
      return refuse(id, `tools.${name}() takes one object of arguments.`);
    }
    toolCalls++;
    // One call at a time, in the order the program made them: tools such as
    // terminal are not safe to run in parallel.
    queue = queue.then(async () => {
      if (runAbort.signal.aborted) return refuse(id, `tools.${name} was not run: the program is ending.`);
      const content = await target.dispatch(name, args, {
        sessionId: options.sessionId,
        taskId: options.taskId,
        session: options.session,
        surface: options.surface,
        approvalScope: options.approvalScope,
        // Nested calls may reach only what the program was offered, whatever dispatch would otherwise allow.
        allowedTools: callable,
        signal: runAbort.signal,
      });
      reply({ type: TOOL_RESULT_MESSAGE, id, ok: true, result: content });
    });
  });

  let run: ProcessGroupResult;
  try {
    run = await group.result;
  } catch (thrown) {
    return notRun(callableTools, started, -1, { error: `cannot start the program: ${(thrown as Error).message}` });
  }
  const result: RunCodeResult = {
    output: run.output,
    exitCode: run.exitCode,
    toolCalls,
    callableTools,
    timedOut: run.timedOut,
    aborted: run.aborted,
    truncated: run.truncated,
    durationMs: run.durationMs,
  };
  if (run.signal !== undefined) result.signal = run.signal;
  return result;
}
