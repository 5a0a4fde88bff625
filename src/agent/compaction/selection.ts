/**
 * What a compaction keeps and what it summarises: the first `keepFirst` messages (the user's opening
 * request and what came right after), the last `keepLast` (the work in progress), and the middle
 * in between, which one summary replaces.
 *
 * Boundaries never separate an assistant message with `tool_calls` from the tool messages that
 * answer it: a tool message whose call is gone, or a call left without its result, is a 400 from
 * every Chat Completions endpoint. The head grows to take the rest of a tool round it cut into; the
 * tail grows back to take the assistant message of a round it starts inside.
 *
 * Messages an earlier compaction made (its summary, its todo snapshot) are never kept as they are:
 * they go into the middle, so the new summary takes in the old one and the todo snapshot is
 * re-injected fresh, once, instead of piling up (#97604).
 */

import type { AgentMessage } from "../types.js";
import { isCompactionMessage } from "./result.js";

/** A middle with fewer real (not compaction-made) messages than this is not worth a summary request. */
export const MIN_SUMMARISED_MESSAGES = 2;

export interface CompactionSplit {
  head: AgentMessage[];
  middle: AgentMessage[];
  tail: AgentMessage[];
}

const isToolMessage = (message: AgentMessage | undefined): boolean => message?.role === "tool";

/**
 * The head, middle and tail of `conversation`, or undefined when there is nothing worth summarising
 * (the kept messages cover it all, or the middle would hold only an earlier compaction's messages).
 */
export function splitForCompaction(conversation: readonly AgentMessage[], keepFirst: number, keepLast: number): CompactionSplit | undefined {
  const length = conversation.length;
  // The head: the first messages up to the first one a compaction made.
  let headEnd = Math.min(keepFirst, length);
  const firstMade = conversation.findIndex(isCompactionMessage);
  if (firstMade !== -1) headEnd = Math.min(headEnd, firstMade);
  // A head that ends inside a tool round takes the rest of the round.
  while (headEnd < length && headEnd > 0 && isToolMessage(conversation[headEnd])) headEnd++;

  let tailStart = Math.max(headEnd, length - keepLast);
  // A tail that starts inside a tool round takes its assistant message.
  while (tailStart > headEnd && isToolMessage(conversation[tailStart])) tailStart--;
  // Nothing an earlier compaction made stays in the tail as it is.
  for (let i = length - 1; i >= tailStart; i--) {
    if (isCompactionMessage(conversation[i]!)) {
      tailStart = i + 1;
      // Past it, a tool round whose assistant message went to the middle goes there too.
      while (tailStart < length && isToolMessage(conversation[tailStart])) tailStart++;
      break;
    }
  }
  if (tailStart <= headEnd) return undefined;
  const middle = conversation.slice(headEnd, tailStart);
  if (middle.filter((message) => !isCompactionMessage(message)).length < MIN_SUMMARISED_MESSAGES) return undefined;
  return { head: conversation.slice(0, headEnd), middle, tail: conversation.slice(tailStart) };
}
