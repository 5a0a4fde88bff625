/**
 * The per-server circuit breaker (hermes `_CIRCUIT_BREAKER_*`, #10447).
 *
 * After `threshold` consecutive failed calls the breaker opens: calls are refused without any RPC,
 * with hermes' exact text (models are tuned on "Do NOT retry"), until the cooldown has passed. Then
 * one call is let through as a probe (half-open); its success closes the breaker, its failure opens
 * it for another cooldown. Calls arriving while the probe runs are refused too.
 *
 * What counts as a failure is the caller's decision (call.ts): the server not answering, a transport
 * error, a timeout. A tool that answers `isError` is a reachable server and does not count, nor does
 * an output that does not match its `outputSchema` (#101330), nor a call the caller cancelled.
 */
import type { McpClock } from "./types.js";

export class CircuitBreaker {
  private failures = 0;
  private openedAt: number | undefined;
  private probing = false;

  constructor(
    private readonly server: string,
    private readonly clock: McpClock,
    private readonly threshold: number,
    private readonly cooldownMs: number,
  ) {}

  get consecutiveFailures(): number {
    return this.failures;
  }

  get isOpen(): boolean {
    return this.openedAt !== undefined;
  }

  /**
   * `undefined` when a call may go ahead (and, after the cooldown, marks it as the probe);
   * otherwise the refusal text for the model.
   */
  admit(): string | undefined {
    if (this.openedAt === undefined) return undefined;
    const remaining = this.openedAt + this.cooldownMs - this.clock.now();
    if (remaining <= 0 && !this.probing) {
      this.probing = true;
      return undefined;
    }
    const seconds = Math.max(1, Math.ceil(remaining / 1000));
    return (
      `MCP server '${this.server}' is unreachable after ${this.failures} consecutive failures. ` +
      `Auto-retry available in ~${seconds}s. Do NOT retry this tool yet — use alternative approaches or ask the user to check the MCP server.`
    );
  }

  success(): void {
    this.failures = 0;
    this.openedAt = undefined;
    this.probing = false;
  }

  failure(): void {
    this.failures++;
    this.probing = false;
    if (this.failures >= this.threshold) this.openedAt = this.clock.now();
  }

  /** A call that neither succeeded nor failed (cancelled by the caller): a probe slot is given back. */
  release(): void {
    this.probing = false;
  }

  reset(): void {
    this.success();
  }
}
