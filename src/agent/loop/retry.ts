/**
 * When a failed request is sent again, and after how long. The openai client's own retries are off
 * (`maxRetries: 0`): they sleep through Retry-After whatever it says (an endpoint answering
 * `Retry-After: 3600` would hold the run for an hour, deaf to the abort signal), retry 409 and
 * report nothing. Here the wait is bounded, abortable, and announced as a `retry` event.
 */

import type { RetryOptions } from "../types.js";

export const DEFAULT_MAX_RETRIES = 3;
export const DEFAULT_INITIAL_DELAY_MS = 500;
export const DEFAULT_MAX_DELAY_MS = 60_000;
/** Backoff without Retry-After never waits longer than this. */
export const MAX_BACKOFF_MS = 8_000;

export interface RetryPolicy {
  maxRetries: number;
  initialDelayMs: number;
  maxDelayMs: number;
}

export function retryPolicy(options: RetryOptions | undefined): RetryPolicy {
  const pick = (value: number | undefined, fallback: number): number =>
    typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : fallback;
  return {
    maxRetries: Math.floor(pick(options?.maxRetries, DEFAULT_MAX_RETRIES)),
    initialDelayMs: pick(options?.initialDelayMs, DEFAULT_INITIAL_DELAY_MS),
    maxDelayMs: pick(options?.maxDelayMs, DEFAULT_MAX_DELAY_MS),
  };
}

/** Statuses worth another attempt: a timeout, a lock conflict, a rate limit, a server fault. */
export function retryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Headers as the openai client's errors carry them (a `Headers` object), or a plain record. */
type HeaderSource = { get(name: string): string | null } | Record<string, string | undefined> | undefined;

function header(headers: HeaderSource, name: string): string | undefined {
  if (headers === undefined || headers === null) return undefined;
  if (typeof (headers as { get?: unknown }).get === "function") return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  return (headers as Record<string, string | undefined>)[name];
}

/**
 * The wait the endpoint asked for, in ms: `retry-after-ms`, then `Retry-After` as seconds or an HTTP
 * date. Undefined when absent or unreadable (a negative or non-finite value counts as unreadable).
 */
export function retryAfterMs(headers: HeaderSource, now = Date.now()): number | undefined {
  const ms = header(headers, "retry-after-ms");
  if (ms !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Number(ms);
  const value = header(headers, "retry-after")?.trim();
  if (value === undefined || value === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  // An HTTP date starts with a day name; anything else ("-5", "soon") is unreadable, not a date Date.parse guesses.
  if (!/^[A-Za-z]{3},/.test(value)) return undefined;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Exponential backoff with up to 25 % jitter taken off: attempt 1 waits ~initial, then doubles, capped. */
export function backoffMs(policy: RetryPolicy, attempt: number, random: () => number = Math.random): number {
  const base = Math.min(policy.initialDelayMs * 2 ** Math.max(0, attempt - 1), Math.max(policy.initialDelayMs, MAX_BACKOFF_MS));
  return Math.round(base * (1 - random() * 0.25));
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it fires. */
export function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
