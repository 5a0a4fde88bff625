/**
 * Step 6 of the gate (gate.ts): in `smart` mode, a reviewer model judges a flagged command before
 * a person is asked. It approves (this command only), denies (and repeated denials trip the
 * session's breaker, after which every flagged command goes to a person), or escalates with a note
 * the person sees. Never for commands that could not be fully analysed (the reviewer cannot see
 * what would run either), never for an action that cannot be shown to it.
 */

import type { Logger } from "../../registry/types.js";
import type { RuleMatch } from "../types.js";
import type { Subject } from "./action.js";
import { errorText } from "./reasons.js";
import type { SessionState, SessionStates } from "./sessions.js";
import type { GateDecision, SmartReviewer } from "./types.js";

export type SmartReviewOutcome =
  /** The gate's decision (the reviewer decided, or the check was cancelled while it reviewed). */
  | { verdict: Pick<GateDecision, "allowed" | "by" | "reason" | "scope"> }
  /** A person decides; `note` says why the reviewer did not (shown with the question). */
  | { note: string | undefined };

export interface SmartReviewCall {
  reviewer: SmartReviewer | undefined;
  subject: Subject;
  uncovered: readonly RuleMatch[];
  backend: string;
  state: SessionState;
  sessionId: string;
  signal: AbortSignal;
}

export interface SmartReviewContext {
  sessions: SessionStates;
  breakerThreshold: number;
  logger: Logger;
  /** Smart mode without a reviewer model is reported once per gate. */
  noReviewerWarning: { given: boolean };
}

export async function smartReviewStep(call: SmartReviewCall, context: SmartReviewContext): Promise<SmartReviewOutcome> {
  const { reviewer, subject, uncovered, state, signal } = call;
  if (!reviewer) {
    if (!context.noReviewerWarning.given) {
      context.noReviewerWarning.given = true;
      context.logger.warn("approvals: mode is smart but no reviewer model is configured (approvals.smart.model); asking instead");
    }
    return { note: undefined };
  }
  if (state.breakerTripped) return { note: "smart review is paused for this session after repeated denials" };
  if (uncovered.some((m) => m.category === "unanalysable")) return { note: "the command could not be fully analysed, so it was not sent to the reviewer" };
  if (subject.review === null) return { note: "this action cannot be shown to the reviewer, so a person decides" };

  let verdict;
  try {
    verdict = await reviewer.review({ ...subject.review, matches: [...uncovered], backend: call.backend }, signal);
  } catch (err) {
    verdict = { verdict: "escalate" as const, reason: `the reviewer failed: ${errorText(err)}` };
  }
  if (signal.aborted) return { verdict: { allowed: false, by: "cancelled", reason: "The command was cancelled while it was reviewed." } };
  if (verdict.verdict === "approve") {
    state.consecutiveSmartDenials = 0;
    return { verdict: { allowed: true, by: "smart", reason: `The reviewer approved this command: ${verdict.reason}`, scope: "once" } };
  }
  if (verdict.verdict === "deny") {
    if (context.sessions.smartDenied(state, context.breakerThreshold)) {
      context.logger.warn(
        `approvals: ${state.consecutiveSmartDenials} reviewer denials in a row in session ${call.sessionId}; smart review paused for it, every flagged command now goes to a person`,
      );
    }
    return {
      verdict: {
        allowed: false,
        by: "smart",
        reason: `An automatic reviewer denied this command: ${verdict.reason}. Do not retry it; choose a safer approach or ask the user.`,
        scope: "deny",
      },
    };
  }
  return { note: verdict.reason };
}
