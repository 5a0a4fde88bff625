/**
 * The approval gate: every command the terminal tool (or any tool or plugin that asks)
 * wants to run goes through `check`, which decides in this order and stops at the first
 * step that decides:
 *
 *   1. hardline       a hardline rule matched: blocked, in every mode, on every backend
 *   2. deny rules     a user deny rule (`approvals.deny`) matched: denied with its reason
 *   3. mode / yolo    `off` mode, the session's yolo toggle, or an isolated sandbox: allowed
 *   4. allowlist      every match covered by the allowlist, the session or a one-time grant
 *   5. detection      no match at all: allowed (safe)
 *   6. smart review   `smart` mode: the reviewer approves (this command only), denies, or escalates
 *   7. ask            a surface (terminal, gateway, non-interactive) answers once/session/always/deny
 *
 * A tool's non-shell action (the program `execute_code` runs) goes through `checkAction`
 * instead: one match of the tool's rule with its prefix, judged by the same steps.
 *
 * Approval keys are (rule, normalised prefix, backend). The gate fails closed: a detection
 * error, a surface error, an abort or an unclear answer denies.
 */

import { randomUUID } from "node:crypto";
import path from "node:path";

import { getConfig } from "../../config/load-config.js";
import { mibyanHome, expandTilde } from "../../config/home.js";
import type { Logger } from "../../registry/types.js";
import { createStderrLogger } from "../../util/logger.js";
import type { Detection, RuleMatch } from "../types.js";
import { OpenAISmartReviewer } from "../smart/reviewer.js";
import { GatewaySurface, type GatewaySurfaceOptions } from "../surfaces/gateway.js";
import { NonInteractiveSurface } from "../surfaces/non-interactive.js";
import { FilePendingStore, pendingStoreDir } from "../surfaces/pending-store.js";
import { TerminalSurface, hasInteractiveTerminal } from "../surfaces/terminal.js";
import { ConfigAllowlist, type AllowlistStore } from "./allowlist.js";
import { actionDetection, actionSubject, commandSubject, type Subject } from "./action.js";
import { applyCallApproval } from "./call-approval.js";
import { isIsolatedBackend } from "./backends.js";
import { findDenyRule } from "./deny-rules.js";
import { approvalId, commandHash, keyOf, keysOf } from "./keys.js";
import { DEFAULT_BY, denialReason, describe, errorText } from "./reasons.js";
import { containsSecret, redactSecrets } from "../../redaction/redact.js";
import { SessionStates, type SessionState } from "./sessions.js";
import { smartReviewStep } from "./smart-review-step.js";
import { approvalSettingsFromConfig, type ApprovalSettings } from "./settings.js";
import type {
  ApprovalAnswer,
  ApprovalEntry,
  ApprovalKey,
  ApprovalObserver,
  ApprovalRequest,
  ApprovalScope,
  ApprovalSurface,
  BackendInfo,
  CheckOptions,
  DecisionSource,
  GateAction,
  GateDecision,
  SmartReviewer,
} from "./types.js";
import type { EnvVars } from "../../util/env-vars.js";

export { ISOLATED_BACKENDS, isIsolatedBackend } from "./backends.js";

/** Detection as the gate consumes it (sync or async). */
export type DetectFn = (command: string) => Detection | Promise<Detection>;

export interface ApprovalGateOptions {
  /** The typed `approvals` section; read from `config.yaml` in `home` when neither this nor `settings` is given. */
  config?: Parameters<typeof approvalSettingsFromConfig>[0];
  /** Settings laid over those from `config` (or the defaults). */
  settings?: Partial<ApprovalSettings>;
  /** The profile home (config.yaml, persisted approvals). Default: `MIBYAN_HOME` or `~/.mibyan`. */
  home?: string;
  /** Environment for the smart reviewer's endpoint and key. */
  env?: EnvVars;
  /** Detection (default: `detectAsync` of `src/approval/detection/`). */
  detect?: DetectFn;
  /** Persisted approvals (default: `approvals.allowlist` of config.yaml in `home`). */
  allowlist?: AllowlistStore;
  /** Who is asked (default: the terminal when stdin and stderr are TTYs, else the non-interactive surface). */
  surface?: ApprovalSurface;
  /** The smart-mode reviewer (default: built from `settings.smart` when a model is configured). */
  reviewer?: SmartReviewer;
  /** Every decision is logged here, redacted (default: stderr logger). */
  logger?: Logger;
  observers?: ApprovalObserver[];
  /** Lifetime of a one-time grant (`approveOnce`), default 10 minutes. */
  onceTtlMs?: number;
}

/** The default detection: `detectAsync` of the detection module, loaded (with the bash parser) on first use. */
async function defaultDetect(command: string): Promise<Detection> {
  const { detectAsync } = await import("../detection/index.js");
  return detectAsync(command);
}

export class ApprovalGate {
  readonly settings: ApprovalSettings;
  /** The profile home (config.yaml, pending gateway approvals). */
  readonly home: string;
  private readonly detect: DetectFn;
  private readonly allowlist: AllowlistStore;
  private readonly logger: Logger;
  private readonly observers: ApprovalObserver[];
  private readonly sessions = new SessionStates();
  private readonly onceTtlMs: number;
  private surface?: ApprovalSurface;
  /** Surfaces of single sessions (a delegated child's, say), asked instead of the gate's own for that session's checks. */
  private readonly sessionSurfaces = new Map<string, ApprovalSurface>();
  private reviewer?: SmartReviewer;
  /** Warned once per gate: smart mode without a reviewer model. */
  private readonly noReviewerWarning = { given: false };

  constructor(options: ApprovalGateOptions = {}) {
    const env = options.env ?? process.env;
    const home = options.home !== undefined ? path.resolve(expandTilde(options.home, env)) : mibyanHome(env);
    const base = options.config !== undefined || options.settings !== undefined ? options.config : getConfig(home).config.approvals;
    const fromConfig = approvalSettingsFromConfig(base, env);
    this.settings = { ...fromConfig, ...options.settings, smart: { ...fromConfig.smart, ...options.settings?.smart } };
    this.detect = options.detect ?? defaultDetect;
    this.logger = options.logger ?? createStderrLogger();
    this.home = home;
    let lastAllowlistError: string | undefined;
    this.allowlist =
      options.allowlist ??
      new ConfigAllowlist({ home }, (err) => {
        // Once per distinct problem, not on every check.
        const text = errorText(err);
        if (text !== lastAllowlistError) this.logger.error(`approvals: cannot read the allowlist, treating it as empty: ${text}`);
        lastAllowlistError = text;
      });
    this.observers = [...(options.observers ?? [])];
    this.onceTtlMs = options.onceTtlMs ?? 10 * 60_000;
    if (options.surface) this.surface = options.surface;
    if (options.reviewer) {
      this.reviewer = options.reviewer;
    } else if (this.settings.smart.model) {
      this.reviewer = new OpenAISmartReviewer({
        model: this.settings.smart.model,
        timeoutMs: this.settings.smart.timeoutMs,
        ...(this.settings.smart.baseUrl ? { baseUrl: this.settings.smart.baseUrl } : {}),
        ...(this.settings.smart.apiKey ? { apiKey: this.settings.smart.apiKey } : {}),
      });
    }
  }

  // -------------------------------------------------------------------------
  // Session controls
  // -------------------------------------------------------------------------

  /** Who is asked when a check names no surface (a gateway surface for a chat platform, say). */
  setSurface(surface: ApprovalSurface): void {
    this.surface = surface;
  }

  /**
   * Who is asked for the checks of one session, instead of the gate's surface: a delegated child's
   * surface answers for it without asking anybody (src/agent/delegation/). A check's own `surface`
   * still wins; every step before the ask (hardline, deny rules, mode, allowlist) still runs. Keyed by
   * session id rather than carried in an async context, so no process-wide promise hooks are needed.
   * Returns a function that removes it (only if it is still the one registered).
   */
  setSessionSurface(sessionId: string, surface: ApprovalSurface): () => void {
    this.sessionSurfaces.set(sessionId, surface);
    return () => this.removeSessionSurface(sessionId, surface);
  }

  /** Removes `surface` as the session's own surface (nothing if another one is registered for it now). */
  removeSessionSurface(sessionId: string, surface: ApprovalSurface): void {
    if (this.sessionSurfaces.get(sessionId) === surface) this.sessionSurfaces.delete(sessionId);
  }

  /** Turns the session's yolo toggle on or off (everything but hardline rules and deny rules passes). */
  setYolo(sessionId: string, on: boolean): void {
    this.sessions.get(sessionId).yolo = on;
  }

  isYolo(sessionId: string): boolean {
    return this.sessions.peek(sessionId)?.yolo ?? false;
  }

  /** Approves keys for one session. */
  grantSession(sessionId: string, keys: readonly ApprovalKey[]): void {
    this.sessions.grant(sessionId, keys);
  }

  /** The session's approvals. */
  sessionApprovals(sessionId: string): ApprovalEntry[] {
    return this.sessions.approvals(sessionId);
  }

  /** Withdraws one session approval (by id), or all of them. */
  revokeSession(sessionId: string, id?: string): void {
    this.sessions.revoke(sessionId, id);
  }

  /** Lets exactly this command (or action text) run once more in this session on this backend (for retry-after-approval flows). */
  approveOnce(sessionId: string, command: string, backend: string): void {
    this.sessions.get(sessionId).once.set(`${commandHash(command)}:${backend}`, Date.now() + this.onceTtlMs);
  }

  /**
   * The conversation of `from` goes on as `to` (the agent loop compacted it into a continuation):
   * its session approvals, yolo toggle, reviewer breaker and per-session surface move to `to`.
   */
  continueSession(from: string, to: string): void {
    this.sessions.continueAs(from, to);
    const surface = this.sessionSurfaces.get(from);
    if (surface !== undefined && from !== to) {
      this.sessionSurfaces.delete(from);
      if (!this.sessionSurfaces.has(to)) this.sessionSurfaces.set(to, surface);
    }
  }

  /** Forgets everything about a session. */
  endSession(sessionId: string): void {
    this.sessions.end(sessionId);
    this.sessionSurfaces.delete(sessionId);
  }

  /** Whether smart review stopped for this session after repeated denials. */
  breakerTripped(sessionId: string): boolean {
    return this.sessions.peek(sessionId)?.breakerTripped ?? false;
  }

  resetBreaker(sessionId: string): void {
    this.sessions.resetBreaker(sessionId);
  }

  /** Adds an observer; returns a function that removes it. */
  addObserver(observer: ApprovalObserver): () => void {
    this.observers.push(observer);
    return () => {
      const index = this.observers.indexOf(observer);
      if (index !== -1) this.observers.splice(index, 1);
    };
  }

  /**
   * A gateway surface with this gate's settings: pending approvals live for
   * `approvals.gateway_timeout_seconds` in a file store under the profile home
   * (`<home>/approvals/pending`) unless another store is given. Pass it as the gate's
   * surface (`check(cmd, { ..., surface })`) and call its `resolvePending` from the
   * request that carries the answer.
   */
  gatewaySurface(options: Omit<GatewaySurfaceOptions, "timeoutMs"> & { timeoutMs?: number }): GatewaySurface {
    return new GatewaySurface({
      timeoutMs: this.settings.gatewayTimeoutMs,
      ...options,
      store: options.store ?? new FilePendingStore(pendingStoreDir(this.home)),
    });
  }

  // -------------------------------------------------------------------------
  // The check
  // -------------------------------------------------------------------------

  /** Judges a shell command: detection finds its matches, then steps 1 to 7 decide (under the call's `approvalScope`, call-approval.ts). */
  async check(command: string, options: CheckOptions): Promise<GateDecision> {
    return this.judge(commandSubject(command), () => this.detect(command), applyCallApproval(command, options));
  }

  /**
   * Judges a tool's non-shell action as a whole (the program `execute_code` runs, say): one
   * match of `action.rule` with `action.prefix`, through the same steps as a command. Keys
   * are (rule, prefix, backend), so a session or `always` approval covers every later action
   * with that prefix. People and the log see `action.display`, never more.
   */
  async checkAction(action: GateAction, options: CheckOptions): Promise<GateDecision> {
    return this.judge(actionSubject(action), () => actionDetection(action), applyCallApproval(action.text, options));
  }

  /** Steps 1 to 5; 6 and 7 in `review`. */
  private async judge(subject: Subject, detect: () => Detection | Promise<Detection>, options: CheckOptions): Promise<GateDecision> {
    const { command } = subject;
    const backend: BackendInfo = typeof options.backend === "string" ? { name: options.backend } : options.backend;
    const signal = options.signal ?? new AbortController().signal;
    const base = { command, sessionId: options.sessionId, backend: backend.name };
    const decide = (allowed: boolean, by: DecisionSource, reason: string, matches: RuleMatch[], extra: Partial<GateDecision> = {}) =>
      this.finish({ allowed, by, reason, matches, ...base, ...extra }, subject.shown);

    if (signal.aborted) return decide(false, "cancelled", "The command was cancelled before it was checked.", []);

    let detection: Detection;
    try {
      detection = await detect();
    } catch (err) {
      return decide(false, "error", `The command could not be checked for safety (${errorText(err)}), so it was not run.`, []);
    }
    const matches = detection.matches;

    // 1. Hardline rules: never approvable.
    const hardline = matches.filter((m) => m.hardline);
    if (hardline.length > 0 || detection.hardline) {
      return decide(
        false,
        "hardline",
        `Blocked: ${describe(hardline.length > 0 ? hardline : matches)}. This is never allowed, in any mode; do not try to run it another way.`,
        matches,
      );
    }

    // 2. User deny rules.
    const hit = findDenyRule(this.settings.deny, subject.denyText, matches, backend.name);
    if (hit) {
      const what = hit.match ? ` (${describe([hit.match])})` : "";
      const why = (hit.rule.reason ?? "this command is not allowed").replace(/[.\s]+$/, "");
      return decide(false, "deny_rule", `Denied by the user's configuration${what}: ${why}.`, matches);
    }

    // 3. Mode, yolo, isolated backends.
    // Read-only until something is recorded, so safe commands leave no per-session state behind.
    const state = this.sessions.peek(options.sessionId);
    if (this.settings.mode === "off") return decide(true, "mode_off", "Approvals are off (mode: off).", matches);
    if (state?.yolo) return decide(true, "yolo", "The session's yolo toggle is on.", matches);
    if (isIsolatedBackend(backend) && !this.settings.isolatedBackendsNeedApproval) {
      return decide(true, "isolated_backend", `The ${backend.name} sandbox is isolated from the host; only hardline rules apply there.`, matches);
    }

    // 4. Allowlist, session approvals, one-time grants: every match must be covered.
    if (matches.length > 0) {
      const uncovered: RuleMatch[] = [];
      let bySession = false;
      for (const match of matches) {
        const id = approvalId(keyOf(match, backend.name));
        if (state?.grants.has(id)) bySession = true;
        else if (!this.allowlisted(id)) uncovered.push(match);
      }
      if (uncovered.length === 0) {
        return bySession
          ? decide(true, "session", "Approved for this session.", matches)
          : decide(true, "allowlist", "Approved for good (approvals.allowlist).", matches);
      }
      if (this.sessions.takeOnce(options.sessionId, `${commandHash(command)}:${backend.name}`)) {
        return decide(true, "once", "Approved once for exactly this command.", matches, { scope: "once" });
      }
      return this.review(subject, detection, uncovered, backend.name, this.sessions.get(options.sessionId), options, signal);
    }

    // 5. Detection found nothing.
    return decide(true, "safe", "No dangerous pattern found.", matches);
  }

  private allowlisted(id: string): boolean {
    try {
      return this.allowlist.has(id);
    } catch (err) {
      this.logger.error(`approvals: allowlist lookup failed, treating it as empty: ${errorText(err)}`);
      return false;
    }
  }

  /** Steps 6 and 7: smart review, then a surface. */
  private async review(
    subject: Subject,
    detection: Detection,
    uncovered: RuleMatch[],
    backend: string,
    state: SessionState,
    options: CheckOptions,
    signal: AbortSignal,
  ): Promise<GateDecision> {
    const { command, shown } = subject;
    const matches = detection.matches;
    const base = { command, sessionId: options.sessionId, backend };
    const finish = (decision: Omit<GateDecision, keyof typeof base>) => this.finish({ ...decision, ...base }, shown);

    // 6. Smart review (smart-review-step.ts): a verdict, or a note for the person asked next.
    let smartNote: string | undefined;
    if (this.settings.mode === "smart" && options.personApproved !== true) {
      const outcome = await smartReviewStep(
        { reviewer: this.reviewer, subject, uncovered, backend, state, sessionId: options.sessionId, signal },
        { sessions: this.sessions, breakerThreshold: this.settings.smart.breakerThreshold, logger: this.logger, noReviewerWarning: this.noReviewerWarning },
      );
      if ("verdict" in outcome) return finish({ ...outcome.verdict, matches });
      smartNote = outcome.note;
    }

    // 7. Ask.
    const request: ApprovalRequest = {
      id: randomUUID(),
      command,
      sessionId: options.sessionId,
      backend,
      matches: uncovered,
      detection,
      createdAt: Date.now(),
      ...(smartNote ? { smart: { reason: smartNote } } : {}),
      ...(subject.display !== undefined ? { display: subject.display } : {}),
    };
    await this.notify("onRequest", request);

    const surface = options.surface ?? this.sessionSurfaces.get(options.sessionId) ?? this.defaultSurface();
    let answer: ApprovalAnswer;
    try {
      answer = await surface.ask(request, signal);
    } catch (err) {
      answer = { scope: "deny", by: "error", reason: `the approval surface failed (${errorText(err)})` };
    }
    const by: DecisionSource = answer.by ?? DEFAULT_BY[surface.kind] ?? "user";
    const asked = { requestId: request.id };
    const scopes: readonly ApprovalScope[] = ["once", "session", "always"];

    if (signal.aborted || by === "cancelled") {
      return finish({ allowed: false, by: "cancelled", reason: "The command was cancelled while waiting for approval.", matches, ...asked });
    }
    if (!scopes.includes(answer.scope)) return finish({ allowed: false, by, reason: denialReason(by, answer, uncovered, surface.kind), matches, scope: "deny", ...asked });

    if (answer.scope === "session" || answer.scope === "always") {
      const keys = keysOf(uncovered, backend);
      this.grantSession(options.sessionId, keys);
      if (answer.scope === "always") {
        const persistable = keys.filter((k) => !containsSecret(k.prefix));
        if (persistable.length < keys.length) {
          this.logger.warn("approvals: an approval whose prefix contains a secret was kept for this session only, not written to config.yaml");
        }
        try {
          if (persistable.length > 0) await this.allowlist.add(persistable);
        } catch (err) {
          this.logger.error(`approvals: could not save the approval to config.yaml (kept for this session): ${errorText(err)}`);
        }
      }
    }
    if (by === "non_interactive") {
      this.logger.warn(`approvals: non-interactive run approved a flagged command (approvals.non_interactive: allow): ${redactSecrets(shown)}`);
    }
    if (by === "subagent") {
      this.logger.warn(`approvals: a subagent's flagged command was approved without asking (delegation.subagent_auto_approve: true): ${redactSecrets(shown)}`);
    }
    const reason =
      answer.scope === "once" ? "Approved for this command only." : answer.scope === "session" ? "Approved for this session." : "Approved for good.";
    return finish({ allowed: true, by, reason: by === "non_interactive" ? `${reason} (non-interactive policy: allow)` : reason, matches, scope: answer.scope, ...asked });
  }

  private defaultSurface(): ApprovalSurface {
    this.surface ??= hasInteractiveTerminal()
      ? new TerminalSurface({ timeoutMs: this.settings.timeoutMs })
      : new NonInteractiveSurface(this.settings.nonInteractive);
    return this.surface;
  }

  /** Logs (redacted; `shown` stands for the command), tells the observers, returns the decision. */
  private async finish(decision: GateDecision, shown: string): Promise<GateDecision> {
    const rules = decision.matches.map((m) => m.rule).join(",") || "-";
    this.logger.info(
      redactSecrets(
        `approval ${decision.allowed ? "allowed" : "denied"} by=${decision.by}${decision.scope ? ` scope=${decision.scope}` : ""} session=${JSON.stringify(decision.sessionId)} backend=${decision.backend} rules=${rules} command=${JSON.stringify(shown)} reason=${JSON.stringify(decision.reason)}`,
      ),
    );
    await this.notify("onDecision", decision);
    return decision;
  }

  /** Tells every observer with that callback; one that throws is logged and skipped. */
  private async notify<K extends "onRequest" | "onDecision">(callback: K, value: Parameters<NonNullable<ApprovalObserver[K]>>[0]): Promise<void> {
    for (const observer of this.observers) {
      const fn = observer[callback] as ((value: unknown) => unknown) | undefined;
      if (fn === undefined) continue;
      try {
        await fn.call(observer, value);
      } catch (err) {
        this.logger.warn(`approvals: an ${callback} observer failed: ${errorText(err)}`);
      }
    }
  }
}
