/** The words of the gate's decisions: what the model reads when a surface denies. */

import type { RuleMatch } from "../types.js";
import type { ApprovalAnswer, DecisionSource } from "./types.js";

/** The matches as one phrase: each rule's description, id and prefix. */
export const describe = (matches: readonly RuleMatch[]): string =>
  matches.map((m) => `${m.description} [${m.rule}${m.prefix ? `: ${m.prefix}` : ""}]`).join("; ");

/** Who answered when a surface does not say. */
export const DEFAULT_BY: Record<string, DecisionSource> = { terminal: "user", gateway: "gateway", non_interactive: "non_interactive" };

/** The model-facing reason of a denial by a surface. */
export function denialReason(by: DecisionSource, answer: ApprovalAnswer, matches: readonly RuleMatch[], surfaceKind: string): string {
  const what = describe(matches);
  switch (by) {
    case "timeout":
      return `Nobody approved this command in time (${what}), so it was not run. Do not retry it unchanged; ask the user or choose another approach.`;
    case "closed":
      return `The approval prompt closed without an answer (${what}), so the command was not run.`;
    case "non_interactive":
      return `This command needs approval (${what}) and this run is non-interactive, so it was not run. Choose a safer approach or ask the user to run it.`;
    case "subagent":
      return `This command needs approval (${what}), and a subagent cannot ask anybody, so it was not run. Do not retry it; say in your summary that it needs the user's approval.`;
    case "framework":
      return `This needs the user's approval (${what}), which the application asks for: ${answer.reason ?? "call the tool again with the same arguments to ask the user"}. It was not run yet.`;
    case "error":
      return `The command needs approval (${what}) but ${answer.reason ?? "approval failed"}, so it was not run.`;
    default: {
      const who = surfaceKind === "gateway" || by === "gateway" ? "The user (via the gateway)" : "The user";
      return answer.reason
        ? `${who} denied this command: ${answer.reason}`
        : `${who} denied this command (${what}). Do not retry it; ask the user or choose another approach.`;
    }
  }
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
