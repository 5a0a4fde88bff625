/**
 * LangChain's human-in-the-loop for the commands our detection flags: the `interruptOn` entries
 * for `humanInTheLoopMiddleware` (`langchain@1`'s `createAgent`), and the record that lets a call
 * a person approved there run without our gate asking a second time.
 *
 * The middleware runs after each model turn. For every tool call with an `interruptOn` entry it
 * asks the entry's `when(request)`; if that says yes it stops the graph with `interrupt()` and,
 * when the graph is resumed with the person's decisions, runs that same hook again (LangGraph
 * re-runs an interrupted node from its start) and keeps the approved calls, drops the rejected
 * ones (answering them with a ToolMessage, then back to the model). Our `when` is the approval
 * preview every adapter uses (`approvalRequired`), so only a flagged `terminal` command stops
 * the run, never `ls`.
 *
 * The middleware leaves no mark of an approval on the call it lets through. What ties the
 * person's yes to the command that then runs: every time `when` says yes for a call, it records
 * (thread, tool call id, exact command); a call that reaches the tool with a matching record
 * passed through that hook, which in `createAgent` only lets a call whose `when` said yes reach
 * the tools after a person approved it. The record is spent by that one call, holds only for
 * that command text, and lapses after `GRANT_TTL_MS` (the resumed hook re-records it right
 * before the tools run, so a person may take as long as they like). The call then runs with the
 * one-shot, call-bound grant of pre-approval.ts: hardline and deny rules still refuse it.
 */

import { detectAsync } from "../approval/detection/index.js";
import { approvalRequired, gatedCommand, type PreviewScope } from "./approval-preview.js";

/** How long a `when` record stays usable; the resumed hook records again just before the tools run. */
export const GRANT_TTL_MS = 5 * 60_000;
/** Records kept per tool set (a run cut short never spends its own). */
const MAX_RECORDS = 1_000;

/** A tool call as the middleware hands it to `when` and `description` (LangChain's `ToolCall`). */
export interface LangChainToolCall {
  name: string;
  args: Record<string, unknown>;
  id?: string | undefined;
}

/** The part of LangChain's `ToolCallRequest` our `when` reads. */
export interface LangChainInterruptRequest {
  toolCall: LangChainToolCall;
  runtime?: { configurable?: { thread_id?: unknown } | undefined } | undefined;
}

/**
 * One `interruptOn` entry, structurally LangChain's `InterruptOnConfig` (`langchain` is not a
 * dependency of this package: the entries are plain data and functions).
 */
export interface LangChainInterruptOnEntry {
  /** `approve` and `reject` (see docs/integrations/langchain.md: an `edit` would run a command nobody previewed). */
  allowedDecisions: ("approve" | "reject")[];
  /** What the person is shown: the command and what our detection found in it. */
  description: (toolCall: LangChainToolCall) => Promise<string>;
  /** Interrupt only when our gate would ask a person for this call. */
  when: (request: LangChainInterruptRequest) => Promise<boolean>;
}

/** The records of one tool set. */
export class InterruptGrants {
  /** key → time recorded */
  private readonly records = new Map<string, number>();

  constructor(private readonly scope: PreviewScope) {}

  /** `when`: whether the call needs a person; if so, remembers that this exact call was put to one. */
  async needsPerson(request: LangChainInterruptRequest): Promise<boolean> {
    const { toolCall } = request;
    const needed = await approvalRequired(toolCall.name, toolCall.args, this.scope);
    const command = gatedCommand(toolCall.name, toolCall.args);
    if (needed && command !== undefined && typeof toolCall.id === "string" && toolCall.id !== "") {
      const key = grantKey(threadOf(request.runtime?.configurable), toolCall.id, command);
      this.records.delete(key);
      this.records.set(key, Date.now());
      if (this.records.size > MAX_RECORDS) this.records.delete(this.records.keys().next().value!);
    }
    return needed;
  }

  /** Whether this call passed the middleware's interrupt (spends the record). */
  take(toolName: string, args: unknown, toolCallId: string | undefined, thread: unknown): boolean {
    if (toolCallId === undefined || toolCallId === "") return false;
    const command = gatedCommand(toolName, args);
    if (command === undefined) return false;
    const key = grantKey(threadOf({ thread_id: thread }), toolCallId, command);
    const at = this.records.get(key);
    if (at === undefined) return false;
    this.records.delete(key);
    return Date.now() - at <= GRANT_TTL_MS;
  }
}

function threadOf(configurable: { thread_id?: unknown } | undefined): string {
  const thread = configurable?.thread_id;
  return typeof thread === "string" || typeof thread === "number" ? String(thread) : "";
}

function grantKey(thread: string, toolCallId: string, command: string): string {
  // NUL cannot appear in a thread id or call id a provider makes, so the parts cannot run together.
  return `${thread}\0${toolCallId}\0${command}`;
}

/** The text the person reads: the command, and each thing our detection flagged in it. */
export async function describeForPerson(toolCall: LangChainToolCall): Promise<string> {
  const command = gatedCommand(toolCall.name, toolCall.args) ?? JSON.stringify(toolCall.args);
  let reasons: string[] = [];
  try {
    const detection = await detectAsync(command);
    reasons = [...new Set(detection.matches.map((m) => m.description))];
  } catch {
    // The command is still shown; detection failing here is no reason to hide it.
  }
  const lines = [`The agent wants to run this command (${toolCall.name}):`, "", command];
  if (reasons.length > 0) lines.push("", "Flagged because:", ...reasons.map((r) => `- ${r}`));
  return lines.join("\n");
}

export function interruptOnEntry(grants: InterruptGrants): LangChainInterruptOnEntry {
  return {
    allowedDecisions: ["approve", "reject"],
    description: describeForPerson,
    when: (request) => grants.needsPerson(request),
  };
}
