/**
 * The built-in `execute_code` tool: runs a JavaScript program in a separate
 * `node` process, where `await tools.<name>(args)` calls other tools through
 * the registry (see src/code-execution/ and docs/execute-code.md).
 *
 * Result shape (always a JSON object string):
 *   { "output": string, "exit_code": number, "tool_calls": number, "error": string | null,
 *     "status"?: "timeout" | "cancelled" }
 *
 * Its schema lists the tools a program can call, so it registers a
 * `patchSchema`: `getToolDefinitions` hands it the names of the tools that
 * survived toolset filtering and availability checks, and the description is
 * rebuilt to list only the allow-listed ones among them.
 *
 * Every program passes the approval gate first, as a whole (`gate.checkAction`, rule
 * `execute-code`, prefix `execute_code`, backend `local`: see
 * src/code-execution/approval.ts); a refused program never starts and comes back with
 * `"status": "blocked"` and the reason. Its nested tool calls pass the gate themselves.
 */

import type { ApprovalGate } from "../approval/flow/gate.js";
import { EXECUTE_CODE_BACKEND, executeCodeAction } from "../code-execution/approval.js";
import {
  DEFAULT_CODE_TIMEOUT_SECONDS,
  EXECUTE_CODE_TOOL,
  MAX_CODE_TIMEOUT_SECONDS,
  SANDBOX_TOOLS,
  runCode,
  type RunCodeResult,
} from "../code-execution/run-code.js";
import {
  EXECUTE_CODE_SCHEMA,
  FALLBACK_SUMMARIES,
  firstSentence,
  patchExecuteCodeSchema,
  type SandboxToolSummary,
} from "../code-execution/schema.js";
import { redactionSwitch, redactText, type RedactOutputOption } from "../redaction/tool-output.js";
import type { ToolRegistry } from "../registry/tool-registry.js";
import { registry } from "../registry/singleton.js";
import type { FunctionSchema, ToolContext, ToolEntry } from "../registry/types.js";
import { cleanTerminalOutput } from "../terminal/ansi.js";
import { ABORT_EXIT_CODE } from "../terminal/process-group.js";
import { killedExitCode, killedStatus, parseTimeoutSeconds } from "../terminal/tool-timeout.js";
import { describeThrown } from "../util/text.js";
import { sessionIdOf } from "./call-scope.js";

export { EXECUTE_CODE_SCHEMA };

export interface ExecuteCodeToolResult {
  output: string;
  exit_code: number;
  tool_calls: number;
  error: string | null;
  status?: "timeout" | "cancelled" | "blocked";
}

/** The part of the approval gate the tool uses. */
export type ActionGate = Pick<ApprovalGate, "checkAction">;

export interface ExecuteCodeHandlerOptions {
  /** The approval gate every program passes first, as a whole. Default: the process-wide gate (`getApprovalGate()`). */
  gate?: () => ActionGate | Promise<ActionGate>;
  /** Registry nested calls go through. Default: the process-wide `registry`. */
  registry?: ToolRegistry;
  /** Names added to the allow-list (`SANDBOX_TOOLS`); still only if registered and available. */
  extraSandboxTools?: readonly string[];
  /**
   * The tools the model was given in this call's session, if the embedder knows
   * them: programs may then call only those (the registry alone cannot tell
   * which toolsets a session enabled).
   */
  allowedTools?: (ctx: ToolContext) => Iterable<string> | undefined;
  /** Default 50. */
  maxToolCalls?: number;
  /** Default 50,000. */
  maxOutputChars?: number;
  /**
   * Replace secrets in the program's output with `[REDACTED]` (the policy every
   * tool shares: src/redaction/tool-output.ts). Default: config
   * `terminal.redact_output` (default true), read at each call.
   */
  redactOutput?: RedactOutputOption;
}

class ExecuteCodeArgumentError extends Error {}

function errorResult(message: string, status?: "blocked" | "cancelled"): string {
  const exitCode = status === "cancelled" ? ABORT_EXIT_CODE : -1;
  const result: ExecuteCodeToolResult = { output: "", exit_code: exitCode, tool_calls: 0, error: message, ...(status ? { status } : {}) };
  return JSON.stringify(result);
}

function validateCode(value: unknown): string {
  if (typeof value !== "string") {
    throw new ExecuteCodeArgumentError(
      `code must be a string of JavaScript, got ${value === null ? "null" : Array.isArray(value) ? "array" : typeof value}.`,
    );
  }
  if (value.trim() === "") throw new ExecuteCodeArgumentError("code must not be empty.");
  return value;
}

/** The model-facing JSON string for a finished run (`redact`: secrets in the output replaced). */
export function formatExecuteCodeResult(run: RunCodeResult, timeoutSeconds: number, redact = true, abortReason?: unknown): string {
  const output = cleanTerminalOutput(run.output);
  // An abort whose reason is dispatch's time limit is a timeout (exit code 124), not a cancellation.
  const killed = killedStatus(run, "Program", timeoutSeconds, abortReason);
  const result: ExecuteCodeToolResult = {
    output: redact ? redactText(output) : output,
    exit_code: killedExitCode(run, killed),
    tool_calls: run.toolCalls,
    error: run.error ?? null,
    ...killed,
  };
  return JSON.stringify(result);
}

/** Builds an execute_code handler; the registered tool uses the defaults. */
export function createExecuteCodeHandler(options: ExecuteCodeHandlerOptions = {}) {
  // The gate loads on the first program, not when the tool is listed.
  const gate = options.gate ?? (async () => (await import("../approval/default-gate.js")).getApprovalGate());
  const redact = redactionSwitch(options.redactOutput);
  return async function executeCode(args: Record<string, unknown>, ctx: ToolContext): Promise<string> {
    let code: string;
    let timeoutSeconds: number;
    try {
      const a = args ?? {};
      code = validateCode(a.code);
      timeoutSeconds = parseTimeoutSeconds(
        a.timeout,
        { defaultSeconds: DEFAULT_CODE_TIMEOUT_SECONDS, maxSeconds: MAX_CODE_TIMEOUT_SECONDS },
        (message) => new ExecuteCodeArgumentError(message),
      );
    } catch (err) {
      if (err instanceof ExecuteCodeArgumentError) return errorResult(err.message);
      throw err;
    }
    // The program runs on this machine whatever the terminal backend is, so it is checked as `local`.
    try {
      const decision = await (await gate()).checkAction(await executeCodeAction(code), {
        sessionId: sessionIdOf(ctx),
        backend: EXECUTE_CODE_BACKEND,
        signal: ctx?.signal,
      });
      if (!decision.allowed) return errorResult(decision.reason, decision.by === "cancelled" ? "cancelled" : "blocked");
    } catch (err) {
      // A gate that cannot be built (a malformed config.yaml, say) refuses: fail closed.
      return errorResult(`The program could not be checked for approval (${describeThrown(err)}), so it was not run.`, "blocked");
    }
    const run = await runCode({
      code,
      timeoutMs: timeoutSeconds * 1000,
      signal: ctx?.signal,
      registry: options.registry,
      sessionId: ctx?.sessionId,
      taskId: ctx?.taskId,
      session: ctx?.session,
      extraSandboxTools: options.extraSandboxTools,
      // The session's own restriction (from dispatch) applies unless the embedder supplies one.
      allowedTools: ctx === undefined ? undefined : (options.allowedTools?.(ctx) ?? ctx.allowedTools),
      maxToolCalls: options.maxToolCalls,
      maxOutputChars: options.maxOutputChars,
    });
    return formatExecuteCodeResult(run, timeoutSeconds, redact(), ctx?.signal?.reason);
  };
}

/** The handler the registered `execute_code` tool uses. */
export const executeCodeHandler = createExecuteCodeHandler();

function namePattern(name: string): RegExp {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(?<![A-Za-z0-9_-])${escaped}(?![A-Za-z0-9_-])`);
}

/**
 * The allow-listed tools among `availableTools`, each with the first sentence
 * of its registered description. A sentence that names a tool outside
 * `availableTools` is replaced by a neutral summary, so the description never
 * mentions a tool the model cannot call.
 */
export function sandboxToolSummaries(
  availableTools: ReadonlySet<string>,
  lookup: (name: string) => ToolEntry | undefined = (name) => registry.get(name),
  knownNames: Iterable<string> = registry.names,
): SandboxToolSummary[] {
  const forbidden = [...new Set([...knownNames, ...SANDBOX_TOOLS])].filter((name) => !availableTools.has(name)).map(namePattern);
  return SANDBOX_TOOLS.filter((name) => name !== EXECUTE_CODE_TOOL && availableTools.has(name)).map((name) => {
    const description = lookup(name)?.schema.description;
    let summary = description === undefined ? "" : firstSentence(description);
    if (summary === "" || forbidden.some((pattern) => pattern.test(summary))) summary = FALLBACK_SUMMARIES[name] ?? "";
    return { name, summary };
  });
}

/** The registered `patchSchema`: the schema rebuilt for the tools that survived filtering. */
export function patchExecuteCodeForAvailable(schema: FunctionSchema, availableTools: ReadonlySet<string>): FunctionSchema {
  return patchExecuteCodeSchema(schema, sandboxToolSummaries(availableTools));
}

registry.register({
  name: "execute_code",
  toolset: "code_execution",
  emoji: "📜",
  parallelSafe: false,
  description: "Run a JavaScript program in a separate node process; it can call allow-listed tools through `tools.<name>(args)`.",
  schema: EXECUTE_CODE_SCHEMA,
  handler: executeCodeHandler,
  patchSchema: patchExecuteCodeForAvailable,
  // The handler enforces the program's own timeout (and kills its process group); this is
  // only a backstop above an approval wait (a gateway waits 5 minutes by default), the
  // largest allowed timeout and the kill grace.
  timeoutMs: 20 * 60 * 1000,
  // The output is capped at 50,000 characters; leave room for JSON escaping so the
  // registry never cuts the JSON itself.
  maxResultChars: 200_000,
  source: { kind: "builtin" },
});
