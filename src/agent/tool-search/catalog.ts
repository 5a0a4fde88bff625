/**
 * What the bridge searches: one index per registry over its deferrable tools (MCP and plugin tools that
 * are not core), rebuilt after the registry reports a change (`registry.onChange`), so a tool an MCP
 * server adds mid-session is found by the next `tool_search` and a removed one is gone. Scope (which of
 * them a session may reach) is not part of the index: the bridge filters hits by its own scope.
 */

import type { ToolRegistry } from "../../registry/tool-registry.js";
import type { ToolEntry } from "../../registry/types.js";
import { notDeferrableReason } from "./names.js";
import { SearchIndex } from "./search-index.js";

export interface CatalogSnapshot {
  readonly index: SearchIndex;
  readonly entries: readonly ToolEntry[];
  /** name → position in `entries` / the index. */
  readonly positions: ReadonlyMap<string, number>;
}

export class ToolCatalog {
  /** Bumped by every registry change event (registration, removal, availability): scopes key on it. */
  version = 0;
  private snapshot: CatalogSnapshot | undefined;

  constructor(private readonly registry: ToolRegistry) {
    registry.onChange(() => {
      this.version++;
      this.snapshot = undefined;
    });
  }

  current(): CatalogSnapshot {
    if (this.snapshot !== undefined) return this.snapshot;
    const entries = this.registry.listTools().filter((entry) => notDeferrableReason(entry, (name) => this.registry.isAgentLoopTool(name)) === undefined);
    const index = new SearchIndex(
      entries.map((entry) => ({
        name: entry.name,
        description: entry.schema.description ?? entry.description,
        parameterNames: Object.keys(propertiesOf(entry.schema.parameters)),
      })),
    );
    const positions = new Map(entries.map((entry, i) => [entry.name, i] as const));
    this.snapshot = { index, entries, positions };
    return this.snapshot;
  }
}

const catalogs = new WeakMap<ToolRegistry, ToolCatalog>();

/** The registry's catalog (one listener per registry, however many sessions search it). */
export function catalogFor(registry: ToolRegistry): ToolCatalog {
  let catalog = catalogs.get(registry);
  if (catalog === undefined) catalogs.set(registry, (catalog = new ToolCatalog(registry)));
  return catalog;
}

export function propertiesOf(parameters: unknown): Record<string, unknown> {
  if (parameters === null || typeof parameters !== "object") return {};
  const properties = (parameters as { properties?: unknown }).properties;
  return properties !== null && typeof properties === "object" && !Array.isArray(properties) ? (properties as Record<string, unknown>) : {};
}
