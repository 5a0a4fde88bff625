/**
 * The loop's `SessionRecorder` over a `SessionStore`: each message the loop completes is appended
 * (with the tokens of the request that produced it), and a resumed session's stored messages come
 * back as the conversation's history. The two shapes differ only in names and in what the store
 * keeps beside the chat fields (`synthetic`, `content_parts`), so this is field mapping, nothing else.
 */

import type { MessageInput, SessionStore, StoredMessage, TokenUsage } from "./stores/sessions/types.js";
import type { AgentMessage, AgentUsage, SessionRecorder } from "./types.js";


export function toMessageInput(message: AgentMessage): MessageInput {
  const input: MessageInput = { role: message.role, content: message.content, timestamp: message.timestamp };
  if (message.role === "assistant") {
    if (message.tool_calls !== undefined && message.tool_calls.length > 0) input.tool_calls = message.tool_calls;
    if (message.reasoning !== undefined) input.reasoning = message.reasoning;
    if (message.finish_reason !== undefined) input.finish_reason = message.finish_reason;
  } else if (message.role === "tool") {
    input.tool_call_id = message.tool_call_id;
    if (message.tool_name !== undefined) input.tool_name = message.tool_name;
  }
  return input;
}

export function toAgentMessage(stored: StoredMessage): AgentMessage {
  const base = { timestamp: stored.timestamp };
  switch (stored.role) {
    case "system":
      return { ...base, role: "system", content: stored.content ?? "" };
    case "user":
      return { ...base, role: "user", content: stored.content_parts ?? stored.content ?? "" };
    case "assistant":
      return {
        ...base,
        role: "assistant",
        content: stored.content,
        ...(stored.tool_calls !== undefined ? { tool_calls: stored.tool_calls.map((c) => ({ id: c.id, type: "function" as const, function: { name: c.function.name, arguments: c.function.arguments } })) } : {}),
        ...(stored.reasoning !== undefined ? { reasoning: stored.reasoning } : {}),
        ...(stored.finish_reason !== undefined ? { finish_reason: stored.finish_reason } : {}),
      };
    case "tool":
      return { ...base, role: "tool", tool_call_id: stored.tool_call_id ?? "", content: stored.content ?? "", ...(stored.tool_name !== undefined ? { tool_name: stored.tool_name } : {}) };
  }
}

function toTokenUsage(usage: AgentUsage): TokenUsage {
  return { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens, cache_read_tokens: usage.cachedTokens, reasoning_tokens: usage.reasoningTokens };
}

export class StoreSessionRecorder implements SessionRecorder {
  constructor(
    private readonly store: Pick<SessionStore, "appendMessages" | "getMessages">,
    readonly id: string,
  ) {}

  async history(): Promise<AgentMessage[]> {
    return (await this.store.getMessages(this.id)).map(toAgentMessage);
  }

  async append(messages: readonly AgentMessage[], usage?: AgentUsage): Promise<void> {
    await this.store.appendMessages(this.id, messages.map(toMessageInput), usage === undefined ? undefined : { usage: toTokenUsage(usage) });
  }
}
