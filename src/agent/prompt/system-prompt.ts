/**
 * The system prompt in three tiers, most stable first, so a provider's prompt cache keeps as long a
 * prefix as possible:
 *
 * 1. stable: identity, tool guidance, guidance for the agent-loop tools offered (changes with the
 *    package version and the tool set);
 * 2. project context files of the working directory (changes when those files change);
 * 3. volatile: the session's memory snapshot (frozen for the session by the store) and today's date
 *    (day precision: a timestamp would change every request).
 *
 * It is built once per run and sent as the same bytes on every request of the run; nothing in it
 * depends on the time of day or on the order tools were registered in.
 */

import type { PromptOptions } from "../types.js";
import { CONTEXT_PREAMBLE, loadContextFiles, type ContextFile } from "./context-files.js";
import { DEFAULT_IDENTITY, TOOL_GUIDANCE, toolSpecificGuidance } from "./guidance.js";

export interface SystemPrompt {
  text: string;
  /** The three tiers as they were joined (for tests and for a UI showing what the model was told). */
  tiers: { stable: string; context: string | null; volatile: string };
  contextFiles: ContextFile[];
}

/** `2026-12-04` (UTC). */
export function dayOf(date: Date): string {
  return date.toISOString().slice(0, 10);
}

export async function buildSystemPrompt(options: PromptOptions & { offeredTools: ReadonlySet<string>; sessionId?: string | undefined }): Promise<SystemPrompt> {
  const stable = [options.identity ?? DEFAULT_IDENTITY, ...(options.offeredTools.size > 0 ? [TOOL_GUIDANCE] : []), ...toolSpecificGuidance(options.offeredTools)].join("\n\n");

  const contextFiles = options.contextFiles === false ? [] : loadContextFiles(options.cwd ?? process.cwd());
  const context = contextFiles.length === 0 ? null : [CONTEXT_PREAMBLE, ...contextFiles.map((f) => f.block)].join("\n\n");

  const volatileParts: string[] = [];
  if (options.memory !== undefined && options.sessionId !== undefined) {
    const snapshot = await options.memory.snapshot(options.sessionId);
    if (typeof snapshot?.text === "string" && snapshot.text !== "") volatileParts.push(snapshot.text);
  }
  volatileParts.push(`Today's date: ${dayOf(options.now ?? new Date())}`);
  const volatile = volatileParts.join("\n\n");

  const text = [stable, context, volatile].filter((part): part is string => part !== null).join("\n\n");
  return { text, tiers: { stable, context, volatile }, contextFiles };
}
