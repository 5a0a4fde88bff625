/** Shapes shared by the MCP client modules (no behaviour, so any of them may import it). */
import type { JsonSchema } from "../../registry/types.js";

/**
 * - `connecting`: the first connection is being made (or retried).
 * - `ready`: connected; the server's tools are registered.
 * - `reconnecting`: an established session was lost and is being re-made with backoff.
 * - `parked`: retries ran out; tools removed; probed every few minutes and on `reconnect()`.
 * - `disabled`: `enabled: false` in the config, or `MIBYAN_SAFE_MODE`; never started.
 * - `refused`: the entry must not be started (a suspicious command line, an unusable URL).
 * - `closed`: `close()` was called.
 */
export type McpState = "connecting" | "ready" | "reconnecting" | "parked" | "disabled" | "refused" | "closed";

export interface McpServerStatus {
  name: string;
  transport: "stdio" | "http" | "sse";
  state: McpState;
  /** The last connection or keepalive error (redacted), if any. */
  lastError?: string | undefined;
  /** Tools of this server in the registry now (utilities included). */
  toolCount: number;
  /** Why the entry is `refused` or `disabled`. */
  refusal?: string | undefined;
  /** The stdio child's pid while connected. */
  pid?: number | undefined;
}

/** Time for backoff, probes, keepalive and the breaker; tests inject one they drive by hand. */
export interface McpClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realClock: McpClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const timer = setTimeout(fn, ms);
    // A library must not keep a program alive because a server is waiting for its next probe.
    timer.unref?.();
    return timer;
  },
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Timing knobs (milliseconds). The defaults are hermes' values. */
export interface McpTimings {
  /** First backoff delay; doubles per attempt (default 1,000). */
  backoffBaseMs: number;
  /** Cap on a backoff delay (default 60,000). */
  backoffMaxMs: number;
  /** Retries of the first connection before parking (default 3). */
  initialRetries: number;
  /** Retries after an established session is lost before parking (default 5). */
  reconnectRetries: number;
  /** A parked server is probed this often (default 300,000). */
  parkedProbeMs: number;
  /** Liveness ping interval; 0 disables (default 180,000). */
  keepaliveMs: number;
  /** Consecutive failures that open the circuit breaker (default 3). */
  breakerThreshold: number;
  /** How long an open breaker refuses calls before one probe (default 60,000). */
  breakerCooldownMs: number;
  /** How long a call waits for a reconnect in progress before giving up (default 5,000, capped by the call's timeout). */
  sessionWaitMs: number;
  /** How long the elicitation callback may take before the request is declined (default 300,000). */
  elicitationTimeoutMs: number;
}

export const DEFAULT_TIMINGS: McpTimings = Object.freeze({
  backoffBaseMs: 1_000,
  backoffMaxMs: 60_000,
  initialRetries: 3,
  reconnectRetries: 5,
  parkedProbeMs: 300_000,
  keepaliveMs: 180_000,
  breakerThreshold: 3,
  breakerCooldownMs: 60_000,
  sessionWaitMs: 5_000,
  elicitationTimeoutMs: 300_000,
});

/** The backoff delay before retry number `attempt` (0-based): base·2^attempt, capped. */
export function backoffDelay(attempt: number, timings: Pick<McpTimings, "backoffBaseMs" | "backoffMaxMs">): number {
  return Math.min(timings.backoffMaxMs, timings.backoffBaseMs * 2 ** Math.min(attempt, 30));
}

export interface McpElicitationRequest {
  server: string;
  message: string;
  /** The (flat, restricted) JSON Schema of the content the server wants. */
  requestedSchema: JsonSchema;
}

export interface McpElicitationAnswer {
  action: "accept" | "decline" | "cancel";
  /** The person's input, for `accept`. */
  content?: Record<string, unknown> | undefined;
}

/** Asks the person; `signal` aborts when the server's request is cancelled or the time limit passes. */
export type McpElicitationHandler = (request: McpElicitationRequest, signal: AbortSignal) => McpElicitationAnswer | Promise<McpElicitationAnswer>;
