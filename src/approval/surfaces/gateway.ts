/**
 * The gateway surface, for chat platforms and web apps: a request becomes a serialisable
 * `PendingApproval` handed to `notify` (post it to Slack, push it to a browser, ...); an
 * answer arrives later, by id, from another request: `resolvePending(id, answer)`.
 *
 * - Expiry (default 300 s) denies; an expired approval cannot be resolved.
 * - The first resolution wins; resolving again reports `already_resolved`.
 * - Replay: a pending approval survives a restart in a `FilePendingStore`. When the same
 *   session asks about the same command on the same backend again (the agent retries after
 *   the restart), the gateway re-attaches to the stored approval instead of sending a new
 *   one, so the person's answer to the original message still counts.
 * - With a shared (file) store, another process may resolve: the waiter polls it.
 */

import { commandHash } from "../flow/keys.js";
import { redactSecrets } from "../../redaction/redact.js";
import { DEFAULT_GATEWAY_TIMEOUT_MS } from "../flow/settings.js";
import type { ApprovalAnswer, ApprovalRequest, ApprovalScope, ApprovalSurface } from "../flow/types.js";
import {
  MemoryPendingStore,
  PENDING_ID,
  type PendingApproval,
  type PendingApprovalStore,
  type PendingRecord,
  type PendingResolution,
} from "./pending-store.js";

export interface GatewaySurfaceOptions {
  /** Delivers a new pending approval to the person (chat message, web push, ...). A failure denies. */
  notify: (pending: PendingApproval) => void | Promise<void>;
  /** Default: in memory. */
  store?: PendingApprovalStore;
  /** Lifetime of a pending approval (default 300 s). */
  timeoutMs?: number;
  /** How often a shared store is polled for resolutions from other processes (default 500 ms). */
  pollIntervalMs?: number;
  /** Clock (epoch ms), for tests. */
  now?: () => number;
}

/** An answer given through the gateway. */
export interface GatewayAnswer {
  scope: ApprovalScope;
  /** With `deny`: reaches the model. */
  reason?: string;
  /** Who answered, for the record. */
  approver?: string;
}

export type ResolveStatus = "resolved" | "unknown" | "expired" | "already_resolved" | "invalid";

export interface ResolveResult {
  ok: boolean;
  status: ResolveStatus;
  pending?: PendingApproval;
}

const SCOPES: readonly string[] = ["once", "session", "always", "deny"];

export class GatewaySurface implements ApprovalSurface {
  readonly kind = "gateway";
  readonly store: PendingApprovalStore;
  private readonly notify: GatewaySurfaceOptions["notify"];
  private readonly timeoutMs: number;
  private readonly pollIntervalMs: number;
  private readonly now: () => number;
  /** Ids with a waiter in this process, and how to wake it. */
  private readonly waiters = new Map<string, () => void>();

  constructor(options: GatewaySurfaceOptions) {
    this.notify = options.notify;
    this.store = options.store ?? new MemoryPendingStore();
    this.timeoutMs = options.timeoutMs ?? DEFAULT_GATEWAY_TIMEOUT_MS;
    this.pollIntervalMs = options.pollIntervalMs ?? 500;
    this.now = options.now ?? Date.now;
  }

  /** The plain-data pending approval for a request (redacted for display). */
  toPending(request: ApprovalRequest): PendingApproval {
    const created = this.now();
    const pending: PendingApproval = {
      id: request.id,
      // An action (gate.checkAction) brings its own display, already shortened; redacting again is harmless.
      command: redactSecrets(request.display ?? request.command),
      commandSha256: commandHash(request.command),
      matches: request.matches.map((m) => ({
        rule: m.rule,
        description: m.description,
        category: m.category,
        prefix: redactSecrets(m.prefix),
        ...(m.detail ? { detail: redactSecrets(m.detail) } : {}),
      })),
      sessionId: request.sessionId,
      backend: request.backend,
      createdAt: new Date(created).toISOString(),
      expiresAt: new Date(created + this.timeoutMs).toISOString(),
    };
    if (request.smart) pending.smartReason = request.smart.reason;
    return pending;
  }

  async ask(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    if (signal.aborted) return { scope: "deny", by: "cancelled" };
    let pending = await this.findReplay(request);
    if (!pending) {
      pending = this.toPending(request);
      await this.store.put(pending);
      try {
        await this.notify(pending);
      } catch (err) {
        // Nobody saw it: forget it, so a retry sends a fresh request instead of replaying this one.
        await this.store.remove(pending.id).catch(() => undefined);
        return { scope: "deny", by: "error", reason: `the approval request could not be delivered (${err instanceof Error ? err.message : String(err)})` };
      }
    }
    return this.wait(pending, signal);
  }

  /** A stored approval for the same session, backend and exact command that nobody in this process waits for, still answerable or answered and not yet used. */
  private async findReplay(request: ApprovalRequest): Promise<PendingApproval | undefined> {
    const hash = commandHash(request.command);
    const now = this.now();
    const candidates = (await this.store.list()).filter(
      (r) =>
        !this.waiters.has(r.pending.id) &&
        !r.consumed &&
        r.pending.sessionId === request.sessionId &&
        r.pending.backend === request.backend &&
        r.pending.commandSha256 === hash &&
        (r.resolution ? Date.parse(r.resolution.resolvedAt) + this.timeoutMs > now : Date.parse(r.pending.expiresAt) > now),
    );
    candidates.sort((a, b) => Date.parse(b.pending.createdAt) - Date.parse(a.pending.createdAt));
    return candidates[0]?.pending;
  }

  private wait(pending: PendingApproval, signal: AbortSignal): Promise<ApprovalAnswer> {
    return new Promise<ApprovalAnswer>((resolve) => {
      let settled = false;
      let checking = false;
      let again = false;
      const finish = (answer: ApprovalAnswer): void => {
        if (settled) return;
        settled = true;
        clearTimeout(expiry);
        if (poll) clearInterval(poll);
        signal.removeEventListener("abort", onAbort);
        this.waiters.delete(pending.id);
        resolve(answer);
      };
      const check = async (): Promise<void> => {
        if (settled) return;
        if (checking) {
          again = true;
          return;
        }
        checking = true;
        try {
          const record = await this.store.get(pending.id);
          if (record?.resolution) {
            if (await this.store.consume(pending.id)) finish(answerOf(record.resolution));
            else finish({ scope: "deny", by: "gateway", reason: "this approval was already used by another request" });
          }
        } catch (err) {
          finish({ scope: "deny", by: "error", reason: `the approval store failed (${err instanceof Error ? err.message : String(err)})` });
        } finally {
          checking = false;
          if (again && !settled) {
            again = false;
            void check();
          }
        }
      };
      const onAbort = (): void => finish({ scope: "deny", by: "cancelled" });
      const remaining = Math.max(0, Date.parse(pending.expiresAt) - this.now());
      const expiry = setTimeout(() => finish({ scope: "deny", by: "timeout" }), remaining);
      const poll = this.store.shared ? setInterval(() => void check(), this.pollIntervalMs) : undefined;
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiters.set(pending.id, () => void check());
      void check();
    });
  }

  /**
   * Answers a pending approval, typically from another request (a chat button, a web
   * form). Only the first answer counts; expired or unknown ids are refused.
   */
  async resolvePending(id: string, answer: GatewayAnswer): Promise<ResolveResult> {
    if (typeof id !== "string" || !PENDING_ID.test(id)) return { ok: false, status: "invalid" };
    if (!answer || !SCOPES.includes(answer.scope)) return { ok: false, status: "invalid" };
    const record = await this.store.get(id);
    if (!record) return { ok: false, status: "unknown" };
    if (record.resolution) return { ok: false, status: "already_resolved", pending: record.pending };
    if (Date.parse(record.pending.expiresAt) <= this.now()) return { ok: false, status: "expired", pending: record.pending };
    const resolution: PendingResolution = { scope: answer.scope, resolvedAt: new Date(this.now()).toISOString() };
    if (answer.reason?.trim()) resolution.reason = answer.reason.trim();
    if (answer.approver) resolution.approver = answer.approver;
    if (!(await this.store.resolve(id, resolution))) return { ok: false, status: "already_resolved", pending: record.pending };
    this.waiters.get(id)?.();
    return { ok: true, status: "resolved", pending: record.pending };
  }

  /** Approvals still waiting for an answer. */
  async listPending(): Promise<PendingApproval[]> {
    const now = this.now();
    return (await this.store.list())
      .filter((r: PendingRecord) => !r.resolution && Date.parse(r.pending.expiresAt) > now)
      .map((r) => r.pending);
  }
}

function answerOf(resolution: PendingResolution): ApprovalAnswer {
  const answer: ApprovalAnswer = { scope: resolution.scope, by: "gateway" };
  if (resolution.reason) answer.reason = resolution.reason;
  return answer;
}
