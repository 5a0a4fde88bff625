/**
 * A session's reach through the bridge: the deferrable tools its selection (enabled/disabled toolsets)
 * holds now, minus the ones it was sent directly. Recomputed only after a registry change, so a query
 * costs the index lookup alone. A tool outside the selection is never searched, described or called.
 */

import { selectTools, type ToolSelection } from "../../definitions/get-tool-definitions.js";
import type { ToolRegistry } from "../../registry/tool-registry.js";
import type { FunctionSchema, ToolEntry } from "../../registry/types.js";
import { catalogFor, type CatalogSnapshot, type ToolCatalog } from "./catalog.js";

export interface ScopeView {
  readonly snapshot: CatalogSnapshot;
  /** Deferred tools the session may reach now: name → its entry and (patched) schema. */
  readonly deferred: ReadonlyMap<string, { entry: ToolEntry; schema: FunctionSchema }>;
  /** Positions in the snapshot's index of `deferred`'s tools. */
  readonly positions: ReadonlySet<number>;
}

export class BridgeScope {
  private readonly catalog: ToolCatalog;
  private cached: { version: number; view: ScopeView } | undefined;

  constructor(
    private readonly registry: ToolRegistry,
    private readonly selection: ToolSelection,
    /** The tools the model was sent directly (never reached as deferred). */
    readonly visible: ReadonlySet<string>,
  ) {
    this.catalog = catalogFor(registry);
  }

  view(): ScopeView {
    const version = this.catalog.version;
    if (this.cached !== undefined && this.cached.version === version) return this.cached.view;
    const snapshot = this.catalog.current();
    const deferred = new Map<string, { entry: ToolEntry; schema: FunctionSchema }>();
    const positions = new Set<number>();
    let selected: ReturnType<typeof selectTools>["tools"] = [];
    try {
      selected = selectTools({ registry: this.registry, ...this.selection, unknownToolsets: "warn" }).tools;
    } catch {
      // A selection that cannot be resolved reaches nothing through the bridge.
    }
    for (const tool of selected) {
      const position = snapshot.positions.get(tool.entry.name);
      if (position === undefined || this.visible.has(tool.entry.name)) continue;
      deferred.set(tool.entry.name, tool);
      positions.add(position);
    }
    const view = { snapshot, deferred, positions };
    this.cached = { version, view };
    return view;
  }

  /** The names a bridged call may run: the visible tools and the deferred ones in scope now. */
  allowedNames(): Set<string> {
    return new Set([...this.visible, ...this.view().deferred.keys()]);
  }
}
