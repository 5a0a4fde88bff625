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
import { describeThrown } from "../util/text.js";
import { askPluginApproval, type ActionApprovalGate } from "./approval.js";
import type { ShellHooks } from "./shell-hooks.js";
import type { HookName, PostToolCallEvent, SessionEvent, ToolCallEvent, ToolCallStatus, TransformToolResultEvent } from "./types.js";

/** One registered hook function and the plugin that owns it. */
export interface HookRecord {
  readonly owner: string;
  readonly name: string;
  readonly fn: (event: never) => unknown;
}

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
  private readonly starts = new WeakMap<object, number>();
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
      this.logger.warn(`plugin "${record.owner}": ${record.name} hook threw (ignored): ${describeThrown(err)}`);
      return undefined;
    }
  }

  private pre(call: ParsedToolCall, ctx: ToolContext): undefined | Promise<ToolResult | undefined> {
    this.starts.set(ctx, performance.now());
    const hooks = this.list("pre_tool_call");
    if (hooks.length === 0 && !(this.shell?.has("pre_tool_call", call.name) ?? false)) return undefined;
    return this.runPre(call, ctx, hooks);
  }

  private event(call: ParsedToolCall, ctx: ToolContext): ToolCallEvent {
    return { toolName: call.name, args: call.arguments, taskId: ctx.taskId, sessionId: ctx.sessionId, toolCallId: ctx.toolCallId ?? call.id };
  }

  private async runPre(call: ParsedToolCall, ctx: ToolContext, hooks: HookRecord[]): Promise<ToolResult | undefined> {
    const event = this.event(call, ctx);
    let directive: Directive | undefined;
    for (const record of hooks) {
      const answer = await this.call(record, event);
      directive ??= toDirective(answer, record.owner);
    }
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
        { pluginKey: directive.owner, toolName: call.name, args: call.arguments, message: directive.message, ruleKey: directive.ruleKey, sessionId: ctx.sessionId, signal: ctx.signal },
        this.logger,
      );
    }
    if (blocked === undefined) return undefined;
    // The registry's post-hooks never see a blocked call; plugin observers do.
    await this.observe(call, ctx, blocked, this.render(call.name, blocked));
    return blocked;
  }

  private post(call: ParsedToolCall, result: ToolResult, ctx: ToolContext): undefined | Promise<ToolResult | undefined> {
    if (this.list("post_tool_call").length === 0 && this.list("transform_tool_result").length === 0 && !(this.shell?.hasAfter(call.name) ?? false)) {
      return undefined;
    }
    return this.runPost(call, result, ctx);
  }

  private async runPost(call: ParsedToolCall, result: ToolResult, ctx: ToolContext): Promise<ToolResult | undefined> {
    let text = this.render(call.name, result);
    const status = statusOf(result);
    let replacement: string | undefined;
    const transforms = this.list("transform_tool_result");
    if (transforms.length > 0 || (this.shell?.has("transform_tool_result", call.name) ?? false)) {
      const event: TransformToolResultEvent = { ...this.event(call, ctx), result: text, status };
      for (const record of transforms) {
        const answer = await this.call(record, event);
        if (replacement === undefined && typeof answer === "string") replacement = answer;
      }
      if (replacement === undefined && this.shell !== undefined) replacement = await this.shell.runTransform(event, ctx);
    }
    let replaced: ToolResult | undefined;
    if (replacement !== undefined) {
      const next = resultFromHandlerValue(call.name, replacement);
      replaced = result.metadata === undefined ? next : { ...next, metadata: result.metadata };
      text = replacement;
    }
    await this.observe(call, ctx, replaced ?? result, text);
    return replaced;
  }

  private async observe(call: ParsedToolCall, ctx: ToolContext, result: ToolResult, text: string): Promise<void> {
    const observers = this.list("post_tool_call");
    const shellPost = this.shell?.has("post_tool_call", call.name) ?? false;
    if (observers.length === 0 && !shellPost) return;
    const start = this.starts.get(ctx);
    const durationMs = start === undefined ? 0 : Math.max(0, Math.round(performance.now() - start));
    const event: PostToolCallEvent = { ...this.event(call, ctx), result: text, durationMs, status: statusOf(result) };
    for (const record of observers) await this.call(record, event);
    if (shellPost) await this.shell!.runPost(event, ctx);
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
