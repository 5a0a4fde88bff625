/**
 * How big the next request's prompt is, in tokens, without a tokenizer: characters / 4 of what is
 * sent (the system prompt, the tool definitions as JSON, each message as its API JSON). A rough
 * rule that holds for English and code with the common BPE tokenizers; it over-counts neither badly
 * enough to compact early nor under-counts enough to overflow at the default 50 % threshold.
 *
 * Once the endpoint has answered, its own count is better: the `prompt_tokens` it reported for the
 * last request, plus the estimate of the messages added since (the answer, the tool results).
 */

import { toApiMessage } from "../loop/messages.js";
import type { AgentMessage } from "../types.js";

export const CHARS_PER_TOKEN = 4;

export function tokensOfChars(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/** The estimate of messages as the request carries them (internal fields left out, as messages.ts does). */
export function estimateMessageTokens(messages: readonly AgentMessage[]): number {
  let chars = 0;
  for (const message of messages) chars += JSON.stringify(toApiMessage(message)).length;
  return tokensOfChars(chars);
}

/** The part of every request that compaction does not change: the system prompt and the tool definitions. */
export function estimateFixedTokens(systemPrompt: string | null, tools: readonly unknown[]): number {
  return tokensOfChars((systemPrompt?.length ?? 0) + (tools.length === 0 ? 0 : JSON.stringify(tools).length));
}

/**
 * The prompt size before each request: the endpoint's last reported `prompt_tokens` plus the estimate
 * of what was added since, or the whole estimate before any report (and after a compaction, which
 * makes the last report stale).
 */
export class PromptSize {
  private reported: { tokens: number; messages: number } | undefined;

  constructor(private readonly fixedTokens: number) {}

  /** A response came back: the request carried `prompt_tokens` = `tokens` for the first `messages` messages. 0 (not reported) is ignored. */
  noteReported(tokens: number, messages: number): void {
    this.reported = tokens > 0 ? { tokens, messages } : undefined;
  }

  /** The conversation changed under the last report (compaction). */
  forgetReported(): void {
    this.reported = undefined;
  }

  estimate(conversation: readonly AgentMessage[]): number {
    const reported = this.reported;
    if (reported !== undefined && reported.messages <= conversation.length) {
      return reported.tokens + estimateMessageTokens(conversation.slice(reported.messages));
    }
    return this.fixedTokens + estimateMessageTokens(conversation);
  }

  /** The estimate without the endpoint's report (what the event reports after a compaction). */
  estimateFresh(conversation: readonly AgentMessage[]): number {
    return this.fixedTokens + estimateMessageTokens(conversation);
  }
}
