import type { CallOptions, Logger, ParsedToolCall, PostHook, PreHook, ToolEntry, ToolResult, ValidationIssue } from "../registry/types.js";
import type { Availability } from "../registry/availability.js";
import type { ArgumentValidator, ValidationOutcome } from "../schema/validator.js";
import { describeIssues } from "../schema/validator.js";
import { describeThrown, isThenable } from "../util/text.js";
import { redactSecrets } from "../redaction/redact.js";
import { parseArguments } from "./arguments.js";
import { withoutOptionalNulls } from "./optional-nulls.js";
import { withScalarStringsCoerced } from "./coerce-arguments.js";
import { CallContext } from "./call-context.js";
import { hookName, type HookSet } from "./hooks.js";
import { outsideSessionResult, unknownToolResult } from "./unknown-tool.js";
import { checkSerialisable, cutShortResult, describeThrownSafely, fail, isToolResult, resultFromHandlerValue, screenOutput } from "./result.js";

/** What the pipeline needs from a registry; kept narrow so the pipeline has no import of the registry. */
export interface DispatchHost {
  readonly hooks: HookSet;
  readonly defaultTimeoutMs: number;
  readonly logger: Logger;
  lookup(name: string): ToolEntry | undefined;
  /** The registered tool names, for suggestions when a call names an unknown one (optional: no suggestions without it). */
  readonly names?: Iterable<string>;
  /** Whether built-in tools were registered here; an unknown built-in name then gets no `discoverBuiltinTools()` hint. */
  readonly builtinsRegistered?: boolean;
  isAgentLoopTool(name: string): boolean;
  availabilityOf(entry: ToolEntry): Availability;
  validatorFor(entry: ToolEntry): ArgumentValidator;
  /** How long to wait for a cut-short handler to settle (default `CANCEL_GRACE_MS`; 0 does not wait). */
  readonly cancelGraceMs?: number;
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
 *
 * Each step returns a plain value when nothing it called returned a promise,
 * and a promise otherwise, so a synchronous tool with synchronous hooks costs
 * no microtask turns; only the caller's single `await` remains.
 */
export function runToolCall(
  host: DispatchHost,
  name: string,
  rawArguments: unknown,
  options?: CallOptions,
): CallOutcome | Promise<CallOutcome> {
  const parsed = parseArguments(name, rawArguments);
  const call: ParsedToolCall = { id: options?.toolCallId, name, arguments: parsed.ok ? parsed.args : {} };
  if (!parsed.ok) return { call, result: parsed.result };
  if (options?.signal?.aborted) {
    return { call, result: fail(`Tool ${name} was cancelled before it started`, "cancelled") };
  }
  const ctx = new CallContext(name, options);
  const hooked = runPreHooks(host, call, ctx, 0);
  return isThenable(hooked) ? hooked.then((state) => afterPreHooks(host, state, ctx, options)) : afterPreHooks(host, hooked, ctx, options);
}

interface PreHookState {
  call: ParsedToolCall;
  blocked?: ToolResult;
}

function runPreHooks(host: DispatchHost, initial: ParsedToolCall, ctx: CallContext, start: number): PreHookState | Promise<PreHookState> {
  const preHooks = host.hooks.pre;
  let call = initial;
  for (let i = start; i < preHooks.length; i++) {
    const hook = preHooks[i]!;
    let answer: unknown;
    try {
      answer = hook(call, ctx);
    } catch (thrown) {
      return preHookThrew(call, hook, thrown);
    }
    if (isThenable(answer)) {
      const current = call;
      return Promise.resolve(answer).then(
        (settled) => {
          const state = applyPreHookAnswer(current, hook, settled, ctx);
          return state.blocked === undefined ? runPreHooks(host, state.call, ctx, i + 1) : state;
        },
        (thrown: unknown) => preHookThrew(current, hook, thrown),
      );
    }
    const state = applyPreHookAnswer(call, hook, answer, ctx);
    if (state.blocked !== undefined) return state;
    call = state.call;
  }
  return { call };
}

function preHookThrew(call: ParsedToolCall, hook: PreHook, thrown: unknown): PreHookState {
  return { call, blocked: fail(`Tool call ${call.name} blocked by pre-hook ${hookName(hook)}: ${describeThrown(thrown)}`, "blocked") };
}

function applyPreHookAnswer(call: ParsedToolCall, hook: PreHook, answer: unknown, ctx: CallContext): PreHookState {
  if (answer === undefined) return { call };
  if (answer === null) return { call, blocked: fail(`Tool call ${call.name} was blocked by pre-hook ${hookName(hook)}`, "blocked") };
  if (!isParsedCall(answer)) {
    // A failed ToolResult blocks with exactly that error (the plugin `block` directive's message is what the model reads).
    if (isToolResult(answer) && !answer.success && answer.error !== undefined) return { call, blocked: answer };
    return {
      call,
      blocked: fail(
        `Pre-hook ${hookName(hook)} returned an invalid value for ${call.name}; it must return a tool call, a failed ToolResult or null (block), or undefined (pass)`,
        "blocked",
      ),
    };
  }
  const next = answer.id === undefined && call.id !== undefined ? { ...answer, id: call.id } : answer;
  ctx.toolName = next.name;
  return { call: next };
}

function afterPreHooks(host: DispatchHost, state: PreHookState, ctx: CallContext, options: CallOptions | undefined): CallOutcome | Promise<CallOutcome> {
  const { call } = state;
  if (state.blocked !== undefined) return { call, result: state.blocked };
  let entry: ToolEntry | undefined;
  let result: ToolResult | Promise<ToolResult>;
  if (ctx.allowedTools !== undefined && !ctx.allowedTools.has(call.name)) {
    result = outsideSessionResult(host, call.name, ctx.allowedTools);
  } else if (host.isAgentLoopTool(call.name)) {
    result = fail(
      `${call.name} is an agent-loop tool: the agent loop must handle it (pass an agentLoop handler to handleFunctionCall); the registry cannot run it`,
      "agent_loop",
    );
  } else {
    entry = host.lookup(call.name);
    result = entry === undefined ? unknownToolResult(host, call.name, ctx.allowedTools) : checkAndRun(host, entry, call, ctx, options);
  }
  if (isThenable(result)) return result.then((settled) => afterRun(host, call, settled, ctx, entry));
  return afterRun(host, call, result, ctx, entry);
}

function afterRun(host: DispatchHost, call: ParsedToolCall, result: ToolResult, ctx: CallContext, entry: ToolEntry | undefined): CallOutcome | Promise<CallOutcome> {
  if (host.hooks.post.length === 0) return finalOutcome(call, result, entry);
  // Post-hooks saw a result already checked for serialisability; what they
  // leave (a replacement, or the same object changed in place) is checked again.
  const final = runPostHooks(host, call, result, ctx, 0);
  if (isThenable(final)) return final.then((settled) => finalOutcome(call, checkSerialisable(call.name, settled, "post-hook"), entry));
  return finalOutcome(call, checkSerialisable(call.name, final, "post-hook"), entry);
}

function finalOutcome(call: ParsedToolCall, result: ToolResult, entry: ToolEntry | undefined): CallOutcome {
  // Output of a tool that is not built in is redacted when rendered for the model (result.ts).
  if (entry !== undefined) screenOutput(result, entry.redactOutput);
  return { call, result, entry };
}

function checkAndRun(
  host: DispatchHost,
  entry: ToolEntry,
  call: ParsedToolCall,
  ctx: CallContext,
  options: CallOptions | undefined,
): ToolResult | Promise<ToolResult> {
  if (entry.checkFn !== undefined || entry.requiresEnv.length > 0) {
    const availability = host.availabilityOf(entry);
    if (!availability.available) return fail(`Tool ${entry.name} is unavailable: ${availability.reason}`, "unavailable");
  }
  let outcome: ValidationOutcome | Promise<ValidationOutcome>;
  try {
    outcome = host.validatorFor(entry)(call.arguments);
  } catch (thrown) {
    return validationFailure(entry, thrown);
  }
  if (isThenable(outcome)) {
    return Promise.resolve(outcome).then(
      (settled) => afterValidation(host, entry, call, ctx, options, settled),
      (thrown: unknown) => validationFailure(entry, thrown),
    );
  }
  return afterValidation(host, entry, call, ctx, options, outcome);
}

function validationFailure(entry: ToolEntry, thrown: unknown): ToolResult {
  return fail(`Tool ${entry.name} could not validate its arguments: ${describeThrown(thrown)}`, "failed");
}

function afterValidation(
  host: DispatchHost,
  entry: ToolEntry,
  call: ParsedToolCall,
  ctx: CallContext,
  options: CallOptions | undefined,
  outcome: ValidationOutcome,
): ToolResult | Promise<ToolResult> {
  if (Array.isArray(outcome)) {
    // One retry with the arguments repaired: OpenAI strict mode sends null for the
    // parameters the model leaves out (dropped), and models quote numbers and
    // booleans ("30", "true": converted, see coerce-arguments.ts).
    const parameters = entry.schema.parameters;
    const withoutNulls = withoutOptionalNulls(parameters, call.arguments);
    const retry = withScalarStringsCoerced(parameters, withoutNulls ?? call.arguments) ?? withoutNulls;
    if (retry === undefined) return invalidArguments(entry, outcome);
    return Promise.resolve()
      .then(() => host.validatorFor(entry)(retry))
      .then(
        (second) => {
          if (Array.isArray(second)) return invalidArguments(entry, second);
          call.arguments = retry;
          return afterValidation(host, entry, call, ctx, options, second);
        },
        (thrown: unknown) => validationFailure(entry, thrown),
      );
  }
  if (outcome !== undefined) call.arguments = outcome.value;
  return runHandler(host, entry, call, ctx, options);
}

function invalidArguments(entry: ToolEntry, issues: ValidationIssue[]): ToolResult {
  return fail(`Invalid arguments for ${entry.name}: ${describeIssues(issues)}`, "invalid_args", issues);
}

function runHandler(
  host: DispatchHost,
  entry: ToolEntry,
  call: ParsedToolCall,
  ctx: CallContext,
  options: CallOptions | undefined,
): ToolResult | Promise<ToolResult> {
  const timeoutMs = options?.timeoutMs ?? entry.timeoutMs ?? host.defaultTimeoutMs;
  if (timeoutMs > 0) ctx.ensureOwnSignal();
  let value: unknown;
  try {
    value = entry.invokeHandler(call.arguments, ctx);
  } catch (thrown) {
    ctx.settle();
    return handlerFailure(thrown);
  }
  if (!isThenable(value)) {
    ctx.settle();
    return resultFromHandlerValue(entry.name, value);
  }
  if (timeoutMs <= 0 && ctx.caller === undefined) {
    return Promise.resolve(value).then(
      (settled) => resultFromHandlerValue(entry.name, settled),
      (thrown: unknown) => handlerFailure(thrown),
    );
  }
  return raceHandler(host, entry.name, value, ctx, timeoutMs);
}

function handlerFailure(thrown: unknown): ToolResult {
  return fail(`Tool execution failed: ${describeThrownSafely(thrown)}`, "failed");
}

/**
 * How long dispatch waits, after a call's signal aborts (time limit or the
 * caller's cancellation), for a handler that read its signal to settle with
 * what it has: the terminal's partial output with `status: "cancelled"`, say.
 * The terminal kills a process group with SIGTERM, then SIGKILL 2 s later,
 * and waits up to 1 s more for it to be gone; 4 s covers that with a margin.
 * A handler that never read its signal is not waited for at all.
 */
export const CANCEL_GRACE_MS = 4_000;

/**
 * Settles with the handler, the time limit or the caller's cancellation,
 * whichever comes first. When the signal aborts first, a handler that read
 * the signal gets `cancelGraceMs` to settle: its result is then kept as the
 * data of the `timeout`/`cancelled` failure (see `cutShortResult`).
 */
function raceHandler(host: DispatchHost, name: string, pending: PromiseLike<unknown>, ctx: CallContext, timeoutMs: number): Promise<ToolResult> {
  return new Promise<ToolResult>((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    /** The failure to return when the signal aborted before the handler settled. */
    let cutShort: ToolResult | undefined;
    const caller = ctx.caller;
    const finish = (result: ToolResult): void => {
      if (settled) return;
      settled = true;
      if (timer !== undefined) clearTimeout(timer);
      caller?.removeEventListener("abort", onCancel);
      ctx.settle();
      resolve(result);
    };
    const stop = (failure: ToolResult, reason: unknown): void => {
      if (settled || cutShort !== undefined) return;
      cutShort = failure;
      caller?.removeEventListener("abort", onCancel);
      if (timer !== undefined) clearTimeout(timer);
      ctx.abort(reason);
      const grace = host.cancelGraceMs ?? CANCEL_GRACE_MS;
      if (!ctx.signalRead || grace <= 0) {
        finish(failure);
        return;
      }
      // The handler may still deliver what it has; past the grace it is abandoned.
      timer = setTimeout(() => finish(failure), grace);
    };
    const onCancel = (): void => {
      stop(fail(`Tool ${name} was cancelled`, "cancelled"), caller?.reason);
    };
    if (timeoutMs > 0) {
      timer = setTimeout(() => {
        const seconds = timeoutMs / 1000;
        const message = `Tool ${name} timed out after ${seconds} s`;
        stop(fail(message, "timeout"), new DOMException(message, "TimeoutError"));
      }, timeoutMs);
    }
    if (caller !== undefined) {
      if (caller.aborted) onCancel();
      else caller.addEventListener("abort", onCancel, { once: true });
    }
    pending.then(
      (value) => {
        const result = resultFromHandlerValue(name, value);
        finish(cutShort === undefined ? result : cutShortResult(cutShort, result));
      },
      // A handler that throws once its signal aborted (an AbortError) was simply cut short.
      (thrown) => finish(cutShort ?? handlerFailure(thrown)),
    );
  });
}

function runPostHooks(
  host: DispatchHost,
  call: ParsedToolCall,
  initial: ToolResult,
  ctx: CallContext,
  start: number,
): ToolResult | Promise<ToolResult> {
  const postHooks = host.hooks.post;
  let result = initial;
  for (let i = start; i < postHooks.length; i++) {
    const hook = postHooks[i]!;
    let answer: unknown;
    try {
      answer = hook(call, result, ctx);
    } catch (thrown) {
      return postHookThrew(host, call, hook, thrown);
    }
    if (isThenable(answer)) {
      const current = result;
      return Promise.resolve(answer).then(
        (settled) => {
          const step = applyPostHookAnswer(call, hook, current, settled);
          return step.withheld ? step.result : runPostHooks(host, call, step.result, ctx, i + 1);
        },
        (thrown: unknown) => postHookThrew(host, call, hook, thrown),
      );
    }
    const step = applyPostHookAnswer(call, hook, result, answer);
    if (step.withheld) return step.result;
    result = step.result;
  }
  return result;
}

function postHookThrew(host: DispatchHost, call: ParsedToolCall, hook: PostHook, thrown: unknown): ToolResult {
  // Fail closed: a post-hook may be the one that redacts, so the result is withheld.
  host.logger.warn(`post-hook ${hookName(hook)} threw on ${call.name}: ${redactSecrets(describeThrown(thrown))}`);
  return fail(`Tool ${call.name} ran, but post-hook ${hookName(hook)} failed, so its result is withheld: ${describeThrown(thrown)}`, "hook_failed");
}

function applyPostHookAnswer(call: ParsedToolCall, hook: PostHook, result: ToolResult, answer: unknown): { result: ToolResult; withheld: boolean } {
  if (answer === undefined || answer === null) return { result, withheld: false };
  if (!isToolResult(answer)) {
    const message = `Tool ${call.name} ran, but post-hook ${hookName(hook)} returned an invalid value (expected a ToolResult, null or undefined), so its result is withheld`;
    return { result: fail(message, "hook_failed"), withheld: true };
  }
  return { result: answer, withheld: false };
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
