/**
 * `notifications/tools/list_changed`: the registry has no change events, so the server compares what
 * it would list now with what it listed last, every `pollMs` while a client is connected. The
 * registry's `generation` (bumped by every registration and removal: a plugin's tool, an MCP server's
 * tools coming and going) says when schemas may have changed; availability (an environment variable
 * set, a check passing) changes no generation, so the names are compared on every poll. Changes within
 * one poll are one notification (the poll is the debounce).
 */
import type { ToolRegistry } from "../../registry/tool-registry.js";
import type { Logger } from "../../registry/types.js";
import type { ToolLister } from "./tool-list.js";

export class ListChangedWatcher {
  private timer: ReturnType<typeof setInterval> | undefined;
  private generation = -1;
  private names = "";
  private schemas = "";
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly registry: ToolRegistry,
    private readonly lister: ToolLister,
    private readonly pollMs: number,
    private readonly logger: Logger,
  ) {}

  /** Calls `listener` whenever the list changes; returns a function that stops it. */
  subscribe(listener: () => void): () => void {
    if (this.listeners.size === 0) this.start();
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stop();
    };
  }

  private start(): void {
    this.changed(); // the baseline
    if (this.pollMs <= 0) return;
    this.timer = setInterval(() => {
      let changed = false;
      try {
        changed = this.changed();
      } catch (err) {
        this.logger.warn(`mcp server: could not compare the tool list: ${err instanceof Error ? err.message : String(err)}`);
      }
      if (changed) for (const listener of this.listeners) listener();
    }, this.pollMs);
    this.timer.unref?.();
  }

  private stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.generation = -1;
  }

  /** Whether the list differs from the last one seen; remembers the new one. */
  private changed(): boolean {
    const definitions = this.lister.definitions();
    const names = definitions.map((d) => d.function.name).join("\n");
    const generation = this.registry.generation;
    let schemas = this.schemas;
    // Serialising every schema only when a registration could have changed one.
    if (generation !== this.generation) schemas = JSON.stringify(definitions);
    const changed = this.generation !== -1 && (names !== this.names || schemas !== this.schemas);
    this.generation = generation;
    this.names = names;
    this.schemas = schemas;
    return changed;
  }
}
