/**
 * Notifications about background processes for the agent loop: one when a
 * process ends (`notifyOnComplete`), and one when a line of its output
 * contains a watch pattern. Patterns are plain substrings, not regular
 * expressions: they come from the model, and a regex from a model could take
 * the runtime down with catastrophic backtracking.
 *
 * Watch notifications are rate-limited per process: the first match is
 * reported at once; matches in the next `minIntervalMs` are counted, and the
 * latest of them is reported when the interval is over (with how many were
 * folded into it). After `maxPerProcess` notifications a process reports no
 * more matches.
 */

import { redactSecrets } from "../redaction/redact.js";
import { stripAnsi } from "../terminal/ansi.js";
import type { ProcessEnding } from "./types.js";

export const MAX_WATCH_PATTERNS = 10;
export const MAX_WATCH_PATTERN_CHARS = 200;
/** Longest output line kept for matching (longer lines are matched on their first part). */
const MAX_LINE_CHARS = 4_096;
/** Longest line quoted in a notification. */
const QUOTED_LINE_CHARS = 500;

export type ProcessNotification =
  | {
      type: "completed";
      processId: string;
      sessionId: string;
      command: string;
      status: ProcessEnding;
      exitCode: number | null;
      /** The end of its output, redacted. */
      outputTail: string;
      at: number;
    }
  | {
      type: "watch";
      processId: string;
      sessionId: string;
      command: string;
      pattern: string;
      /** The matching line, redacted. */
      line: string;
      /** Further matches folded into this one by the rate limit. */
      suppressed: number;
      /** True on the last watch notification this process sends. */
      final: boolean;
      at: number;
    };

export interface WatchLimits {
  /** Default 10,000 ms. */
  minIntervalMs: number;
  /** Default 20. */
  maxPerProcess: number;
}

export const DEFAULT_WATCH_LIMITS: WatchLimits = { minIntervalMs: 10_000, maxPerProcess: 20 };

/** Checks the patterns a caller asked for; throws with a message for the model. */
export function checkWatchPatterns(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new Error("watch_patterns must be an array of strings.");
  if (value.length > MAX_WATCH_PATTERNS) throw new Error(`watch_patterns takes at most ${MAX_WATCH_PATTERNS} patterns.`);
  return value.map((pattern, i) => {
    if (typeof pattern !== "string" || pattern.trim() === "") throw new Error(`watch_patterns[${i}] must be a non-empty string.`);
    if (pattern.length > MAX_WATCH_PATTERN_CHARS) throw new Error(`watch_patterns[${i}] is longer than ${MAX_WATCH_PATTERN_CHARS} characters.`);
    if (pattern.includes("\n")) throw new Error(`watch_patterns[${i}] must be one line (it is matched against each output line).`);
    return pattern;
  });
}

export interface WatchMatch {
  pattern: string;
  line: string;
  suppressed: number;
  final: boolean;
}

/** One process's watch state: feed it output as it arrives, ask it for due notifications. */
export class OutputWatcher {
  readonly #patterns: readonly string[];
  readonly #limits: WatchLimits;
  #partial = "";
  #sent = 0;
  #lastSentAt = -Infinity;
  #pending: { pattern: string; line: string; count: number } | undefined;

  constructor(patterns: readonly string[], limits: WatchLimits = DEFAULT_WATCH_LIMITS) {
    this.#patterns = patterns;
    this.#limits = limits;
  }

  get exhausted(): boolean {
    return this.#sent >= this.#limits.maxPerProcess;
  }

  /** Feeds output; returns a notification that is due now, if any. */
  feed(text: string, now: number): WatchMatch | undefined {
    if (this.#patterns.length === 0 || this.exhausted) return undefined;
    const lines = (this.#partial + text).split("\n");
    this.#partial = lines.pop()!.slice(0, MAX_LINE_CHARS);
    for (const raw of lines) this.#match(raw);
    return this.due(now);
  }

  /** The remaining partial line counts as a line (the process ended). */
  end(now: number): WatchMatch | undefined {
    if (this.#partial !== "") this.#match(this.#partial);
    this.#partial = "";
    return this.due(now, true);
  }

  /** A folded match whose interval is over (or any pending one, with `force`). */
  due(now: number, force = false): WatchMatch | undefined {
    if (!this.#pending || this.exhausted) return undefined;
    if (!force && now - this.#lastSentAt < this.#limits.minIntervalMs) return undefined;
    const { pattern, line, count } = this.#pending;
    this.#pending = undefined;
    this.#sent += 1;
    this.#lastSentAt = now;
    return { pattern, line, suppressed: count - 1, final: this.exhausted };
  }

  #match(raw: string): void {
    const line = stripAnsi(raw.slice(0, MAX_LINE_CHARS)).replace(/\r/g, "");
    const pattern = this.#patterns.find((p) => line.includes(p));
    if (pattern === undefined) return;
    const quoted = redactSecrets(line.length > QUOTED_LINE_CHARS ? `${line.slice(0, QUOTED_LINE_CHARS)}…` : line);
    this.#pending = { pattern, line: quoted, count: (this.#pending?.count ?? 0) + 1 };
  }
}

/** Notifications waiting for the agent loop, per session, plus live listeners. */
export class NotificationQueue {
  readonly #queued = new Map<string, ProcessNotification[]>();
  readonly #listeners = new Set<(notification: ProcessNotification) => void>();
  /** Queued notifications per session at most; the oldest go first. */
  static readonly MAX_QUEUED = 1_000;

  push(notification: ProcessNotification): void {
    const list = this.#queued.get(notification.sessionId) ?? [];
    list.push(notification);
    if (list.length > NotificationQueue.MAX_QUEUED) list.splice(0, list.length - NotificationQueue.MAX_QUEUED);
    this.#queued.set(notification.sessionId, list);
    for (const listener of this.#listeners) {
      try {
        listener(notification);
      } catch {
        // A failing listener must not stop the others or the registry.
      }
    }
  }

  /** Removes and returns the session's queued notifications, oldest first. */
  take(sessionId: string): ProcessNotification[] {
    const list = this.#queued.get(sessionId) ?? [];
    this.#queued.delete(sessionId);
    return list;
  }

  subscribe(listener: (notification: ProcessNotification) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
