/**
 * Which tools may be deferred behind the bridge, and the bridge's own names.
 *
 * Deferrable: a registered tool from an MCP server or a plugin whose name is not a core name. Built-in
 * tools, tools registered in code, agent-loop tools and any tool holding a built-in's name (a plugin
 * allowed to override `terminal`, say) are always sent directly: the model must find the core tools
 * where it expects them, and a deferrable tool can never shadow one.
 */

import { BRIDGE_TOOL_NAMES, BUILTIN_TOOL_NAMES } from "../../registry/builtin-names.js";
import type { ToolEntry } from "../../registry/types.js";

export const TOOL_SEARCH_NAME = "tool_search";
export const TOOL_DESCRIBE_NAME = "tool_describe";
export const TOOL_CALL_NAME = "tool_call";

/** Reserved: the runtime answers these itself while tool search is active; a tool of that name registered in code is withheld (plugins and MCP servers are refused one). */
export { BRIDGE_TOOL_NAMES };

export function isBridgeToolName(name: string): boolean {
  return BRIDGE_TOOL_NAMES.has(name);
}

/** Why `entry` is never deferred, or `undefined` when it may be. */
export function notDeferrableReason(entry: ToolEntry, isAgentLoopTool: (name: string) => boolean): string | undefined {
  if (BRIDGE_TOOL_NAMES.has(entry.name)) return "reserved bridge name";
  if (BUILTIN_TOOL_NAMES.has(entry.name)) return "core tool";
  if (isAgentLoopTool(entry.name)) return "agent-loop tool";
  if (entry.source.kind !== "mcp" && entry.source.kind !== "plugin") return entry.source.kind === "builtin" ? "core tool" : "registered in code";
  return undefined;
}

/** `mcp` / `plugin` and the server or plugin id, as `tool_search` reports where a match comes from. */
export function sourceOf(entry: ToolEntry): { source: "mcp" | "plugin" | "other"; sourceName: string } {
  if (entry.source.kind === "mcp") return { source: "mcp", sourceName: entry.source.server };
  if (entry.source.kind === "plugin") return { source: "plugin", sourceName: entry.source.id };
  return { source: "other", sourceName: entry.toolset };
}
