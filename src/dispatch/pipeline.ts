import type {
  CallOptions,
  Logger,
  ParsedToolCall,
  ToolEntry,
  ToolResult,
} from "../registry/types.js";
import type { Availability } from "../registry/availability.js";
import type { ArgumentValidator, ValidationOutcome } from "../schema/validator.js";
import { describeIssues } from "../schema/validator.js";
import { describeThrown, isThenable } from "../util/text.js";
import { parseArguments } from "./arguments.js";
import { withoutOptionalNulls } from "./optional-nulls.js";
import { CallContext } from "./call-context.js";
import { hookName, type HookSet } from "./hooks.js";
import { fail, isToolResult, resultFromHandlerValue } from "./result.js";

/** What the pipeline needs from a registry; kept narrow so the pipeline has no import of the registry. */
export interface DispatchHost {
  readonly hooks: HookSet;
  readonly defaultTimeoutMs: number;
  readonly logger: Logger;
  lookup(name: string): ToolEntry | undefined;
  isAgentLoopTool(name: string): boolean;
  availabilityOf(entry: ToolEntry): Availability;
  validatorFor(entry: ToolEntry): ArgumentValidator;
}

export interface CallOutcome {
  /** The call as finally run (after pre-hooks rewrote it), or as received when it never parsed. */
  call: ParsedToolCall;
  result: ToolResult;
  entry?: ToolEntry;
}

/**
 * One tool call, start to end: pre-hooks → agent-loop guard → lookup →
 * availability → validation → handler (time limit, cancellation) → post-hooks.
 * Never throws and never rejects: every failure is a ToolResult.
 * Awaits only where a hook, validator or handler actually returned a promise.
 */
export async function runToolCall(
  host: DispatchHost,
  name: string,
  rawArguments: unknown,
  options?: CallOptions,
): Promise<CallOutcome> {
  const parsed = parseArguments(name, rawArguments);
  let call: ParsedToolCall = { id: options?.toolCallId, name, arguments: {} };
  if (isToolResult(parsed)) return { call, result: parsed };
  call.arguments = parsed;
  if (options?.signal?.aborted) {
    return { call, result: fail(`Tool ${name} was cancelled before it started`, "cancelled") };
  }
  const ctx = new CallContext(name, options);

  const preHooks = host.hooks.pre;
  for (let i = 0; i < preHooks.length; i++) {
    const hook = preHooks[i]!;
    let answer: unknown;
    try {
      answer = hook(call, ctx);
      if (isThenable(answer)) answer = await answer;
    } catch (thrown) {
      return { call, result: fail(`Tool call ${call.name} blocked by pre-hook ${hookName(hook)}: ${describeThrown(thrown)}`, "blocked") };
    }
    if (answer === undefined) continue;
    if (answer === null) {
      return { call, result: fail(`Tool call ${call.name} was blocked by pre-hook ${hookName(hook)}`, "blocked") };
    }
    if (!isParsedCall(answer)) {
      return {
        call,
        result: fail(
          `Pre-hook ${hookName(hook)} returned an invalid value for ${call.name}; it must return a tool call, null (block) or undefined (pass)`,
          "blocked",
        ),
      };
    }
    call = answer.id === undefined && call.id !== undefined ? { ...answer, id: call.id } : answer;
    ctx.toolName = call.name;
  }

  const found =
    ctx.allowedTools !== undefined && !ctx.allowedTools.has(call.name)
      ? fail(`Tool ${call.name} is not enabled for this session`, "unavailable")
      : findEntry(host, call.name);
  let result: ToolResult;
  if (isToolResult(found)) result = found;
  else {
    result = await checkAndRun(host, found, call, ctx, options);
  }
  result = await runPostHooks(host, call, result, ctx);
  return isToolResult(found) ? { call, result } : { call, result, entry: found };
}

function findEntry(host: DispatchHost, name: string): ToolEntry | ToolResult {
  if (host.isAgentLoopTool(name)) {
    return fail(
      `${name} is an agent-loop tool: the agent loop must handle it (pass an agentLoop handler to handleFunctionCall); the registry cannot run it`,
      "agent_loop",
    );
  }
  return host.lookup(name) ?? fail(`Unknown tool: ${name}`, "unknown_tool");
}

async function checkAndRun(
  host: DispatchHost,
  entry: ToolEntry,
  call: ParsedToolCall,
  ctx: CallContext,
  options: CallOptions | undefined,
): Promise<ToolResult> {
  if (entry.checkFn !== undefined || entry.requiresEnv.length > 0) {
    const availability = host.availabilityOf(entry);
    if (!availability.available) return fail(`Tool ${entry.name} is unavailable: ${availability.reason}`, "unavailable");
  }

  let outcome: ValidationOutcome | Promise<ValidationOutcome>;
  try {
    outcome = host.validatorFor(entry)(call.arguments);
    if (isThenable(outcome)) outcome = await outcome;
    if (Array.isArray(outcome)) {
      // OpenAI strict mode sends null for parameters the model leaves out: retry without those.
      const retry = withoutOptionalNulls(entry.schema.parameters, call.arguments);
      if (retry !== undefined) {
        outcome = await host.validatorFor(entry)(retry);
        if (!Array.isArray(outcome)) call.arguments = retry;
      }
    }
  } catch (thrown) {
    return fail(`Tool ${entry.name} could not validate its arguments: ${describeThrown(thrown)}`, "failed");
  }
  if (Array.isArray(outcome)) {
    return fail(`Invalid arguments for ${entry.name}: ${describeIssues(outcome)}`, "invalid_args", outcome);
  }
  if (outcome !== undefined) call.arguments = outcome.value;

  const timeoutMs = options?.timeoutMs ?? entry.timeoutMs ?? host.defaultTimeoutMs;
  if (timeoutMs > 0) ctx.ensureOwnSignal();
  let value: unknown;
  try {
    value = entry.invokeHandler(call.arguments, ctx);
  } catch (thrown) {
    return handlerFailure(thrown);
  }
  if (!isThenable(value)) return resultFromHandlerValue(entry.name, value);
  if (timeoutMs <= 0 && ctx.caller === undefined) {
    try {
      return resultFromHandlerValue(entry.name, await value);
    } catch (thrown) {
      return handlerFailure(thrown);
    }
  }
  return raceHandler(entry.name, value, ctx, timeoutMs);
}

function handlerFailure(thrown: unknown): ToolResult {
  return fail(`Tool execution failed: ${describeThrown(thrown)}`, "failed");
}

/** Settles with the handler, the time limit or the caller's cancellation, whichever comes first. */
function raceHandler(name: string, pending: PromiseLike<unknown>, ctx: CallContext, timeoutMs: number): Promise<ToolResult> {
  return new Promise<ToolResult>((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const caller = ctx.caller;
    const finish = (result: ToolResult): void => {
      if (settled) return;
      settled = true;
      if (timer !== undefined) clearTimeout(timer);
      caller?.removeEventListener("abort", onCancel);
      resolve(result);
    };
    const onCancel = (): void => {
      ctx.abort(caller?.reason);
      finish(fail(`Tool ${name} was cancelled`, "cancelled"));
    };
    if (timeoutMs > 0) {
      timer = setTimeout(() => {
        const seconds = timeoutMs / 1000;
        ctx.abort(new DOMException(`Tool ${name} timed out after ${seconds} s`, "TimeoutError"));
        finish(fail(`Tool ${name} timed out after ${seconds} s`, "timeout"));
      }, timeoutMs);
    }
    if (caller !== undefined) {
      if (caller.aborted) onCancel();
      else caller.addEventListener("abort", onCancel, { once: true });
    }
    pending.then(
      (value) => finish(resultFromHandlerValue(name, value)),
      (thrown) => finish(handlerFailure(thrown)),
    );
  });
}

async function runPostHooks(host: DispatchHost, call: ParsedToolCall, initial: ToolResult, ctx: CallContext): Promise<ToolResult> {
  const postHooks = host.hooks.post;
  let result = initial;
  for (let i = 0; i < postHooks.length; i++) {
    const hook = postHooks[i]!;
    let answer: unknown;
    try {
      answer = hook(call, result, ctx);
      if (isThenable(answer)) answer = await answer;
    } catch (thrown) {
      // Fail closed: a post-hook may be the one that redacts, so its result is withheld.
      host.logger.warn(`post-hook ${hookName(hook)} threw on ${call.name}: ${describeThrown(thrown)}`);
      return fail(
        `Tool ${call.name} ran, but post-hook ${hookName(hook)} failed, so its result is withheld: ${describeThrown(thrown)}`,
        "hook_failed",
      );
    }
    if (answer === undefined || answer === null) continue;
    if (!isToolResult(answer)) {
      return fail(
        `Tool ${call.name} ran, but post-hook ${hookName(hook)} returned an invalid value (expected a ToolResult, null or undefined), so its result is withheld`,
        "hook_failed",
      );
    }
    result = answer;
  }
  return result;
}

function isParsedCall(value: unknown): value is ParsedToolCall {
  if (value === null || typeof value !== "object") return false;
  const candidate = value as ParsedToolCall;
  return (
    typeof candidate.name === "string" &&
    candidate.arguments !== null &&
    typeof candidate.arguments === "object" &&
    !Array.isArray(candidate.arguments)
  );
}
