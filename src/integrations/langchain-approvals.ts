/**
 * LangChain's human-in-the-loop for what our gate would put to a person: the `interruptOn`
 * entries for `humanInTheLoopMiddleware` (`langchain@1`'s `createAgent`), and the record that
 * lets a call a person approved there run without our gate asking a second time.
 *
 * The middleware runs after each model turn. For every tool call with an `interruptOn` entry it
 * asks the entry's `when(request)`; if that says yes it stops the graph with `interrupt()` and,
 * when the graph is resumed with the person's decisions, runs that same hook again (LangGraph
 * re-runs an interrupted node from its start) and keeps the approved calls, drops the rejected
 * ones (answering them with a ToolMessage, then back to the model). Our `when` asks the tool
 * set's approval bridge (approval-bridge.ts), as the other adapters' `needsApproval` does: a
 * flagged `terminal` command or an `execute_code` program (foreseen from the arguments), or what
 * the gate asked about during an earlier call with the same arguments (learned: a write to a
 * `.env` file, a plugin's `approve` directive). Nothing else stops the run, never `ls`.
 *
 * The middleware leaves no mark of an approval on the call it lets through. What ties the
 * person's yes to the call that then runs: every time `when` says yes for a call, it records
 * (thread, tool call id, tool, exact arguments); a call that reaches the tool with a matching
 * record passed through that hook, which in `createAgent` only lets a call whose `when` said yes
 * reach the tools after a person approved it. The record is spent by that one call and lapses
 * after `GRANT_TTL_MS` (the resumed hook renews it right before the tools run, so a person may
 * take as long as they like). The call then runs in the bridge's scope with the one-shot grants
 * of exactly the texts that were put to the person (src/approval/flow/call-approval.ts): hardline
 * and deny rules still refuse them.
 */

import { detectAsync } from "../approval/detection/index.js";
import type { CallApprovalScope } from "../approval/flow/types.js";
import type { ApprovalBridge } from "./approval-bridge.js";
import { gatedCommand } from "./approval-preview.js";

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

/** The part of LangChain's runtime our entries read: the thread a call belongs to. */
export interface LangChainRuntime {
  configurable?: { thread_id?: unknown } | undefined;
}

/** The part of LangChain's `ToolCallRequest` our `when` reads. */
export interface LangChainInterruptRequest {
  toolCall: LangChainToolCall;
  runtime?: LangChainRuntime | undefined;
}

/**
 * One `interruptOn` entry, structurally LangChain's `InterruptOnConfig` (`langchain` is not a
 * dependency of this package: the entries are plain data and functions).
 */
export interface LangChainInterruptOnEntry {
  /** `approve` and `reject` (see docs/integrations/langchain.md: an `edit` would run something nobody previewed). */
  allowedDecisions: ("approve" | "reject")[];
  /** What the person is shown: what the call would do that needs them, and why. */
  description: (toolCall: LangChainToolCall, state?: unknown, runtime?: LangChainRuntime) => Promise<string>;
  /** Interrupt only when our gate would ask a person about this call. */
  when: (request: LangChainInterruptRequest) => Promise<boolean>;
}

/** The interrupt records of one tool set, over its approval bridge. */
export class InterruptGrants {
  /** record key → time recorded */
  private readonly records = new Map<string, number>();

  constructor(private readonly bridge: ApprovalBridge) {}

  /** `when`: whether the call needs a person; if so, remembers that this exact call was put to one. */
  async needsPerson(request: LangChainInterruptRequest): Promise<boolean> {
    const { name, args, id } = request.toolCall;
    if (!this.bridge.mayAsk(name)) return false;
    const thread = threadOf(request.runtime);
    const key = id === undefined || id === "" ? undefined : recordKey(thread, id, name, args);
    // The resumed hook asks again: it must see what the person was shown. Anything else is a new request
    // (a provider may reuse call ids across turns), judged on its own arguments.
    const resumed = key !== undefined && this.live(key);
    const texts = await this.bridge.requestFor(name, args, bridgeId(thread, id), !resumed);
    if (texts.length > 0 && key !== undefined) {
      this.records.delete(key);
      this.records.set(key, Date.now());
      if (this.records.size > MAX_RECORDS) this.records.delete(this.records.keys().next().value!);
    }
    return texts.length > 0;
  }

  /** The texts a person is asked to approve for this call (what `when` put to them). */
  textsFor(toolCall: LangChainToolCall, runtime: LangChainRuntime | undefined): Promise<string[]> {
    return this.bridge.requestFor(toolCall.name, toolCall.args, bridgeId(threadOf(runtime), toolCall.id), false);
  }

  /**
   * The approval scope a call runs in: with the grants of what the person approved if it passed
   * the interrupt (the record is spent), and always the route of the gate's questions back to
   * LangChain (learned, asked on the next call). Undefined for a call that cannot reach the gate.
   */
  scopeFor(name: string, args: unknown, toolCallId: string | undefined, thread: unknown): CallApprovalScope | undefined {
    const threadId = threadOf({ configurable: { thread_id: thread } });
    let approved = false;
    if (toolCallId !== undefined && toolCallId !== "") {
      const key = recordKey(threadId, toolCallId, name, args);
      approved = this.live(key);
      this.records.delete(key);
    }
    return this.bridge.scopeFor(name, args, bridgeId(threadId, toolCallId), approved);
  }

  private live(key: string): boolean {
    const at = this.records.get(key);
    return at !== undefined && Date.now() - at <= GRANT_TTL_MS;
  }
}

function threadOf(runtime: LangChainRuntime | undefined): string {
  const thread = runtime?.configurable?.thread_id;
  return typeof thread === "string" || typeof thread === "number" ? String(thread) : "";
}

/** The call id as the bridge keys its requests: per thread, so two threads' `call_0` never share one. */
function bridgeId(thread: string, toolCallId: string | undefined): string | undefined {
  if (toolCallId === undefined || toolCallId === "") return undefined;
  return thread === "" ? toolCallId : `${thread}\0${toolCallId}`;
}

function recordKey(thread: string, toolCallId: string, name: string, args: unknown): string {
  let json: string;
  try {
    json = JSON.stringify(args) ?? "";
  } catch {
    json = "";
  }
  // NUL cannot appear in a thread id or call id a provider makes, and JSON escapes it: the parts cannot run together.
  return `${thread}\0${toolCallId}\0${name}\0${json}`;
}

/** The text the person reads: what the call would do that needs them, and for a command, what detection flagged. */
async function describeForPerson(grants: InterruptGrants, toolCall: LangChainToolCall, runtime: LangChainRuntime | undefined): Promise<string> {
  let texts = await grants.textsFor(toolCall, runtime);
  if (texts.length === 0) texts = [gatedCommand(toolCall.name, toolCall.args) ?? JSON.stringify(toolCall.args)];
  const lines = [`The agent's ${toolCall.name} call needs your approval:`];
  for (const text of texts) lines.push("", text);
  const command = gatedCommand(toolCall.name, toolCall.args);
  if (command !== undefined) {
    try {
      const reasons = [...new Set((await detectAsync(command)).matches.map((m) => m.description))];
      if (reasons.length > 0) lines.push("", "Flagged because:", ...reasons.map((r) => `- ${r}`));
    } catch {
      // The command is still shown; detection failing here is no reason to hide it.
    }
  }
  return lines.join("\n");
}

export function interruptOnEntry(grants: InterruptGrants): LangChainInterruptOnEntry {
  return {
    allowedDecisions: ["approve", "reject"],
    description: (toolCall, _state, runtime) => describeForPerson(grants, toolCall, runtime),
    when: (request) => grants.needsPerson(request),
  };
}
