/**
 * What `delegate_task` hands back: one entry per task (the original's fields), sorted by task index,
 * and the call's wall time. The statuses: `completed` (an answer), `failed` (the child ended without
 * one), `interrupted` (the parent's signal), `timeout` (`child_timeout_seconds`), `error` (the endpoint
 * or the run failed: that task's entry, never the batch's). Summaries are budgeted: a longer answer is
 * cut to head and tail around a marker that says how much was left out.
 */

import type { DelegateRole } from "./args.js";

export type DelegateTaskStatus = "completed" | "failed" | "interrupted" | "error" | "timeout";
export type DelegateExitReason = "completed" | "max_iterations" | "interrupted" | "timeout" | "error";

export interface DelegateToolTrace {
  tool: string;
  /** UTF-8 bytes of the arguments the child sent and of the result it got. */
  args_bytes: number;
  result_bytes: number;
  status: "ok" | "error";
}

/** One task's outcome, as the parent model reads it (snake_case: it is the tool's JSON). */
export interface DelegateTaskResult {
  task_index: number;
  status: DelegateTaskStatus;
  summary: string | null;
  api_calls: number;
  duration_seconds: number;
  model: string;
  exit_reason: DelegateExitReason;
  tokens: { input: number; output: number };
  tool_trace: DelegateToolTrace[];
  role: DelegateRole;
  /** The child's session (stored with source `subagent` when the parent has a session store). */
  session_id: string;
  error?: string;
  /** Set when the summary was cut to the budget. */
  summary_truncated?: true;
}

export interface DelegateTaskOutput {
  results: DelegateTaskResult[];
  total_duration_seconds: number;
}

export const NO_RESPONSE_ERROR = "Subagent did not produce a response.";

/** True for an answer that says nothing (the original treats "(empty)" as none). */
export function isEmptyAnswer(text: string | null | undefined): boolean {
  if (text === null || text === undefined) return true;
  const trimmed = text.trim();
  return trimmed === "" || trimmed === "(empty)";
}

/** Seconds with two decimals. */
export const seconds = (ms: number): number => Math.round(ms / 10) / 100;

/**
 * `summary` cut to `budget` characters when longer: about three quarters from the head, a quarter from
 * the tail, each cut at a line break when one is near, around a marker naming the sizes and where the
 * whole answer is kept (the child's session, when stored).
 */
export function budgetSummary(summary: string, budget: number, keptIn: string | undefined): { summary: string; truncated: boolean } {
  if (summary.length <= budget) return { summary, truncated: false };
  const room = Math.max(200, budget - 300);
  let headEnd = Math.floor(room * 0.75);
  let tailStart = summary.length - (room - headEnd);
  const headBreak = summary.lastIndexOf("\n", headEnd);
  if (headBreak > headEnd * 0.8) headEnd = headBreak;
  const tailBreak = summary.indexOf("\n", tailStart);
  if (tailBreak !== -1 && tailBreak - tailStart < (summary.length - tailStart) * 0.2) tailStart = tailBreak + 1;
  const head = summary.slice(0, headEnd);
  const tail = summary.slice(tailStart);
  const where = keptIn === undefined ? "" : ` The whole answer is stored in session ${keptIn}.`;
  const marker = `\n\n[... SUMMARY TRUNCATED: showing ${head.length.toLocaleString("en-US")} chars (head) + ${tail.length.toLocaleString("en-US")} chars (tail) of ${summary.length.toLocaleString("en-US")}, to protect your context window.${where} ...]\n\n`;
  return { summary: head + marker + tail, truncated: true };
}

/** The aggregate, sorted by task index. */
export function aggregate(results: DelegateTaskResult[], elapsedMs: number): DelegateTaskOutput {
  return { results: [...results].sort((a, b) => a.task_index - b.task_index), total_duration_seconds: seconds(elapsedMs) };
}
