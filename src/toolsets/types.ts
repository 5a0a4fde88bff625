/**
 * Shapes used by toolset resolution. Kept free of behaviour and independent of
 * the registry: the catalog learns about registered tools only through
 * {@link ToolIndex}.
 */

/** A named bundle of tools, possibly including other toolsets. */
export interface ToolsetDefinition {
  name: string;
  description: string;
  /** Tool names this toolset lists directly. */
  tools: readonly string[];
  /** Other toolsets (or legacy names, dynamic toolsets, `all`) whose tools join this one. */
  includes: readonly string[];
  /**
   * Informational: `toolset` lists tools, `composite` mostly bundles other toolsets,
   * `preset` is a platform's default selection (`mibyan-cli`, `mibyan-telegram`, ...).
   * Resolution treats all kinds alike.
   */
  kind?: "toolset" | "composite" | "preset";
}

/**
 * What toolset resolution needs to know about registered tools. Tools register
 * with a toolset name; a toolset that exists only because tools registered under
 * it (an MCP server such as `mcp-github`, a plugin) is a "dynamic" toolset.
 */
export interface ToolIndex {
  /** Every registered tool name. */
  toolNames(): Iterable<string>;
  /** The registered tools whose toolset is `toolset` (empty when none). */
  toolsInToolset(toolset: string): Iterable<string>;
  /** Every toolset name at least one registered tool uses. */
  registeredToolsets(): Iterable<string>;
  /**
   * Optional: a number that changes whenever the answers above may change.
   * When present, the catalog caches results derived from the index per
   * generation; when absent, it asks the index on every call.
   */
  generation?(): number;
}

/** The outcome of resolving one or more toolset names. */
export interface ResolveResult {
  /** Tool names (not filtered by registration or availability: the caller does that). */
  tools: Set<string>;
  /** Requested names that matched no toolset, legacy name or `all`/`*`. */
  unknown: string[];
  /** Human-readable problems: unknown names (with suggestions), include cycles, unknown includes. */
  warnings: string[];
}

/** Toolset selection as `get_tool_definitions()` takes it. */
export interface SelectOptions {
  /** When given (even empty), only these toolsets are selected. `null` counts as not given. */
  enabled?: Iterable<string> | null;
  /** Subtracted from the selection, whether or not `enabled` is given. */
  disabled?: Iterable<string> | null;
}

/** Where a toolset name comes from. */
export type ToolsetOrigin =
  /** One of the catalog's built-in definitions. */
  | "builtin"
  /** Added at run time with `define()` (may shadow a built-in). */
  | "defined"
  /** Exists only because registered tools use it (MCP servers, plugins). */
  | "dynamic"
  /** A legacy `*_tools` name. */
  | "legacy"
  /** `all` or `*`. */
  | "all";
