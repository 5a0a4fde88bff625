/**
 * Whether a registration may take a name: the rules `ToolRegistry.register` applies before it stores a
 * tool. A refusal is the message logged (or given to the caller's `onRefused`); `undefined` lets it in.
 *
 * - Plugins and MCP servers may not take a tool search bridge name (builtin-names.ts).
 * - A plugin replaces a built-in only with `override: true` and the operator's opt-in
 *   (`plugins.entries.<id>.allow_tool_override`).
 * - A tool of another toolset is shadowed only with `override: true`.
 */
import { BRIDGE_TOOL_NAMES } from "./builtin-names.js";
import type { ToolEntry } from "./types.js";

export function registrationRefusal(
  existing: ToolEntry | undefined,
  entry: ToolEntry,
  override: boolean,
  /** Whether the operator let this plugin override built-ins (asked only when it matters). */
  pluginOverrideAllowed: () => boolean,
): string | undefined {
  if ((entry.source.kind === "plugin" || entry.source.kind === "mcp") && BRIDGE_TOOL_NAMES.has(entry.name)) {
    const from = entry.source.kind === "plugin" ? `plugin "${entry.source.id}"` : `MCP server "${entry.source.server}"`;
    return `Tool "${entry.name}" from ${from} takes a name reserved for tool search (tool_search, tool_describe, tool_call); registration rejected`;
  }
  if (existing === undefined) return undefined;
  if (entry.source.kind === "plugin" && existing.source.kind === "builtin") {
    const id = entry.source.id;
    if (!override) {
      return `Plugin "${id}" tried to replace built-in tool "${entry.name}" without override: true; registration rejected`;
    }
    if (!pluginOverrideAllowed()) {
      return `Plugin "${id}" may not override built-in tool "${entry.name}": the operator must set plugins.entries.${id}.allow_tool_override: true in config.yaml; registration rejected`;
    }
    return undefined;
  }
  if (existing.toolset !== entry.toolset && !override) {
    return `Tool "${entry.name}" of toolset "${entry.toolset}" would shadow the tool of the same name in toolset "${existing.toolset}"; registration rejected (pass override: true to replace it)`;
  }
  return undefined;
}
