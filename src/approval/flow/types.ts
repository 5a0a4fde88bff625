/**
 * The shapes of the approval flow: what the gate decides, what a surface is asked,
 * what a person (or the gateway) answers. Free of behaviour.
 */

import type { Detection, RuleCategory, RuleMatch } from "../types.js";

/** `manual` asks a person; `smart` lets an auxiliary model review first; `off` approves everything but hardline rules. */
export type ApprovalMode = "manual" | "smart" | "off";

/** What an approval answer covers. `deny` refuses (with an optional reason for the model). */
export type ApprovalScope = "once" | "session" | "always" | "deny";

/** Which step of the gate produced a decision. */
export type DecisionSource =
  /** A hardline rule matched: never approvable. */
  | "hardline"
  /** A user deny rule from `approvals.deny` matched. */
  | "deny_rule"
  /** `approvals.mode: off`. */
  | "mode_off"
  /** The session's yolo toggle is on. */
  | "yolo"
  /** The backend is an isolated sandbox and only hardline rules apply there. */
  | "isolated_backend"
  /** Every match is covered by the persisted allowlist. */
  | "allowlist"
  /** Every match is covered, at least one of them by a session approval. */
  | "session"
  /** A one-time grant for exactly this command (`gate.approveOnce`). */
  | "once"
  /** Detection found nothing. */
  | "safe"
  /** The smart-mode reviewer approved or denied. */
  | "smart"
  /** A person answered at the terminal prompt. */
  | "user"
  /** A person answered through the gateway. */
  | "gateway"
  /** Nobody can be asked (non-interactive run). */
  | "non_interactive"
  /**
   * Not asked here: the person is asked through the application's framework (src/integrations/),
   * on the model's next call of the same tool with the same arguments. A denial for now.
   */
  | "framework"
  /** A delegated subagent's session: nobody is asked (`delegation.subagent_auto_approve` decides). */
  | "subagent"
  /** Nobody answered in time (terminal prompt or gateway expiry). */
  | "timeout"
  /** The terminal closed (EOF) before an answer. */
  | "closed"
  /** The caller's signal aborted the check. */
  | "cancelled"
  /** Detection or the surface failed; the gate fails closed. */
  | "error";

/** Where a command runs, as the caller tells the gate. */
export interface BackendInfo {
  /** `local`, `ssh`, `docker`, `singularity`, `modal`, `daytona`, `vercel_sandbox`, ... */
  name: string;
  /**
   * Whether the sandbox mounts host directories. `docker` counts as isolated only when this is
   * `false`; the other sandboxes count as isolated unless it is `true`.
   */
  hostMounts?: boolean;
}

/** One approval key: a rule, the normalised prefix it matched, and the backend. Never a whole category. */
export interface ApprovalKey {
  rule: string;
  prefix: string;
  backend: string;
}

/** A persisted (scope `always`) approval, as `listApprovals` reports it. */
export interface ApprovalEntry extends ApprovalKey {
  /** Stable short hash of the key; `revokeApproval(id)` takes it. */
  id: string;
  /** When it was added (ISO 8601), if recorded. */
  added?: string;
}

/** What a surface is asked to decide. */
export interface ApprovalRequest {
  /** Random id of this request. */
  id: string;
  command: string;
  sessionId: string;
  backend: string;
  /** The matches that still need an approval (those not covered by the allowlist or the session). */
  matches: RuleMatch[];
  /** The whole detection, for context. */
  detection: Detection;
  /** Epoch milliseconds. */
  createdAt: number;
  /** When the smart reviewer escalated, what it said. */
  smart?: { reason: string };
  /**
   * For an action (`gate.checkAction`): what a person is shown instead of `command`, already
   * redacted and shortened. Surfaces show it when set; `command` stays the exact text.
   */
  display?: string;
}

/** A surface's answer. */
export interface ApprovalAnswer {
  scope: ApprovalScope;
  /** With `deny`: why, in the person's words; it reaches the model. */
  reason?: string;
  /** Who answered; the surface's default when absent (`user` for the terminal, `gateway`, ...). */
  by?: DecisionSource;
}

/** Something that can ask a person (or decide on their behalf). */
export interface ApprovalSurface {
  /** `terminal`, `gateway`, `non_interactive`, ... for logs. */
  readonly kind: string;
  /** Resolves with an answer; must deny (not reject) on timeout, EOF or abort. A rejection is a denial too. */
  ask(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer>;
}

/** The gate's verdict on one command. */
export interface GateDecision {
  allowed: boolean;
  /** One sentence for the model (why it was denied) or the log (why it was allowed). */
  reason: string;
  by: DecisionSource;
  /** Every match of the detection (empty for a safe command). */
  matches: RuleMatch[];
  /** The answer's scope, when someone (a person or the reviewer) answered. */
  scope?: ApprovalScope;
  command: string;
  sessionId: string;
  backend: string;
  /** The approval request's id, when one was made. */
  requestId?: string;
}

/** Options of one `ApprovalGate.check`. */
export interface CheckOptions {
  /** The session key; session approvals and yolo never cross it. */
  sessionId: string;
  /** Where the command runs: a name (`local`) or the name and whether the host is mounted. */
  backend: string | BackendInfo;
  signal?: AbortSignal;
  /** Overrides the gate's surface for this check. */
  surface?: ApprovalSurface;
  /**
   * A person already approved exactly this check elsewhere (a framework's human-in-the-loop,
   * src/integrations/): step 6 (smart review) is skipped, because a person's answer wins over the
   * reviewer's guess; steps 1 to 5 still apply (hardline and deny rules still refuse), and the
   * surface is still asked (it answers for that person).
   */
  personApproved?: boolean;
  /**
   * The approval scope of the tool call this check is made for (a framework adapter's call,
   * src/integrations/): applied by the gate as call-approval.ts describes. Tools pass their call's
   * `ctx.approvalScope` here; ignored when its session is not this check's.
   */
  approvalScope?: CallApprovalScope | undefined;
}

/**
 * What a person approved for one tool call through a framework's own human-in-the-loop, and where
 * the gate's questions during that call go (call-approval.ts). It travels with the call
 * (`CallOptions.approvalScope`, `ToolContext.approvalScope`, the `CheckOptions` of each check the
 * call makes, the calls an `execute_code` program makes), never in an async context.
 */
export interface CallApprovalScope {
  readonly sessionId: string;
  /** Exact texts (a command, an action's text) a person approved, unspent. Spent ones are removed. */
  readonly grants: Set<string>;
  /** Which call the framework approved or ran: for the log only, the scope is what binds it. */
  readonly toolCallId: string | undefined;
  /** Answers a question no grant answers; undefined: the gate's own surface is asked. */
  readonly ask?: ((request: ApprovalRequest) => ApprovalAnswer) | undefined;
}

/** The rule a non-shell action falls under: the fields of a `Rule` (src/approval/rules/) a match carries. */
export interface ActionRule {
  id: string;
  description: string;
  category: RuleCategory;
  hardline: boolean;
}

/**
 * A non-shell action a tool puts to the gate as a whole (`gate.checkAction`), such as the
 * program `execute_code` runs. It is judged as one match of `rule` with `prefix`, through
 * every step a command goes through.
 */
export interface GateAction {
  rule: ActionRule;
  /** The approval key's prefix: what a session or `always` approval covers (`execute_code`). */
  prefix: string;
  /** The exact text (the program): the decision's `command`; one-time grants and gateway replay hash it. */
  text: string;
  /** What people and the log see instead of `text`, redacted and shortened (`actionDisplay` builds one). Default: `text`. */
  display?: string;
  /** Shown under the rule in the prompt. */
  detail?: string;
  /**
   * What the smart reviewer gets: the text with its comments removed, and what it is
   * ("a JavaScript program …"). Without it, smart mode asks a person instead.
   */
  review?: { subject: string; text: string };
}

/** Hooks around each request and decision. Errors are logged and never change a decision. */
export interface ApprovalObserver {
  /** Before a surface is asked. */
  onRequest?(request: ApprovalRequest): void | Promise<void>;
  /** After every decision (of every step). */
  onDecision?(decision: GateDecision): void | Promise<void>;
}

/** The smart-mode reviewer's verdict. */
export interface SmartVerdict {
  verdict: "approve" | "deny" | "escalate";
  reason: string;
}

export interface SmartReviewInput {
  /** The shell command; for an action, its text prepared by the tool (comments removed). */
  command: string;
  matches: readonly RuleMatch[];
  backend: string;
  /** Set for an action: what `command` is ("a JavaScript program …"). Shell comments are then not stripped. */
  subject?: string;
}

/** Reviews a flagged, non-hardline command. Must not reject: failures are `escalate`. */
export interface SmartReviewer {
  review(input: SmartReviewInput, signal: AbortSignal): Promise<SmartVerdict>;
}
