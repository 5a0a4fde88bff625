/**
 * Plugin hooks and how they reach tool calls. Plugins' hook functions are kept here in registration
 * order; while any tool-call hook (plugin or shell) exists, ONE pre-hook and ONE post-hook are installed
 * on the registry, and they run the plugin hooks, then the shell hooks. With none, nothing is installed,
 * so calls pay nothing for the plugin system. Because the bridge sits on the registry, every call that
 * goes through it is seen with the tool's registered name: built-in, plugin and MCP tools
 * (`mcp__server__tool`), and tools called by `execute_code` (each under its own name).
 *
 * - `pre_tool_call`: every hook runs (a throw is logged, the call proceeds: fail open); the first valid
 *   directive in registration order wins, plugin hooks before shell hooks (shell hooks are not started
 *   once a directive is decided). `block` (a non-empty `message` is required, else ignored) → the handler
 *   is not called and the model gets `{"error": message}` (kind `blocked`); `approve` → the approval gate
 *   (approval.ts), failing closed.
 * - `transform_tool_result`: every hook runs; the first string returned replaces the result.
 * - `post_tool_call`: observers, after the transform, with the final string, the status and `durationMs`;
 *   they also see calls a plugin blocked (status `blocked`), which the registry's own post-hooks do not.
 *
 * Calls blocked by another pre-hook before the bridge's runs are not seen by any plugin hook.
 */

import { performance } from "node:perf_hooks";

import { renderResult, resultFromHandlerValue } from "../dispatch/result.js";
import type { ToolRegistry } from "../registry/tool-registry.js";
import type { Logger, ParsedToolCall, PostHook, PreHook, ToolContext, ToolResult } from "../registry/types.js";
import { describeThrown, isThenable } from "../util/text.js";
import { askPluginApproval, type ActionApprovalGate } from "./approval.js";
import type { ShellHooks } from "./shell-hooks.js";
import type { HookName, PostToolCallEvent, SessionEvent, SubagentHookEvent, SubagentStopHookEvent, ToolCallEvent, ToolCallStatus, TransformToolResultEvent } from "./types.js";

/** One registered hook function and the plugin that owns it. */
export interface HookRecord {
  readonly owner: string;
  readonly name: string;
  readonly fn: (event: never) => unknown;
}

const MAX_RUNNING = 10_000;
const TOOL_EVENTS = new Set(["pre_tool_call", "post_tool_call", "transform_tool_result"]);

type Directive = { kind: "block"; message: string; owner: string } | { kind: "approve"; message?: string; ruleKey?: string; owner: string };

export interface PluginHooksOptions {
  registry: ToolRegistry;
  logger: Logger;
  /** The approval gate for `approve` directives (resolved on first use). */
  approval: () => ActionApprovalGate | Promise<ActionApprovalGate>;
}

export class PluginHooks {
  private records: readonly HookRecord[] = [];
  private shell: ShellHooks | undefined;
  private removeBridge: (() => void) | undefined;
  /**
   * When each running call entered the plugin hooks, for `durationMs`; taken out when the call ends. A Map,
   * not a WeakMap: an ephemeron per call costs more in garbage collection than the rest of the hooks. A call
   * that never reaches the post-hook (blocked by a later registry pre-hook) would stay, so the map is
   * emptied when it grows past `MAX_RUNNING`.
   */
  private readonly starts = new Map<object, number>();
  private readonly registry: ToolRegistry;
  private readonly logger: Logger;
  private readonly approval: PluginHooksOptions["approval"];

  constructor(options: PluginHooksOptions) {
    this.registry = options.registry;
    this.logger = options.logger;
    this.approval = options.approval;
  }

  add(owner: string, name: string, fn: (event: never) => unknown): HookRecord {
    const record: HookRecord = Object.freeze({ owner, name, fn });
    this.records = [...this.records, record];
    this.sync();
    return record;
  }

  remove(record: HookRecord): void {
    this.records = this.records.filter((r) => r !== record);
    this.sync();
  }

  setShellHooks(shell: ShellHooks | undefined): void {
    this.shell = shell;
    this.sync();
  }

  /** Whether the bridge is on the registry (a tool-call hook exists). */
  get installed(): boolean {
    return this.removeBridge !== undefined;
  }

  list(name: string): HookRecord[] {
    return this.records.filter((r) => r.name === name);
  }

  /** Uninstalls the bridge and forgets every hook. */
  clear(): void {
    this.records = [];
    this.shell = undefined;
    this.sync();
  }

  /** Runs `on_session_start` / `on_session_end` hooks (plugin, then shell); failures are logged. */
  async runSessionHooks(name: "on_session_start" | "on_session_end", event: SessionEvent): Promise<void> {
    for (const record of this.list(name)) await this.call(record, event);
    if (this.shell !== undefined) await this.shell.runSession(name, event);
  }

  /** Runs `subagent_start` / `subagent_stop` hooks (plugin, then shell); failures are logged, never thrown. */
  async runSubagentHooks(name: "subagent_start", event: SubagentHookEvent): Promise<void>;
  async runSubagentHooks(name: "subagent_stop", event: SubagentStopHookEvent): Promise<void>;
  async runSubagentHooks(name: "subagent_start" | "subagent_stop", event: SubagentHookEvent | SubagentStopHookEvent): Promise<void> {
    for (const record of this.list(name)) await this.call(record, event);
    if (this.shell !== undefined) await this.shell.runSubagent(name, event);
  }

  private sync(): void {
    const needed = this.records.some((r) => TOOL_EVENTS.has(r.name)) || (this.shell?.hasToolHooks() ?? false);
    if (needed && this.removeBridge === undefined) {
      const pre: PreHook = (call, ctx) => this.pre(call, ctx);
      const post: PostHook = (call, result, ctx) => this.post(call, result, ctx);
      Object.defineProperty(pre, "name", { value: "plugin pre_tool_call" });
      Object.defineProperty(post, "name", { value: "plugin post_tool_call" });
      const removePre = this.registry.addPreHook(pre);
      const removePost = this.registry.addPostHook(post);
      this.removeBridge = () => {
        removePre();
        removePost();
      };
    } else if (!needed && this.removeBridge !== undefined) {
      this.removeBridge();
      this.removeBridge = undefined;
    }
  }

  private async call(record: HookRecord, event: unknown): Promise<unknown> {
    try {
      return await (record.fn as (event: unknown) => unknown)(event);
    } catch (err) {
      this.threw(record, err);
      return undefined;
    }
  }

  private threw(record: HookRecord, err: unknown): void {
    this.logger.warn(`plugin "${record.owner}": ${record.name} hook threw (ignored): ${describeThrown(err)}`);
  }

  /**
   * Calls each hook in order with `event`, handing every answer to `take`; stays synchronous while no
   * hook returns a promise, so synchronous plugin hooks add no microtask turns to a call.
   */
  private runAll(records: readonly HookRecord[], event: unknown, take: (answer: unknown, record: HookRecord) => void, start = 0): void | Promise<void> {
    for (let i = start; i < records.length; i++) {
      const record = records[i]!;
      let answer: unknown;
      try {
        answer = (record.fn as (event: unknown) => unknown)(event);
      } catch (err) {
        this.threw(record, err);
        continue;
      }
      if (isThenable(answer)) {
        return Promise.resolve(answer).then(
          (settled) => {
            take(settled, record);
            return this.runAll(records, event, take, i + 1);
          },
          (err: unknown) => {
            this.threw(record, err);
            return this.runAll(records, event, take, i + 1);
          },
        );
      }
      take(answer, record);
    }
    return undefined;
  }

  private pre(call: ParsedToolCall, ctx: ToolContext): ToolResult | undefined | Promise<ToolResult | undefined> {
    if (this.starts.size >= MAX_RUNNING) this.starts.clear();
    this.starts.set(ctx, performance.now());
    const hooks = this.list("pre_tool_call");
    const shellPre = this.shell?.has("pre_tool_call", call.name) ?? false;
    if (hooks.length === 0 && !shellPre) return undefined;
    const event = this.event(call, ctx);
    let directive: Directive | undefined;
    const ran = this.runAll(hooks, event, (answer, record) => {
      directive ??= toDirective(answer, record.owner);
    });
    const decide = (): undefined | Promise<ToolResult | undefined> =>
      directive === undefined && !shellPre ? undefined : this.decide(call, ctx, event, directive);
    return isThenable(ran) ? ran.then(decide) : decide();
  }

  private event(call: ParsedToolCall, ctx: ToolContext): ToolCallEvent {
    return { toolName: call.name, args: call.arguments, taskId: ctx.taskId, sessionId: ctx.sessionId, toolCallId: ctx.toolCallId ?? call.id, surface: ctx.surface ?? "library" };
  }

  private async decide(call: ParsedToolCall, ctx: ToolContext, event: ToolCallEvent, decided: Directive | undefined): Promise<ToolResult | undefined> {
    let directive = decided;
    if (directive === undefined && this.shell !== undefined) {
      const block = await this.shell.runPre(event, ctx);
      if (block !== undefined) directive = { kind: "block", message: block.message, owner: block.owner };
    }
    if (directive === undefined) return undefined;
    let blocked: ToolResult | undefined;
    if (directive.kind === "block") {
      blocked = { success: false, error: { kind: "blocked", message: directive.message } };
    } else {
      blocked = await askPluginApproval(
        this.approval,
        { pluginKey: directive.owner, toolName: call.name, args: call.arguments, message: directive.message, ruleKey: directive.ruleKey, sessionId: ctx.sessionId, signal: ctx.signal, approvalScope: ctx.approvalScope },
        this.logger,
      );
    }
    if (blocked === undefined) return undefined;
    // The registry's post-hooks never see a blocked call; plugin observers do.
    const start = this.starts.get(ctx);
    this.starts.delete(ctx);
    await this.observe(call, ctx, blocked, this.render(call.name, blocked), start);
    return blocked;
  }

  private post(call: ParsedToolCall, result: ToolResult, ctx: ToolContext): ToolResult | undefined | Promise<ToolResult | undefined> {
    const start = this.starts.get(ctx);
    this.starts.delete(ctx);
    const transforms = this.list("transform_tool_result");
    const shellTransform = this.shell?.has("transform_tool_result", call.name) ?? false;
    if (transforms.length === 0 && !shellTransform && this.list("post_tool_call").length === 0 && !(this.shell?.has("post_tool_call", call.name) ?? false)) {
      return undefined;
    }
    const text = this.render(call.name, result);
    let replacement: string | undefined;
    const finish = (): ToolResult | undefined | Promise<ToolResult | undefined> => {
      let replaced: ToolResult | undefined;
      if (replacement !== undefined) {
        const next = resultFromHandlerValue(call.name, replacement);
        replaced = result.metadata === undefined ? next : { ...next, metadata: result.metadata };
      }
      const observed = this.observe(call, ctx, replaced ?? result, replacement ?? text, start);
      return isThenable(observed) ? observed.then(() => replaced) : replaced;
    };
    if (transforms.length === 0 && !shellTransform) return finish();
    const event: TransformToolResultEvent = {
      toolName: call.name,
      args: call.arguments,
      taskId: ctx.taskId,
      sessionId: ctx.sessionId,
      toolCallId: ctx.toolCallId ?? call.id,
      surface: ctx.surface ?? "library",
      result: text,
      status: statusOf(result),
    };
    const afterPlugins = (): ToolResult | undefined | Promise<ToolResult | undefined> => {
      if (replacement !== undefined || !shellTransform) return finish();
      return this.shell!.runTransform(event, ctx).then((answer) => {
        replacement = answer;
        return finish();
      });
    };
    const ran = this.runAll(transforms, event, (answer) => {
      if (replacement === undefined && typeof answer === "string") replacement = answer;
    });
    return isThenable(ran) ? ran.then(afterPlugins) : afterPlugins();
  }

  private observe(call: ParsedToolCall, ctx: ToolContext, result: ToolResult, text: string, start: number | undefined): void | Promise<void> {
    const observers = this.list("post_tool_call");
    const shellPost = this.shell?.has("post_tool_call", call.name) ?? false;
    if (observers.length === 0 && !shellPost) return undefined;
    const durationMs = start === undefined ? 0 : Math.max(0, Math.round(performance.now() - start));
    // Written out, not spread from event(): a spread here costs more than the rest of the hook.
    const event: PostToolCallEvent = {
      toolName: call.name,
      args: call.arguments,
      taskId: ctx.taskId,
      sessionId: ctx.sessionId,
      toolCallId: ctx.toolCallId ?? call.id,
      surface: ctx.surface ?? "library",
      result: text,
      durationMs,
      status: statusOf(result),
    };
    const ran = this.runAll(observers, event, () => undefined);
    if (!shellPost) return ran;
    return isThenable(ran) ? ran.then(() => this.shell!.runPost(event, ctx)) : this.shell!.runPost(event, ctx);
  }

  /** What the model would read (before truncation and output redaction): hooks see the whole text. */
  private render(name: string, result: ToolResult): string {
    return renderResult(name, result, { maxResultChars: Number.POSITIVE_INFINITY, maxErrorChars: this.registry.maxErrorChars });
  }
}

function statusOf(result: ToolResult): ToolCallStatus {
  return result.success ? "ok" : (result.error?.kind ?? "failed");
}

/** A valid directive, or undefined for anything else (non-objects, unknown actions, a block without a message). */
function toDirective(answer: unknown, owner: string): Directive | undefined {
  if (answer === null || typeof answer !== "object" || Array.isArray(answer)) return undefined;
  const a = answer as Record<string, unknown>;
  if (a.action === "block") {
    return typeof a.message === "string" && a.message.trim() !== "" ? { kind: "block", message: a.message, owner } : undefined;
  }
  if (a.action === "approve") {
    const directive: Directive = { kind: "approve", owner };
    if (typeof a.message === "string") directive.message = a.message;
    const ruleKey = typeof a.ruleKey === "string" ? a.ruleKey : typeof a.rule_key === "string" ? a.rule_key : undefined;
    if (ruleKey !== undefined && ruleKey.trim() !== "") directive.ruleKey = ruleKey;
    return directive;
  }
  return undefined;
}

export type { HookName };
