/**
 * What the gate keeps per session: session approvals, one-time grants, the yolo toggle and
 * the smart reviewer's breaker. Nothing here crosses a session or outlives the process.
 */

import { approvalId } from "./keys.js";
import type { ApprovalEntry, ApprovalKey } from "./types.js";

export interface SessionState {
  /** Session approvals by key id. */
  grants: Map<string, ApprovalKey>;
  /** One-time grants: `<commandHash>:<backend>` → expiry (epoch ms). */
  once: Map<string, number>;
  yolo: boolean;
  consecutiveSmartDenials: number;
  breakerTripped: boolean;
}

export class SessionStates {
  private readonly states = new Map<string, SessionState>();

  /** The session's state if it has one; reading never creates one, so safe commands leave nothing behind. */
  peek(sessionId: string): SessionState | undefined {
    return this.states.get(sessionId);
  }

  /** The session's state, created on first use. */
  get(sessionId: string): SessionState {
    let state = this.states.get(sessionId);
    if (!state) {
      state = { grants: new Map(), once: new Map(), yolo: false, consecutiveSmartDenials: 0, breakerTripped: false };
      this.states.set(sessionId, state);
    }
    return state;
  }

  grant(sessionId: string, keys: readonly ApprovalKey[]): void {
    const grants = this.get(sessionId).grants;
    for (const key of keys) grants.set(approvalId(key), { ...key });
  }

  approvals(sessionId: string): ApprovalEntry[] {
    return [...(this.states.get(sessionId)?.grants ?? new Map<string, ApprovalKey>()).entries()].map(([id, key]) => ({ id, ...key }));
  }

  /** Withdraws one session approval (by id), or all of them. */
  revoke(sessionId: string, id?: string): void {
    const grants = this.states.get(sessionId)?.grants;
    if (!grants) return;
    if (id === undefined) grants.clear();
    else grants.delete(id);
  }

  /** Uses up a one-time grant: true when there was one and it had not expired. */
  takeOnce(sessionId: string, onceKey: string, now = Date.now()): boolean {
    const once = this.states.get(sessionId)?.once;
    const until = once?.get(onceKey);
    if (once === undefined || until === undefined) return false;
    once.delete(onceKey);
    return until > now;
  }

  end(sessionId: string): void {
    this.states.delete(sessionId);
  }

  /**
   * Hands `from`'s state to `to`, its continuation (a compacted conversation goes on under a new id):
   * what the person approved for the session, the yolo toggle and the reviewer's breaker are the
   * conversation's, not the id's. `from` keeps nothing: it has ended.
   */
  continueAs(from: string, to: string): void {
    const state = this.states.get(from);
    if (state === undefined || from === to) return;
    this.states.delete(from);
    const existing = this.states.get(to);
    if (existing === undefined) {
      this.states.set(to, state);
      return;
    }
    for (const [id, key] of state.grants) existing.grants.set(id, key);
    for (const [key, until] of state.once) existing.once.set(key, Math.max(until, existing.once.get(key) ?? 0));
    existing.yolo ||= state.yolo;
    existing.breakerTripped ||= state.breakerTripped;
    existing.consecutiveSmartDenials = Math.max(existing.consecutiveSmartDenials, state.consecutiveSmartDenials);
  }

  resetBreaker(sessionId: string): void {
    const state = this.states.get(sessionId);
    if (state) {
      state.breakerTripped = false;
      state.consecutiveSmartDenials = 0;
    }
  }

  /** Counts a reviewer denial; true when this one trips the breaker. */
  smartDenied(state: SessionState, threshold: number): boolean {
    state.consecutiveSmartDenials += 1;
    if (state.breakerTripped || state.consecutiveSmartDenials < threshold) return false;
    state.breakerTripped = true;
    return true;
  }
}
