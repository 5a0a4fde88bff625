/**
 * A scripted endpoint for compaction tests: the loop's own requests and its summary requests (the
 * compactor's, recognised by their system prompt) answered from two queues, whatever order the loop
 * asks in. A request past the end of its queue gets an HTTP 400 the test sees.
 */

import { SUMMARY_SYSTEM_PROMPT } from "../../src/agent/compaction/summary-request.js";
import { reply, type RecordedRequest, type ScriptEntry, type Step } from "./scripted-openai.js";

export const isSummaryRequest = (request: RecordedRequest): boolean => request.body?.messages?.[0]?.content === SUMMARY_SYSTEM_PROMPT;

export function routed(agent: ScriptEntry[], summaries: ScriptEntry[]): ScriptEntry[] {
  let a = 0;
  let s = 0;
  const route = (request: RecordedRequest): Step | Promise<Step> => {
    const summary = isSummaryRequest(request);
    const entry = summary ? summaries[s++] : agent[a++];
    if (entry === undefined) return reply.error(400, `no scripted answer for ${summary ? "summary" : "agent"} request #${request.index + 1}`);
    return typeof entry === "function" ? entry(request) : entry;
  };
  return Array.from({ length: agent.length + summaries.length + 4 }, () => route);
}
