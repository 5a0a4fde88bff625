/**
 * Approvals for calls that came from an MCP client: the approval gate's surface (ApprovalSurface)
 * that puts the question to the client through MCP elicitation (`elicitation/create`).
 *
 * The built-in tools ask the process-wide gate without naming a surface, so the surface cannot be
 * passed down a call. Instead the server runs each call inside an AsyncLocalStorage scope that says
 * which client it came from and how to ask it; the surface reads that scope when the gate asks.
 * - a call from a client that declared `capabilities.elicitation`: the client is asked, with the
 *   command and why it is dangerous; accept with `approve: true` runs it (once, or for the session),
 *   anything else (decline, cancel, `approve: false`, no answer in time, an error) denies;
 * - a call from a client without elicitation: denied, never run silently (approvals.mode: off, the
 *   allowlist and session grants still decide before the gate gets here; the hardline floor before all);
 * - a call from anywhere else in the process (not through the server): the fallback surface.
 */
import { AsyncLocalStorage } from "node:async_hooks";

import type { ApprovalAnswer, ApprovalRequest, ApprovalSurface } from "../../approval/flow/types.js";
import { visible } from "../../approval/surfaces/display.js";
import { NonInteractiveSurface } from "../../approval/surfaces/non-interactive.js";

/** The question as the server sends it: `message` and `requestedSchema` of `elicitation/create`. */
export interface ElicitationQuestion {
  message: string;
  requestedSchema: {
    type: "object";
    properties: Record<string, Record<string, unknown>>;
    required: string[];
  };
}

export interface ElicitationReply {
  action: "accept" | "decline" | "cancel";
  content?: Record<string, unknown> | undefined;
}

/** What the server knows about the client a call came from. */
export interface McpCallScope {
  /** Asks the client, or `undefined` when it did not declare elicitation. */
  elicit: ((question: ElicitationQuestion, signal: AbortSignal, timeoutMs: number) => Promise<ElicitationReply>) | undefined;
  /** How long to wait for the person. */
  timeoutMs: number;
}

export const mcpCallScope = new AsyncLocalStorage<McpCallScope>();

/** Longest command put in the question; the rules matched still name every dangerous part. */
const MAX_COMMAND_CHARS = 2_000;

export function approvalQuestion(request: ApprovalRequest): ElicitationQuestion {
  let command = request.display ?? request.command;
  if (command.length > MAX_COMMAND_CHARS) command = `${command.slice(0, MAX_COMMAND_CHARS)} … (${command.length - MAX_COMMAND_CHARS} more characters)`;
  const lines = [
    `Approve running this ${request.display === undefined ? "command" : "action"} (backend ${visible(request.backend)})?`,
    request.display === undefined ? `$ ${visible(command)}` : visible(command),
    ...request.matches.map((m) => `- ${visible(m.description)} [${visible(m.rule)}${m.prefix ? `: ${visible(m.prefix)}` : ""}]`),
  ];
  if (request.smart) lines.push(`Reviewer: ${visible(request.smart.reason)}`);
  return {
    message: lines.join("\n"),
    requestedSchema: {
      type: "object",
      properties: {
        approve: { type: "boolean", title: "Run it", description: "true runs the command; false denies it" },
        scope: {
          type: "string",
          title: "For",
          enum: ["once", "session"],
          enumNames: ["This command only", "This MCP session"],
          default: "once",
        },
      },
      required: ["approve"],
    },
  };
}

export class McpElicitationSurface implements ApprovalSurface {
  readonly kind = "mcp_elicitation";
  private readonly fallback: ApprovalSurface;

  constructor(fallback?: ApprovalSurface) {
    this.fallback = fallback ?? new NonInteractiveSurface("deny");
  }

  async ask(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    const scope = mcpCallScope.getStore();
    if (scope === undefined) return this.fallback.ask(request, signal);
    if (signal.aborted) return { scope: "deny", by: "cancelled" };
    if (scope.elicit === undefined) {
      return { scope: "deny", by: "error", reason: "the MCP client cannot ask a person (it did not declare the elicitation capability)" };
    }
    let reply: ElicitationReply;
    try {
      reply = await scope.elicit(approvalQuestion(request), signal, scope.timeoutMs);
    } catch (err) {
      if (signal.aborted) return { scope: "deny", by: "cancelled" };
      const text = err instanceof Error ? err.message : String(err);
      if (/timed? ?out/i.test(text)) return { scope: "deny", by: "timeout" };
      return { scope: "deny", by: "error", reason: `asking the MCP client failed (${text})` };
    }
    if (reply.action !== "accept") return { scope: "deny", by: "user", ...(reply.action === "cancel" ? { reason: "the person dismissed the approval request; the command was not run" } : {}) };
    if (reply.content?.approve !== true) return { scope: "deny", by: "user" };
    return { scope: reply.content.scope === "session" ? "session" : "once", by: "user" };
  }
}
