/**
 * The registry's change event (`registry.onChange`): who wants to know that the tool list changed — the
 * MCP server's `tools/list_changed`, the CLI waiting for an MCP server's tool — is told, instead of
 * polling the registry.
 *
 * - `registered` / `deregistered`: fired synchronously by `register`, `reinstate` and `deregister`, after
 *   the registry changed (`generation` is the new one).
 * - `availability`: a tool whose availability differs from the last time the registry evaluated it
 *   (a listing, a call, `refreshAvailability()`), while someone listens. Availability depends on things the
 *   registry cannot watch (environment variables, whatever a check looks at), so it is noticed when it is
 *   evaluated: `refreshAvailability()` evaluates every tool now; otherwise the next listing or call does,
 *   once a cached check's answer expired. The flips one evaluation finds are one event, delivered on a
 *   microtask (never in the middle of a listing); `refreshAvailability()` delivers before it returns.
 *
 * Nothing here runs while nobody listens: the registry holds no `RegistryChanges` then.
 */
import type { Logger, ToolEntry } from "./types.js";

export type RegistryChange =
  | {
      readonly kind: "registered";
      readonly name: string;
      /** Another entry held the name before (a replacement, or a plugin's rollback putting a tool back). */
      readonly replaced: boolean;
      readonly generation: number;
    }
  | { readonly kind: "deregistered"; readonly name: string; readonly generation: number }
  | {
      readonly kind: "availability";
      /** Tools that became available, sorted. */
      readonly available: readonly string[];
      /** Tools that became unavailable, sorted. */
      readonly unavailable: readonly string[];
      /** Availability does not change the generation: this is the registry's current one. */
      readonly generation: number;
    };

/** A listener's return value is ignored; a throw or a rejected promise is logged and never reaches the registry. */
export type RegistryChangeListener = (change: RegistryChange) => unknown;

export class RegistryChanges {
  /** Replaced, never mutated: a listener removed during an event does not disturb that event's loop. */
  private listeners: readonly RegistryChangeListener[] = [];
  /** The availability each tool had when last evaluated while someone listened. */
  private readonly seen = new Map<string, boolean>();
  /** Flips not yet delivered: name → its new availability. A flip back before delivery cancels out. */
  private pending: Map<string, boolean> | undefined;

  constructor(
    private readonly logger: () => Logger,
    private readonly generation: () => number,
    /** The entry registered under a name now: an evaluation of a replaced entry says nothing about the tool. */
    private readonly current: (name: string) => ToolEntry | undefined,
  ) {}

  get size(): number {
    return this.listeners.length;
  }

  add(listener: RegistryChangeListener): () => boolean {
    this.listeners = [...this.listeners, listener];
    return () => {
      const index = this.listeners.indexOf(listener);
      if (index < 0) return false;
      this.listeners = this.listeners.filter((_, i) => i !== index);
      return true;
    };
  }

  registered(name: string, replaced: boolean): void {
    // The new entry may have another check: its first evaluation is its baseline, not a flip.
    this.seen.delete(name);
    this.pending?.delete(name);
    this.emit({ kind: "registered", name, replaced, generation: this.generation() });
  }

  deregistered(name: string): void {
    this.seen.delete(name);
    this.pending?.delete(name);
    this.emit({ kind: "deregistered", name, generation: this.generation() });
  }

  /** The availability cache's observer: one tool evaluated against the process environment. */
  readonly observe = (entry: ToolEntry, available: boolean): void => {
    if (this.current(entry.name) !== entry) return;
    const before = this.seen.get(entry.name);
    if (before === available) return;
    this.seen.set(entry.name, available);
    // First sight: nobody listening could have been told otherwise.
    if (before === undefined) return;
    if (this.pending === undefined) {
      this.pending = new Map();
      queueMicrotask(() => this.flush());
    }
    if (this.pending.has(entry.name)) this.pending.delete(entry.name);
    else this.pending.set(entry.name, available);
  };

  /** Delivers the availability flips found so far as one event. */
  flush(): void {
    const pending = this.pending;
    if (pending === undefined) return;
    this.pending = undefined;
    if (pending.size === 0) return;
    const available: string[] = [];
    const unavailable: string[] = [];
    for (const [name, now] of pending) (now ? available : unavailable).push(name);
    this.emit({ kind: "availability", available: available.sort(), unavailable: unavailable.sort(), generation: this.generation() });
  }

  private emit(change: RegistryChange): void {
    for (const listener of this.listeners) {
      try {
        const answer = listener(change);
        if (answer !== null && typeof answer === "object" && typeof (answer as { then?: unknown }).then === "function") {
          (answer as Promise<unknown>).then(undefined, (err: unknown) => this.failed(err));
        }
      } catch (err) {
        this.failed(err);
      }
    }
  }

  private failed(err: unknown): void {
    this.logger().warn(`registry change listener failed (ignored): ${err instanceof Error ? err.message : String(err)}`);
  }
}
