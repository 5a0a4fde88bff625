/** Token counts as endpoints report them (`usage` of a completion or of a stream's last chunk), summed. */

import type { AgentUsage } from "../types.js";

export function emptyUsage(): AgentUsage {
  return { requests: 0, inputTokens: 0, outputTokens: 0, totalTokens: 0, cachedTokens: 0, reasoningTokens: 0 };
}

const count = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0);

/** One response's usage (`prompt_tokens`, `completion_tokens`, details); missing fields count 0. */
export function usageOf(raw: unknown): AgentUsage {
  const usage = (raw ?? {}) as Record<string, unknown>;
  const input = count(usage.prompt_tokens);
  const output = count(usage.completion_tokens);
  const promptDetails = (usage.prompt_tokens_details ?? {}) as Record<string, unknown>;
  const completionDetails = (usage.completion_tokens_details ?? {}) as Record<string, unknown>;
  return {
    requests: 1,
    inputTokens: input,
    outputTokens: output,
    totalTokens: count(usage.total_tokens) || input + output,
    cachedTokens: count(promptDetails.cached_tokens),
    reasoningTokens: count(completionDetails.reasoning_tokens),
  };
}

export function addUsage(total: AgentUsage, more: AgentUsage): void {
  total.requests += more.requests;
  total.inputTokens += more.inputTokens;
  total.outputTokens += more.outputTokens;
  total.totalTokens += more.totalTokens;
  total.cachedTokens += more.cachedTokens;
  total.reasoningTokens += more.reasoningTokens;
}
