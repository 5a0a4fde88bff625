import type { CallApprovalScope } from "../approval/flow/types.js";
import type { CallOptions, CallSurface, ToolContext } from "../registry/types.js";

/**
 * The context handed to hooks and the handler. The AbortSignal is created
 * only when someone reads it (most calls never do), unless the call has a
 * time limit, in which case `controller` links the caller's signal and the timer.
 */
export class CallContext implements ToolContext {
  readonly sessionId?: string;
  readonly taskId?: string;
  readonly toolCallId?: string;
  readonly session?: unknown;
  readonly allowedTools?: ReadonlySet<string>;
  readonly surface: CallSurface = "library";
  readonly approvalScope?: CallApprovalScope;
  toolName: string;
  /**
   * Whether the handler (or a hook) read `signal`. A handler that never did
   * cannot honour a cancellation, so dispatch does not wait for it to settle
   * (see `CANCEL_GRACE_MS` in pipeline.ts).
   */
  signalRead = false;
  private controller?: AbortController;
  private readonly callerSignal?: AbortSignal;
  /** Removes the link from the caller's signal to ours (set by `ensureOwnSignal`). */
  private unlinkCaller?: () => void;

  constructor(toolName: string, options: CallOptions | undefined) {
    this.toolName = toolName;
    if (options !== undefined) {
      this.sessionId = options.sessionId;
      this.taskId = options.taskId;
      this.toolCallId = options.toolCallId;
      this.session = options.session;
      if (options.surface !== undefined) this.surface = options.surface;
      if (options.approvalScope !== undefined) this.approvalScope = options.approvalScope;
      this.callerSignal = options.signal;
      const allowed = options.allowedTools;
      if (allowed !== undefined) this.allowedTools = allowed instanceof Set ? allowed : new Set(allowed);
    }
  }

  get signal(): AbortSignal {
    this.signalRead = true;
    if (this.controller !== undefined) return this.controller.signal;
    if (this.callerSignal !== undefined) return this.callerSignal;
    this.controller = new AbortController();
    return this.controller.signal;
  }

  /** The signal the caller gave, if any (cancellation from outside). */
  get caller(): AbortSignal | undefined {
    return this.callerSignal;
  }

  /** Aborts the handler's signal (time limit reached, or the caller cancelled). */
  abort(reason: unknown): void {
    if (this.controller === undefined) {
      this.controller = new AbortController();
    }
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }

  /**
   * The signal for a handler that hands it to code keeping its listeners for good (the MCP SDK's
   * `request` never removes its abort listener): one of this call's own, following the caller's, so
   * nothing piles up on a caller's long-lived signal. `undefined` when nothing can abort this call (no
   * time limit, no caller signal), which spares creating one: an AbortSignal costs ~5 µs on Node 20.
   */
  get perCallSignal(): AbortSignal | undefined {
    if (this.controller === undefined && this.callerSignal === undefined) return undefined;
    this.signalRead = true;
    this.ensureOwnSignal();
    return this.controller!.signal;
  }

  /** Makes sure the handler's signal is ours to abort, following the caller's. */
  ensureOwnSignal(): void {
    if (this.controller !== undefined) return;
    this.controller = new AbortController();
    const caller = this.callerSignal;
    if (caller !== undefined) {
      if (caller.aborted) {
        this.controller.abort(caller.reason);
      } else {
        const follow = (): void => this.abort(caller.reason);
        caller.addEventListener("abort", follow, { once: true });
        this.unlinkCaller = () => caller.removeEventListener("abort", follow);
      }
    }
  }

  /**
   * The call has settled: stops following the caller's signal, so an agent loop's session-long signal
   * does not collect a listener per call.
   */
  settle(): void {
    this.unlinkCaller?.();
    this.unlinkCaller = undefined;
  }
}

/**
 * `perCallSignal` for any context: a context that is not dispatch's own (a test calling a handler
 * directly) gives its `signal`.
 */
export function perCallSignal(ctx: { readonly signal: AbortSignal }): AbortSignal | undefined {
  return ctx instanceof CallContext ? ctx.perCallSignal : ctx.signal;
}
