/**
 * When the loop compacts: before a request whose estimated prompt (token-estimate.ts) is larger than
 * `threshold` × the context window. Nothing else: not on a timer, not by message count.
 */

import type { CompactionSettings } from "./settings.js";

/** The prompt size past which the loop compacts. */
export function thresholdTokens(settings: CompactionSettings): number {
  return Math.floor(settings.threshold * settings.contextTokens);
}

export function shouldCompact(promptTokens: number, settings: CompactionSettings): boolean {
  return promptTokens > thresholdTokens(settings);
}
