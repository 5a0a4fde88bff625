/**
 * Non-shell actions put to the gate (`gate.checkAction`): a tool states which rule its
 * action falls under and the prefix an approval of it covers, and the gate judges it as
 * a detection with exactly that one match, through the same steps as a shell command.
 */

import { redactSecrets } from "../../redaction/redact.js";
import type { Detection, RuleMatch } from "../types.js";
import type { GateAction } from "./types.js";

/** What the gate judges, besides the detection: a shell command, or a tool's action. */
export interface Subject {
  /** The exact text: the decision's `command`; one-time grants and gateway replay hash it. */
  command: string;
  /** What the log (and, for an action, a person) sees: the command, or the action's redacted display. */
  shown: string;
  /** Set for an action: surfaces show it instead of `command`. */
  display?: string;
  /** What deny rules that set only `prefix` are matched against: the command as written, or the action's prefix. */
  denyText: string;
  /** The reviewer's input; `null` when the reviewer must not be asked (a person is). */
  review: { command: string; subject?: string } | null;
}

export function commandSubject(command: string): Subject {
  return { command, shown: command, denyText: command, review: { command } };
}

export function actionSubject(action: GateAction): Subject {
  const display = action.display ?? action.text;
  const review = action.review ? { command: action.review.text, subject: action.review.subject } : null;
  return { command: action.text, shown: display, display, denyText: action.prefix, review };
}

/** The match an action stands for. */
export function actionMatch(action: GateAction): RuleMatch {
  const match: RuleMatch = {
    rule: action.rule.id,
    description: action.rule.description,
    category: action.rule.category,
    hardline: action.rule.hardline,
    prefix: action.prefix,
  };
  if (action.detail !== undefined) match.detail = action.detail;
  return match;
}

/** The detection the gate judges for an action: its one match, nothing unanalysable. */
export function actionDetection(action: GateAction): Detection {
  const match = actionMatch(action);
  return { command: action.text, analysable: true, unanalysable: [], matches: [match], hardline: match.hardline, dangerous: true };
}

/** Longest body `actionDisplay` shows by default. */
export const MAX_ACTION_DISPLAY_CHARS = 3_000;

/**
 * What a person is shown of an action: a title line, then the body with its secrets
 * redacted, every line indented. A body over `maxChars` keeps its first two thirds and its
 * last third around a marker that says how much is left out (the end of a program matters
 * as much as its start).
 */
export function actionDisplay(title: string, body: string, maxChars = MAX_ACTION_DISPLAY_CHARS): string {
  let shown = redactSecrets(body).replace(/\r\n?/g, "\n").replace(/\n+$/, "");
  if (shown.length > maxChars) {
    const head = Math.ceil((maxChars * 2) / 3);
    const tail = maxChars - head;
    const omitted = shown.length - head - tail;
    shown = `${shown.slice(0, head)}\n… ${omitted} characters not shown …\n${tail > 0 ? shown.slice(-tail) : ""}`;
  }
  return `${title}\n${shown
    .split("\n")
    .map((line) => `| ${line}`)
    .join("\n")}`;
}
