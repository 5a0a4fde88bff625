/**
 * `notifications/tools/list_changed`. The server listens to the registry's change event
 * (`registry.onChange`: a tool registered, replaced or removed — a plugin's, an MCP server's — or found
 * available or unavailable) while a client is connected. An event starts a short window
 * (`debounceMs`); at its end the list served now is compared with the one clients were last told of,
 * and only a real difference (names, descriptions, schemas, annotations) is announced: a burst of
 * registrations is one notification, and a tool outside the server's selection is none.
 *
 * Availability hangs on things no event reports (an environment variable set in this process, a file a
 * check reads, a daemon coming up): the registry sees a change only when it next evaluates the tool. So
 * while clients are connected the list is also compared every `recheckMs` (default 30 s, the lifetime of
 * a cached check answer), which reads the environment and runs the checks whose answers expired; a
 * program that changes availability itself calls `registry.refreshAvailability()` to have it announced
 * at once.
 */
import type { ToolRegistry } from "../../registry/tool-registry.js";
import type { Logger } from "../../registry/types.js";
import type { ToolLister } from "./tool-list.js";

/**
 * The least time between two notifications. Each one makes clients list again, and a listing evaluates
 * availability: a check whose answer flips on every run (with `tools.availability_ttl_seconds: 0`) would
 * otherwise drive a notify-list-notify loop as fast as the clients answer.
 */
const MIN_GAP_MS = 250;

export interface ListChangedTimings {
  /** How long after a registry event the list is compared (events within it are one comparison). */
  debounceMs: number;
  /** How often the list is compared without an event, for availability; 0: never. */
  recheckMs: number;
}

export class ListChangedWatcher {
  private unsubscribe: (() => void) | undefined;
  private debounce: ReturnType<typeof setTimeout> | undefined;
  private recheck: ReturnType<typeof setInterval> | undefined;
  /** The list clients were last told of, serialised. */
  private last = "";
  private notifiedAt = Number.NEGATIVE_INFINITY;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly registry: ToolRegistry,
    private readonly lister: ToolLister,
    private readonly timings: ListChangedTimings,
    private readonly logger: Logger,
  ) {}

  /** Calls `listener` whenever the served list changes; returns a function that stops it. */
  subscribe(listener: () => void): () => void {
    if (this.listeners.size === 0) this.start();
    this.listeners.add(listener);
    return () => {
      if (!this.listeners.delete(listener)) return;
      if (this.listeners.size === 0) this.stop();
    };
  }

  private start(): void {
    this.unsubscribe = this.registry.onChange(() => {
      // A call's allowed names must not lag behind a list the client may be told of any moment.
      this.lister.invalidate();
      this.debounce ??= setTimeout(
        () => {
          this.debounce = undefined;
          this.compare();
        },
        Math.max(this.timings.debounceMs, this.notifiedAt + MIN_GAP_MS - Date.now()),
      );
      this.debounce.unref?.();
    });
    // The baseline, taken after subscribing: it is also each tool's first availability the registry sees.
    this.last = this.serialise() ?? "";
    if (this.timings.recheckMs > 0) {
      this.recheck = setInterval(() => this.compare(), this.timings.recheckMs);
      this.recheck.unref?.();
    }
  }

  private stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    if (this.debounce !== undefined) clearTimeout(this.debounce);
    if (this.recheck !== undefined) clearInterval(this.recheck);
    this.debounce = undefined;
    this.recheck = undefined;
  }

  private compare(): void {
    const now = this.serialise();
    if (now === undefined || now === this.last) return;
    this.last = now;
    this.notifiedAt = Date.now();
    for (const listener of this.listeners) listener();
  }

  private serialise(): string | undefined {
    try {
      return JSON.stringify(this.lister.list());
    } catch (err) {
      this.logger.warn(`mcp server: could not compare the tool list: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
  }
}
