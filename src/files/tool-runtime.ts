/**
 * What the four file tools share around their operation: where the task's
 * environment comes from, which approval gate writes pass, and how a result
 * or an error becomes the JSON string the model reads.
 *
 * Like the terminal's handler options: `environments` (default: the
 * process-wide `getEnvironmentManager()`) and `gate` (default: the process-wide
 * `getApprovalGate()`), both loaded on the first call, not when the tools are
 * listed. A call's environment is `environments.get(ctx.taskId ?? "default")`:
 * the same one the task's `terminal` calls use, so a relative path means what
 * it means after the task's last `cd`.
 *
 * Results are `{..., "error": null}`; failures `{"error": "..."}` (plus
 * `"status": "blocked"` when the approval gate refused a write).
 */

import type { Environment, EnvironmentProvider } from "../environments/types.js";
import type { ToolContext } from "../registry/types.js";
import type { WriteApproval, WriteGate } from "./approval.js";
import type { RedactOutputOption } from "../redaction/tool-output.js";
import { FileToolError } from "./errors.js";
import { sessionIdOf, taskIdOf } from "../tools/call-scope.js";


export interface FileToolHandlerOptions {
  /** Where the task's environment comes from. Default: the process-wide `getEnvironmentManager()`. */
  environments?: EnvironmentProvider | (() => EnvironmentProvider | Promise<EnvironmentProvider>);
  /** The gate writes pass (write_file, patch). Default: the process-wide `getApprovalGate()`. */
  gate?: () => WriteGate | Promise<WriteGate>;
  /** Time limit of each command the tool runs in the environment, in milliseconds. Default 60,000. */
  commandTimeoutMs?: number;
  /**
   * read_file, search_files, patch: replace secrets in what the model is shown
   * with `[REDACTED]` (src/redaction/tool-output.ts). Default: config
   * `terminal.redact_output` (default true), read at each call.
   */
  redactOutput?: RedactOutputOption;
}

export function environmentSource(options: FileToolHandlerOptions): () => Promise<EnvironmentProvider> {
  const given = options.environments;
  if (typeof given === "function") return async () => given();
  if (given !== undefined) return async () => given;
  return async () => (await import("../environments/manager.js")).getEnvironmentManager();
}

export function gateSource(options: FileToolHandlerOptions): () => Promise<WriteGate> {
  const given = options.gate;
  if (given !== undefined) return async () => given();
  return async () => (await import("../approval/default-gate.js")).getApprovalGate();
}

/** The task's environment; a failure to start it is an error for the model. */
export async function taskEnvironment(source: () => Promise<EnvironmentProvider>, ctx: ToolContext | undefined): Promise<Environment> {
  try {
    return await (await source()).get(taskIdOf(ctx));
  } catch (err) {
    throw new FileToolError("environment", `Could not start the task's environment: ${(err as Error).message}`);
  }
}

/** For the tools that write (write_file, patch): the task's environment, and the approval step its writes pass. */
export async function writeTarget(
  environments: () => Promise<EnvironmentProvider>,
  gate: () => Promise<WriteGate>,
  ctx: ToolContext | undefined,
  tool: string,
): Promise<{ env: Environment; approve: WriteApproval }> {
  const env = await taskEnvironment(environments, ctx);
  const { gateApproval } = await import("./approval.js");
  return { env, approve: gateApproval({ gate: await gate(), backend: env.isolation, sessionId: sessionIdOf(ctx), signal: ctx?.signal, approvalScope: ctx?.approvalScope, tool }) };
}

/** `{...result, error: null}` as JSON. */
export function okJson(result: object): string {
  return JSON.stringify({ ...result, error: null });
}

/**
 * Runs a tool body and renders its outcome. `FileToolError`s are the expected
 * failures; anything else is reported as an internal error of the tool (not
 * the model's fault), never swallowed.
 */
export async function runToolBody(tool: string, body: () => Promise<object>): Promise<string> {
  try {
    return okJson(await body());
  } catch (err) {
    if (err instanceof FileToolError) {
      return JSON.stringify(err.kind === "blocked" ? { error: err.message, status: "blocked" } : { error: err.message });
    }
    return JSON.stringify({ error: `${tool} failed unexpectedly: ${(err as Error)?.message ?? String(err)}` });
  }
}
