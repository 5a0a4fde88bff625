/**
 * The bridge: `tool_search`, `tool_describe` and `tool_call` answered for one session.
 *
 * `tool_call` is unwrapped, never run as a tool of its own: the underlying tool goes through
 * `handleFunctionCallDetailed` with the caller's options, so pre/post hooks, the approval gate, argument
 * validation, time limits and receipts see the real name and arguments. Its reach is the session's: the
 * call runs with `allowedTools` set to the visible tools and the deferred tools in scope now (intersected
 * with the caller's own `allowedTools`), and a name outside it is refused here, with the text a direct
 * call would get, before any hook or handler (an agent-loop handler included) sees it. Names are matched
 * exactly: no trimming, no case folding.
 */

import { handleFunctionCallDetailed, type FunctionCallOutcome, type HandleFunctionCallOptions } from "../../dispatch/handle-function-call.js";
import { fail, ok } from "../../dispatch/result.js";
import { outsideSessionResult } from "../../dispatch/unknown-tool.js";
import type { ToolRegistry } from "../../registry/tool-registry.js";
import type { ToolResult } from "../../registry/types.js";
import type { ToolSearchConfig } from "./config.js";
import { isBridgeToolName, sourceOf, TOOL_DESCRIBE_NAME, TOOL_SEARCH_NAME } from "./names.js";
import { BridgeScope } from "./scope.js";

/** A description in `tool_search`'s matches is cut to this many characters. */
export const MATCH_DESCRIPTION_CHARS = 400;
/** Failed bridge calls remembered for the repeat hint. */
const REMEMBERED_FAILURES = 64;

export const REPEAT_HINT =
  "This exact call already failed; repeating it will fail again. Check the name with tool_search and the parameters with tool_describe, or continue without this tool.";

/** What a bridge carries across plans of one session (the repeat hint's memory). */
export type UnwrappedCall =
  | { ok: true; name: string; arguments: Record<string, unknown>; allowed: Set<string> }
  | { ok: false; outcome: FunctionCallOutcome };

export class ToolSearchState {
  readonly failures = new Set<string>();
  /** Forget past failures (a new user turn). */
  reset(): void {
    this.failures.clear();
  }
}

export class ToolSearchBridge {
  readonly scope: BridgeScope;

  constructor(
    readonly registry: ToolRegistry,
    scope: BridgeScope,
    readonly config: ToolSearchConfig,
    readonly state: ToolSearchState = new ToolSearchState(),
  ) {
    this.scope = scope;
  }

  /** Whether `name` is one of the bridge tools this bridge answers. */
  handles(name: string): boolean {
    return isBridgeToolName(name);
  }

  /**
   * One call: a bridge tool is answered (tool_call unwrapped and dispatched); any other name goes to
   * `handleFunctionCallDetailed` unchanged. Never rejects.
   */
  async handleFunctionCallDetailed(name: string, args: unknown, options: HandleFunctionCallOptions = {}): Promise<FunctionCallOutcome> {
    if (!isBridgeToolName(name)) return handleFunctionCallDetailed(name, args, { ...options, registry: this.registry });
    const key = `${name}\u0000${stableArgs(args)}`;
    let outcome: FunctionCallOutcome;
    try {
      outcome =
        name === TOOL_SEARCH_NAME ? this.search(args) : name === TOOL_DESCRIBE_NAME ? this.describe(args) : await this.call(args, options);
    } catch (thrown) {
      outcome = errorOutcome(`Error executing ${name}: ${thrown instanceof Error ? thrown.message : String(thrown)}`);
    }
    return this.remember(key, outcome);
  }

  async handleFunctionCall(name: string, args: unknown, options: HandleFunctionCallOptions = {}): Promise<string> {
    return (await this.handleFunctionCallDetailed(name, args, options)).content;
  }

  /** `tool_search {query, limit?}` → `{query, total_available, matches: [{name, source, source_name, description}]}`. */
  search(args: unknown): FunctionCallOutcome {
    const parsed = parseBridgeArgs(args);
    if (typeof parsed === "string") return errorOutcome(parsed);
    const query = typeof parsed.query === "string" ? parsed.query.trim() : "";
    if (query === "") return errorOutcome("query is required");
    const { maxSearchLimit, searchDefaultLimit } = this.config;
    const asked = typeof parsed.limit === "number" && Number.isFinite(parsed.limit) ? Math.floor(parsed.limit) : searchDefaultLimit;
    const limit = Math.min(maxSearchLimit, Math.max(1, asked));
    const view = this.scope.view();
    const hits = view.snapshot.index.search(query, limit, (position) => view.positions.has(position));
    const matches = hits.map((hit) => {
      const entry = view.snapshot.entries[hit.index]!;
      const { source, sourceName } = sourceOf(entry);
      const description = view.deferred.get(entry.name)?.schema.description ?? entry.description;
      return { name: entry.name, source, source_name: sourceName, description: capChars(description, MATCH_DESCRIPTION_CHARS) };
    });
    const data = { query, total_available: view.deferred.size, matches };
    return { content: JSON.stringify(data), isError: false, result: ok(data) };
  }

  /** `tool_describe {name}` → `{name, description, parameters}`. */
  describe(args: unknown): FunctionCallOutcome {
    const parsed = parseBridgeArgs(args);
    if (typeof parsed === "string") return errorOutcome(parsed);
    const name = parsed.name;
    if (typeof name !== "string" || name === "") return errorOutcome("name is required");
    const tool = this.scope.view().deferred.get(name);
    if (tool !== undefined) {
      const data = { name, description: tool.schema.description ?? tool.entry.description, parameters: tool.schema.parameters };
      return { content: JSON.stringify(data), isError: false, result: ok(data) };
    }
    if (isBridgeToolName(name) || this.scope.visible.has(name)) {
      return errorOutcome(`'${name}' is not a deferrable tool. If you see it in the tools list already, call it directly; otherwise check the spelling against tool_search.`);
    }
    return errorOutcome(`'${name}' is not currently available. Re-run tool_search to refresh.`);
  }

  /** `tool_call {name, arguments}`: the underlying tool, dispatched as a direct call within the session's reach. */
  private async call(args: unknown, options: HandleFunctionCallOptions): Promise<FunctionCallOutcome> {
    const unwrapped = this.unwrap(args, options.allowedTools);
    if (!unwrapped.ok) return unwrapped.outcome;
    const agentLoop = this.registry.isAgentLoopTool(unwrapped.name) ? options.agentLoop : undefined;
    const outcome = await handleFunctionCallDetailed(unwrapped.name, unwrapped.arguments, {
      ...options,
      registry: this.registry,
      allowedTools: unwrapped.allowed,
      agentLoop,
    });
    return this.finishCall(unwrapped.name, outcome);
  }

  /**
   * `tool_call`'s arguments → the underlying call, or the refusal. `callerAllowed` (the caller's own
   * `allowedTools`) narrows the session's reach further; it never widens it.
   */
  unwrap(args: unknown, callerAllowed?: ReadonlySet<string> | readonly string[]): UnwrappedCall {
    const parsed = parseBridgeArgs(args);
    if (typeof parsed === "string") return { ok: false, outcome: errorOutcome(parsed) };
    const name = parsed.name;
    if (typeof name !== "string" || name === "") {
      return { ok: false, outcome: errorOutcome("tool_call needs 'name': the exact name of a tool found with tool_search") };
    }
    if (isBridgeToolName(name)) return { ok: false, outcome: errorOutcome(`tool_call cannot invoke '${name}' (it is itself a bridge tool)`) };
    const toolArgs = parseToolArguments(parsed.arguments);
    if (typeof toolArgs === "string") return { ok: false, outcome: errorOutcome(toolArgs) };
    const allowed = this.allowedTools(callerAllowed);
    if (!allowed.has(name)) {
      // Refused as a direct call outside the session would be, before any hook or handler runs.
      const refusal = outsideSessionResult(this.registry, name, allowed);
      return { ok: false, outcome: errorOutcome(refusal.error?.message ?? `Tool ${name} is not enabled for this session`, refusal) };
    }
    return { ok: true, name, arguments: toolArgs, allowed };
  }

  /** The names a call may reach now: visible and in-scope deferred tools, narrowed by the caller's own list. */
  allowedTools(callerAllowed?: ReadonlySet<string> | readonly string[]): Set<string> {
    const allowed = this.scope.allowedNames();
    if (callerAllowed !== undefined) {
      const narrowing = new Set(callerAllowed);
      for (const tool of allowed) if (!narrowing.has(tool)) allowed.delete(tool);
    }
    return allowed;
  }

  /** What the model reads after an unwrapped call ran: the tool's answer, with the schema or the nudge added. */
  finishCall(name: string, outcome: FunctionCallOutcome): FunctionCallOutcome {
    const deferred = this.scope.view().deferred.get(name);
    if (deferred === undefined) {
      // #73388: a visible tool routed through the bridge runs (no error loop), with a nudge.
      return withFields(outcome, { note: `'${name}' is directly available; call it directly next time` });
    }
    if (outcome.result.error?.kind === "invalid_args") {
      // #76119: the tool did not run; the model gets its schema to fix the call.
      return withFields(outcome, { parameters: deferred.schema.parameters });
    }
    return outcome;
  }

  /** Adds the repeat hint to a bridge call that failed the same way before, and remembers failures. */
  rememberFailure(name: string, args: unknown, outcome: FunctionCallOutcome): FunctionCallOutcome {
    return this.remember(`${name}\u0000${stableArgs(args)}`, outcome);
  }

  private remember(key: string, outcome: FunctionCallOutcome): FunctionCallOutcome {
    if (!outcome.isError) return outcome;
    if (this.state.failures.has(key)) return withFields(outcome, { hint: REPEAT_HINT });
    if (this.state.failures.size >= REMEMBERED_FAILURES) this.state.failures.delete(this.state.failures.values().next().value as string);
    this.state.failures.add(key);
    return outcome;
  }
}

function errorOutcome(message: string, result?: ToolResult): FunctionCallOutcome {
  return { content: JSON.stringify({ error: message }), isError: true, result: result ?? fail(message, "invalid_args") };
}

/** The bridge's own arguments: an object or a JSON object string; a string describing the problem otherwise. */
function parseBridgeArgs(args: unknown): Record<string, unknown> | string {
  let value = args;
  if (value === undefined || value === null || value === "") return {};
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      return "arguments must be a JSON object";
    }
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return "arguments must be a JSON object";
  return value as Record<string, unknown>;
}

/** tool_call's `arguments`: an object, or a string holding a JSON object; absent means `{}`. */
function parseToolArguments(value: unknown): Record<string, unknown> | string {
  if (value === undefined || value === null) return {};
  let parsed = value;
  if (typeof value === "string") {
    if (value.trim() === "") return {};
    try {
      parsed = JSON.parse(value);
    } catch (thrown) {
      return `tool_call 'arguments' is not valid JSON: ${(thrown as Error).message}`;
    }
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    const got = parsed === null ? "null" : Array.isArray(parsed) ? "an array" : `a ${typeof parsed}`;
    return `tool_call 'arguments' must be a JSON object, got ${got}`;
  }
  return parsed as Record<string, unknown>;
}

/** Adds fields to a JSON-object answer; any other answer is wrapped as `{result, ...fields}`. */
function withFields(outcome: FunctionCallOutcome, fields: Record<string, unknown>): FunctionCallOutcome {
  let body: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(outcome.content);
    body = parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { result: outcome.content };
  } catch {
    body = { result: outcome.content };
  }
  return { ...outcome, content: JSON.stringify({ ...body, ...fields }) };
}

function stableArgs(args: unknown): string {
  if (typeof args === "string") {
    try {
      return JSON.stringify(JSON.parse(args));
    } catch {
      return args;
    }
  }
  try {
    return JSON.stringify(args) ?? "";
  } catch {
    return String(args);
  }
}

function capChars(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

