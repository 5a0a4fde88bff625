/**
 * Compaction in the agent loop: before each request, `beforeRequest` checks the prompt size
 * (trigger.ts) and, past the threshold, replaces the middle of the conversation with a summary
 * (selection.ts, summary-request.ts, result.ts). Everything tied to the session follows it:
 *
 * - the recorder's `continueCompacted` ends the session (end_reason `compaction`) and starts its
 *   continuation holding the compacted conversation; tools see the continuation's id from then on
 *   (the task id, and so the terminal's working directory and shell, stays the run's);
 * - handlers and the memory snapshot source with `continueSession` carry their per-session state
 *   over (the todo list, the frozen memory snapshot, so the system prompt stays the same bytes);
 * - the process-wide process registry records the continuation, so background processes the old
 *   session started stay readable and manageable.
 *
 * A failed summary request (or a recorder that cannot fork) loses nothing: the conversation is sent
 * as it was, a `compaction_failed` event says why, and the run does not try again. A compaction that
 * leaves the prompt over the threshold (the kept messages alone are too big) is the run's last:
 * another would buy little for a request per turn.
 */

import { ChatEndpoint, RequestAborted, type EndpointOptions } from "../loop/endpoint.js";
import { addUsage } from "../loop/usage.js";
import type { AgentEvent, AgentLoopHandlers, AgentMessage, AgentUsage, MemorySnapshotSource, SessionRecorder } from "../types.js";
import { compactedConversation } from "./result.js";
import { splitForCompaction } from "./selection.js";
import type { CompactionSettings } from "./settings.js";
import { requestSummary } from "./summary-request.js";
import { PromptSize } from "./token-estimate.js";
import { shouldCompact } from "./trigger.js";

export interface CompactorContext {
  settings: CompactionSettings;
  /** The run's endpoint options; the summary request uses them with `settings.model` when set. */
  endpoint: EndpointOptions;
  /** The system prompt and tool definitions' estimate, the same on every request of the run. */
  fixedTokens: number;
  session: SessionRecorder | undefined;
  handlers: AgentLoopHandlers;
  memory: MemorySnapshotSource | undefined;
  signal: AbortSignal | undefined;
  emit: (event: AgentEvent) => void;
  /** The run's usage: the summary request's tokens are added to it. */
  usage: AgentUsage;
}

const messageOf = (thrown: unknown): string => (thrown instanceof Error ? thrown.message : String(thrown));

export class Compactor {
  readonly size: PromptSize;
  private stopped = false;

  constructor(private readonly ctx: CompactorContext) {
    this.size = new PromptSize(ctx.fixedTokens);
  }

  /** A response came back for a request that carried the first `sentMessages` messages of the conversation. */
  noteResponse(promptTokens: number, sentMessages: number): void {
    this.size.noteReported(promptTokens, sentMessages);
  }

  /**
   * Compacts `conversation` in place when the next request would pass the threshold. Returns the
   * session id tools use from now on (the continuation's after a compaction with a forking recorder).
   */
  async beforeRequest(conversation: AgentMessage[], sessionId: string | undefined, turn: number): Promise<string | undefined> {
    const { settings, emit } = this.ctx;
    if (this.stopped || this.ctx.signal?.aborted) return sessionId;
    const tokensBefore = this.size.estimate(conversation);
    if (!shouldCompact(tokensBefore, settings)) return sessionId;
    const split = splitForCompaction(conversation, settings.keepFirst, settings.keepLast);
    if (split === undefined) return sessionId;

    let summary: string;
    try {
      const endpoint = settings.model === undefined ? await ChatEndpoint.open(this.ctx.endpoint) : await ChatEndpoint.open({ ...this.ctx.endpoint, model: settings.model });
      const outcome = await requestSummary(endpoint, settings.model ?? this.ctx.endpoint.model, split.middle, settings.contextTokens, { signal: this.ctx.signal, turn, onEvent: emit });
      addUsage(this.ctx.usage, outcome.usage);
      summary = outcome.summary;
    } catch (thrown) {
      // Cancelled: the loop sees the signal and ends the run; nothing failed.
      if (thrown instanceof RequestAborted || this.ctx.signal?.aborted) return sessionId;
      return this.fail(`the summary request failed: ${messageOf(thrown)}`, tokensBefore, sessionId);
    }

    // Snapshots are taken under the old id, before anything moves.
    const snapshots: string[] = [];
    for (const handler of Object.values(this.ctx.handlers)) {
      try {
        const text = await handler?.snapshotForCompaction?.(sessionId ?? "");
        if (typeof text === "string" && text.trim() !== "") snapshots.push(text);
      } catch {
        // The list stays in its store; the model can still read it with the tool.
      }
    }
    const compacted = compactedConversation(split, summary, snapshots, Date.now());

    let nextId = sessionId;
    const warnings: string[] = [];
    const session = this.ctx.session;
    if (session?.continueCompacted !== undefined) {
      let returned: unknown;
      try {
        returned = await session.continueCompacted(compacted);
      } catch (thrown) {
        return this.fail(`the session could not be continued: ${messageOf(thrown)}`, tokensBefore, sessionId);
      }
      // A recorder of an embedding application may answer anything; tools keep the old id rather than a bad one.
      if (typeof returned === "string" && returned !== "") nextId = returned;
      else warnings.push(`the recorder's continueCompacted returned no session id (${typeof returned}); tools keep ${sessionId ?? "no session"}`);
      if (sessionId !== undefined && nextId !== undefined && nextId !== sessionId) await this.carryOver(sessionId, nextId, warnings);
    }

    conversation.splice(0, conversation.length, ...compacted);
    this.size.forgetReported();
    const tokensAfter = this.size.estimateFresh(conversation);
    if (shouldCompact(tokensAfter, settings)) this.stopped = true;
    emit({
      type: "compaction",
      tokensBefore,
      tokensAfter,
      removedMessages: split.middle.length,
      keptMessages: split.head.length + split.tail.length,
      snapshotsInjected: snapshots.length,
      previousSessionId: sessionId,
      sessionId: nextId,
      ...(warnings.length > 0 ? { warnings } : {}),
    });
    return nextId;
  }

  private fail(reason: string, tokens: number, sessionId: string | undefined): string | undefined {
    this.stopped = true;
    this.ctx.emit({ type: "compaction_failed", reason, tokens });
    return sessionId;
  }

  /** Per-session state follows the conversation into the continuation. Failures are warnings: the compaction stands. */
  private async carryOver(from: string, to: string, warnings: string[]): Promise<void> {
    const parties = [...Object.values(this.ctx.handlers), this.ctx.memory];
    for (const party of parties) {
      try {
        await party?.continueSession?.(from, to);
      } catch (thrown) {
        warnings.push(`session state not carried over: ${messageOf(thrown)}`);
      }
    }
    try {
      const { getProcessRegistry } = await import("../../process/default-registry.js");
      await getProcessRegistry().recordContinuation(from, to);
    } catch (thrown) {
      warnings.push(`background processes of ${from} not handed to ${to}: ${messageOf(thrown)}`);
    }
    // What the person approved "for this session" (and a per-session approval surface) is the conversation's.
    try {
      const { getApprovalGate } = await import("../../approval/default-gate.js");
      getApprovalGate().continueSession(from, to);
    } catch (thrown) {
      warnings.push(`session approvals of ${from} not handed to ${to}: ${messageOf(thrown)}`);
    }
  }
}
