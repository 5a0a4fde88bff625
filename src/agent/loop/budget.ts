/**
 * The iteration budget (the Python original's `max_iterations`, `agent.max_turns`): requests that
 * may end in tool calls. When they are used up, the loop appends `BUDGET_EXHAUSTED_MESSAGE` and
 * makes one more request with tools refused (`tool_choice: "none"`); an empty answer to it becomes
 * `BUDGET_FALLBACK_TEXT`.
 *
 * Unlike the original, `execute_code` turns are not refunded: a model that only ever ran code
 * would never reach the summary. A run that needs more turns sets `maxTurns`.
 */

import { AgentConfigError } from "./errors.js";

export const DEFAULT_MAX_TURNS = 90;
/** Far beyond any useful run; a larger number is a mistake (a timestamp, a byte count). */
export const MAX_MAX_TURNS = 10_000;

export const BUDGET_EXHAUSTED_MESSAGE =
  "You've reached the maximum number of tool-calling iterations allowed. Please provide a final response summarizing what you've found and accomplished so far, without calling any more tools.";

export const BUDGET_FALLBACK_TEXT = "I reached the iteration limit and couldn't generate a summary.";

export function checkMaxTurns(value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_MAX_TURNS) {
    throw new AgentConfigError("maxTurns", `maxTurns must be a whole number from 1 to ${MAX_MAX_TURNS}, got ${JSON.stringify(value) ?? String(value)}`);
  }
  return value;
}
