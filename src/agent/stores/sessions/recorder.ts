/**
 * A session of a `SessionStore` seen as the agent loop's `SessionRecorder` (`runAgent({ session })`):
 * its id, its stored history for a resumed session, and `append` for each completed message with the
 * usage of the request that produced it. Typed structurally, so the store does not depend on the loop.
 */

import { SessionStoreError } from "./errors.js";
import type { MessageInput, NewSession, SessionStore, StoredMessage } from "./types.js";

/** The loop's token counts (`AgentUsage`), as far as the store keeps them. */
export interface RecorderUsage {
  inputTokens?: number;
  outputTokens?: number;
  cachedTokens?: number;
  reasoningTokens?: number;
}

export interface RecordedToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/**
 * A stored message in the chat shape the loop sends (internal columns left out), one variant per role.
 * `synthetic` marks what the loop made up (a compaction's summary), so a resumed conversation knows it.
 */
export type RecordedMessage = (
  | { role: "system"; content: string; timestamp: number }
  | { role: "user"; content: string | unknown[]; timestamp: number }
  | { role: "assistant"; content: string | null; tool_calls?: RecordedToolCall[]; reasoning?: string; finish_reason?: string; timestamp: number }
  | { role: "tool"; content: string; tool_call_id: string; tool_name?: string; timestamp: number }
) & { synthetic?: string };

export interface StoreSessionRecorder {
  /** The session recorded into: the continuation's after `continueCompacted`. */
  readonly id: string;
  history(): Promise<RecordedMessage[]>;
  append(messages: readonly MessageInput[], usage?: RecorderUsage): Promise<void>;
  /**
   * Ends the session with `end_reason: "compaction"` and starts its continuation (`forkForCompaction`:
   * parent = it, same source, model and title) holding `conversation`; returns the continuation's id,
   * which the recorder records into from then on.
   */
  continueCompacted(conversation: readonly MessageInput[]): Promise<string>;
}

function toRecorded(message: StoredMessage): RecordedMessage {
  const recorded = toRecordedShape(message);
  if (message.synthetic !== undefined) recorded.synthetic = message.synthetic;
  return recorded;
}

function toRecordedShape(message: StoredMessage): RecordedMessage {
  const timestamp = message.timestamp;
  switch (message.role) {
    case "system":
      return { role: "system", content: message.content ?? "", timestamp };
    case "user":
      return { role: "user", content: message.content_parts ?? message.content ?? "", timestamp };
    case "tool": {
      const out: RecordedMessage = { role: "tool", content: message.content ?? "", tool_call_id: message.tool_call_id ?? "", timestamp };
      if (message.tool_name !== undefined) out.tool_name = message.tool_name;
      return out;
    }
    default: {
      const out: Extract<RecordedMessage, { role: "assistant" }> = { role: "assistant", content: message.content, timestamp };
      if (message.tool_calls !== undefined) {
        out.tool_calls = message.tool_calls.map((call) => ({ id: String(call.id ?? ""), type: "function", function: { name: String(call.function?.name ?? ""), arguments: String(call.function?.arguments ?? "") } }));
      }
      if (message.reasoning !== undefined) out.reasoning = message.reasoning;
      if (message.finish_reason !== undefined) out.finish_reason = message.finish_reason;
      return out;
    }
  }
}

/**
 * The recorder of session `init.id` when the store has it (a resumed session: `history()` returns its
 * messages), else of a new session created with `init`. `resume: true` refuses an unknown id instead
 * of creating it (`mibyan chat --resume ID` with a typo must not start an empty session).
 */
export async function sessionRecorder(store: SessionStore, init: NewSession & { resume?: boolean } = {}): Promise<StoreSessionRecorder> {
  const { resume, ...fields } = init;
  let record = fields.id === undefined ? undefined : await store.getSession(fields.id);
  if (record === undefined) {
    if (resume === true) throw new SessionStoreError("not_found", `no session ${JSON.stringify(fields.id)} to resume`);
    record = await store.createSession(fields);
  }
  let id = record.id;
  return {
    get id() {
      return id;
    },
    async history() {
      return (await store.getMessages(id)).map(toRecorded);
    },
    async append(messages, usage) {
      await store.appendMessages(id, messages, {
        usage:
          usage === undefined
            ? undefined
            : { input_tokens: usage.inputTokens ?? 0, output_tokens: usage.outputTokens ?? 0, cache_read_tokens: usage.cachedTokens ?? 0, reasoning_tokens: usage.reasoningTokens ?? 0 },
      });
    },
    async continueCompacted(conversation) {
      id = (await store.forkForCompaction(id, { messages: conversation })).id;
      return id;
    },
  };
}
