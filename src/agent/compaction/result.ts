/**
 * What a compaction leaves: the head, one user message with the summary (saying, in text the model
 * reads, that it summarises earlier turns and is not a new request), the todo snapshot when the list
 * has active items (right after the summary, once), then the tail.
 *
 * The made-up messages carry `synthetic` (`compaction_summary`, `compaction_snapshot`): a session
 * store keeps them for resuming but never indexes them for search, and the next compaction knows
 * them (selection.ts) instead of keeping a second copy.
 */

import type { AgentMessage, AgentUserMessage } from "../types.js";

export const SUMMARY_SYNTHETIC = "compaction_summary";
export const SNAPSHOT_SYNTHETIC = "compaction_snapshot";

export function isCompactionMessage(message: AgentMessage): boolean {
  return message.synthetic === SUMMARY_SYNTHETIC || message.synthetic === SNAPSHOT_SYNTHETIC;
}

/** The first line of the summary message: what it is, for the model. */
export function summaryPreamble(removedMessages: number): string {
  return (
    `[Context compaction: summary of earlier turns] The ${removedMessages} messages between the start of this conversation and the recent turns below ` +
    "were removed to save context and replaced by this summary. It is not a new request from the user; the recent turns follow it verbatim, and the work continues from them."
  );
}

export function summaryMessage(summary: string, removedMessages: number, now: number): AgentUserMessage {
  return { role: "user", content: `${summaryPreamble(removedMessages)}\n\n${summary.trim()}`, synthetic: SUMMARY_SYNTHETIC, timestamp: now };
}

/** The compacted conversation. `snapshots` are the blocks handlers gave (the todo list's active items), each one message. */
export function compactedConversation(
  split: { head: readonly AgentMessage[]; middle: readonly AgentMessage[]; tail: readonly AgentMessage[] },
  summary: string,
  snapshots: readonly string[],
  now: number,
): AgentMessage[] {
  const removed = split.middle.length;
  const made: AgentMessage[] = [summaryMessage(summary, removed, now)];
  for (const text of snapshots) made.push({ role: "user", content: text, synthetic: SNAPSHOT_SYNTHETIC, timestamp: now });
  return [...split.head, ...made, ...split.tail];
}
