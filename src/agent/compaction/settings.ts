/**
 * Compaction's settings: `RunAgentOptions.compaction` (config.yaml's `compaction:` section as
 * `mibyan chat` passes it) checked, defaults filled in. Bad values are an `AgentConfigError` before
 * anything is sent.
 *
 * Defaults are the Python original's (`compression.threshold` 0.50, `protect_first_n` 3,
 * `protect_last_n` 20); an unknown context window counts as 128,000 tokens.
 */

import { AgentConfigError } from "../loop/errors.js";
import type { CompactionOptions, RunAgentOptions } from "../types.js";

export const DEFAULT_COMPACTION_THRESHOLD = 0.5;
export const DEFAULT_KEEP_FIRST = 3;
export const DEFAULT_KEEP_LAST = 20;
/** The context window assumed when neither `compaction.contextTokens` nor `contextTokens` is given. */
export const DEFAULT_CONTEXT_TOKENS = 128_000;
/** Far beyond any useful setting; a larger count is a mistake. */
const MAX_KEEP = 10_000;

export interface CompactionSettings {
  /** Share of the context window (0-1] the prompt may take before the loop compacts. */
  threshold: number;
  keepFirst: number;
  keepLast: number;
  /** The model of the summary request; undefined: the run's. */
  model: string | undefined;
  contextTokens: number;
}

function wholeNumber(value: unknown, name: string, min: number, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > MAX_KEEP) {
    throw new AgentConfigError("compaction", `compaction.${name} must be a whole number from ${min} to ${MAX_KEEP}, got ${JSON.stringify(value) ?? String(value)}`);
  }
  return value;
}

/** The run's compaction settings, or undefined when compaction is off (`compaction: false` or `enabled: false`). */
export function compactionSettings(options: Pick<RunAgentOptions, "compaction" | "contextTokens">): CompactionSettings | undefined {
  const raw = options.compaction;
  if (raw === false) return undefined;
  if (raw !== undefined && (raw === null || typeof raw !== "object" || Array.isArray(raw))) {
    throw new AgentConfigError("compaction", "compaction must be an object ({ enabled?, threshold?, keepFirst?, keepLast?, model?, contextTokens? }) or false");
  }
  const given: CompactionOptions = raw ?? {};
  if (given.enabled !== undefined && typeof given.enabled !== "boolean") throw new AgentConfigError("compaction", "compaction.enabled must be true or false");
  if (given.enabled === false) return undefined;
  const threshold = given.threshold ?? DEFAULT_COMPACTION_THRESHOLD;
  if (typeof threshold !== "number" || !Number.isFinite(threshold) || threshold <= 0 || threshold > 1) {
    throw new AgentConfigError("compaction", `compaction.threshold is a share of the context window, more than 0 and at most 1 (0.5 = half), got ${JSON.stringify(threshold) ?? String(threshold)}`);
  }
  if (given.model !== undefined && (typeof given.model !== "string" || given.model.trim() === "")) {
    throw new AgentConfigError("compaction", "compaction.model must be a model name the endpoint knows");
  }
  const givenContext = given.contextTokens;
  if (givenContext !== undefined && (typeof givenContext !== "number" || !Number.isInteger(givenContext) || givenContext < 1)) {
    throw new AgentConfigError("compaction", `compaction.contextTokens must be a whole number of tokens, got ${JSON.stringify(givenContext) ?? String(givenContext)}`);
  }
  // The run's contextTokens is tool search's too, which reads it leniently (a bad value means unknown): so here.
  const shared = options.contextTokens;
  const context = givenContext ?? (typeof shared === "number" && Number.isFinite(shared) && shared >= 1 ? Math.floor(shared) : DEFAULT_CONTEXT_TOKENS);
  return {
    threshold,
    keepFirst: wholeNumber(given.keepFirst, "keepFirst", 0, DEFAULT_KEEP_FIRST),
    keepLast: wholeNumber(given.keepLast, "keepLast", 1, DEFAULT_KEEP_LAST),
    model: given.model,
    contextTokens: context,
  };
}
