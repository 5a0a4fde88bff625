/**
 * What an execute_code call runs: argument checks, the approval gate, the
 * program (src/code-execution/run-code.ts), the result's JSON. Loaded on the
 * first program by `createExecuteCodeHandler` (src/tools/execute-code.ts), which keeps
 * the tool's schema, schema patch and registration: listing tools never loads
 * this module or the runner, the sandbox and the approval rules it imports.
 * The handler options and result types live here and are re-exported by
 * src/tools/execute-code.ts.
 */

import type { ApprovalGate } from "../../approval/flow/gate.js";
import { EXECUTE_CODE_BACKEND, executeCodeAction } from "../../code-execution/approval.js";
import { DEFAULT_CODE_TIMEOUT_SECONDS, MAX_CODE_TIMEOUT_SECONDS } from "../../code-execution/limits.js";
import { runCode, type RunCodeResult } from "../../code-execution/run-code.js";
import { redactionSwitch, redactText, type RedactOutputOption } from "../../redaction/tool-output.js";
import type { ToolRegistry } from "../../registry/tool-registry.js";
import type { ToolContext } from "../../registry/types.js";
import { cleanTerminalOutput } from "../../terminal/ansi.js";
import { ABORT_EXIT_CODE } from "../../terminal/process-group.js";
import { killedExitCode, killedStatus, parseTimeoutSeconds } from "../../terminal/tool-timeout.js";
import { describeThrown } from "../../util/text.js";
import { sessionIdOf } from "../call-scope.js";

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

/**
 * The body of an execute_code handler (`createExecuteCodeHandler` in src/tools/execute-code.ts loads it
 * on the first program); the registered tool uses the defaults.
 */
export function executeCodeToolBody(options: ExecuteCodeHandlerOptions = {}) {
  // The gate loads on the first program, not when the tool is listed.
  const gate = options.gate ?? (async () => (await import("../../approval/default-gate.js")).getApprovalGate());
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
        approvalScope: ctx?.approvalScope,
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
      surface: ctx?.surface,
      approvalScope: ctx?.approvalScope,
      extraSandboxTools: options.extraSandboxTools,
      // The session's own restriction (from dispatch) applies unless the embedder supplies one.
      allowedTools: ctx === undefined ? undefined : (options.allowedTools?.(ctx) ?? ctx.allowedTools),
      maxToolCalls: options.maxToolCalls,
      maxOutputChars: options.maxOutputChars,
    });
    return formatExecuteCodeResult(run, timeoutSeconds, redact(), ctx?.signal?.reason);
  };
}
