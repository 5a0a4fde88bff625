import type { ToolSource } from "./types.js";

/** `built-in`, `plugin "x"`, `MCP server "y"`, `user code`: how logs name where a tool came from. */
export function describeSource(source: ToolSource): string {
  switch (source.kind) {
    case "builtin":
      return "built-in";
    case "plugin":
      return `plugin "${source.id}"`;
    case "mcp":
      return `MCP server "${source.server}"`;
    default:
      return "user code";
  }
}

export function sameSource(a: ToolSource, b: ToolSource): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === "plugin") return a.id === (b as typeof a).id;
  if (a.kind === "mcp") return a.server === (b as typeof a).server;
  return true;
}
