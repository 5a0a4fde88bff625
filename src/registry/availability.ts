import type { CheckFn, Logger, ToolEntry } from "./types.js";
import { describeThrown } from "../util/text.js";
import type { EnvVars } from "../util/env-vars.js";

export type UnavailableCode = "missing_env" | "check_failed" | "check_threw" | "missing_dependency" | "not_registered";

export interface Availability {
  available: boolean;
  code?: UnavailableCode;
  /** Why the tool is unavailable, in words a user can act on. */
  reason?: string;
}

export interface AvailabilityOptions {
  /** How long a check's answer is reused across calls (default 30 s). */
  ttlMs?: number | undefined;
  /**
   * How long after a successful check a *throwing* check still counts as
   * available (default 60 s), so one transient fault does not pull a tool
   * from the model mid-conversation. A check that returns `false` takes effect at once.
   */
  graceMs?: number | undefined;
  now?: (() => number) | undefined;
}

interface CachedCheck {
  available: boolean;
  reason?: string;
  code?: UnavailableCode;
  checkedAt: number;
  lastSuccessAt: number | undefined;
}

const AVAILABLE: Availability = Object.freeze({ available: true });

/**
 * Thrown by an availability check to say "unavailable, and this is why": the
 * message becomes the reason as it is (`mibyan tools`, the model-facing
 * error), and it takes effect at once like a `false` answer. Anything else a
 * check throws is a fault of the check (reported as such, with a grace period).
 */
export class ToolUnavailableError extends Error {
  override readonly name = "ToolUnavailableError";
}

/**
 * Runs availability checks with two caches: a per-call memo (a check shared by
 * many tools runs once per `getDefinitions` call) and a short-lived cache
 * across calls, keyed by the check function itself.
 */
export class AvailabilityCache {
  private readonly cache = new Map<CheckFn, CachedCheck>();
  /**
   * Told of every tool evaluated against the process environment, while someone listens to the registry's
   * changes (changes.ts); undefined otherwise, so listings pay one field read.
   */
  observer: ((entry: ToolEntry, available: boolean) => void) | undefined;
  ttlMs: number;
  graceMs: number;
  private readonly now: () => number;

  constructor(
    private readonly logger: () => Logger,
    options: AvailabilityOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 30_000;
    this.graceMs = options.graceMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  /** Availability of one tool; pass the same `memo` for every tool of one listing. */
  ofEntry(entry: ToolEntry, memo?: Map<CheckFn, Availability>, env?: EnvVars): Availability {
    const answer = this.evaluate(entry, memo, env);
    // Another environment (a task's) says nothing about what the process's listings show.
    if (this.observer !== undefined && env === undefined) this.observer(entry, answer.available);
    return answer;
  }

  private evaluate(entry: ToolEntry, memo: Map<CheckFn, Availability> | undefined, env: EnvVars | undefined): Availability {
    // process.env is read only for tools that need it: it is a slow getter, and listings touch every tool.
    const variables = entry.requiresEnv.length > 0 ? (env ?? process.env) : undefined;
    for (const variable of entry.requiresEnv) {
      const value = variables![variable];
      if (value === undefined || value === "") {
        return { available: false, code: "missing_env", reason: `missing environment variable ${variable}` };
      }
    }
    return entry.checkFn === undefined ? AVAILABLE : this.ofCheck(entry.checkFn, memo);
  }

  ofCheck(check: CheckFn, memo?: Map<CheckFn, Availability>): Availability {
    const memoised = memo?.get(check);
    if (memoised !== undefined) return memoised;
    const answer = this.cachedOrRun(check);
    memo?.set(check, answer);
    return answer;
  }

  /** Forget every cached answer (after the environment changed, say). */
  clear(): void {
    this.cache.clear();
  }

  /**
   * Makes every cached answer stale, so each check runs again when next asked. Unlike `clear()`, a check's
   * last success is kept: a check that throws right after still gets its grace period.
   */
  expireAll(): void {
    for (const cached of this.cache.values()) cached.checkedAt = Number.NEGATIVE_INFINITY;
  }

  private cachedOrRun(check: CheckFn): Availability {
    const now = this.now();
    const cached = this.cache.get(check);
    if (cached !== undefined && now - cached.checkedAt < this.ttlMs) return toAvailability(cached);
    const lastSuccessAt = cached?.lastSuccessAt;
    let entry: CachedCheck;
    try {
      const answer: unknown = check();
      if (answer !== null && typeof answer === "object" && typeof (answer as { then?: unknown }).then === "function") {
        entry = {
          available: false,
          code: "check_failed",
          reason: "availability check returned a Promise; checks must be synchronous",
          checkedAt: now,
          lastSuccessAt,
        };
      } else if (answer) {
        entry = { available: true, checkedAt: now, lastSuccessAt: now };
      } else {
        entry = { available: false, code: "check_failed", reason: "availability check failed", checkedAt: now, lastSuccessAt };
      }
    } catch (thrown) {
      if (thrown instanceof ToolUnavailableError) {
        entry = { available: false, code: "check_failed", reason: thrown.message, checkedAt: now, lastSuccessAt };
        this.cache.set(check, entry);
        return toAvailability(entry);
      }
      const reason = `availability check threw ${describeThrown(thrown)}`;
      if (lastSuccessAt !== undefined && now - lastSuccessAt < this.graceMs) {
        this.logger().warn(`${reason}; still treated as available (succeeded ${Math.round((now - lastSuccessAt) / 1000)} s ago)`);
        entry = { available: true, checkedAt: now, lastSuccessAt };
      } else {
        entry = { available: false, code: "check_threw", reason, checkedAt: now, lastSuccessAt };
      }
    }
    this.cache.set(check, entry);
    return toAvailability(entry);
  }
}

function toAvailability(cached: CachedCheck): Availability {
  if (cached.available) return AVAILABLE;
  return { available: false, code: cached.code, reason: cached.reason };
}
