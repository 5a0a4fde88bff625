/**
 * The names an MCP server's tools get in the registry.
 *
 * `mcp__<server>__<tool>`, each part with every character outside `[A-Za-z0-9_]` replaced by `_`
 * (hermes `mcp_prefixed_tool_name`; the Claude Code / Codex / opencode convention). Providers accept
 * tool names of at most 64 characters (`^[a-zA-Z0-9_-]{1,64}$`, the registry's rule): a longer name is
 * shortened deterministically to its first 55 characters, `_`, and 8 hex digits of the SHA-256 of the
 * full (sanitised, unshortened) name, so it stays the same across restarts and two long names that
 * differ only after character 55 still differ. Hashing the sanitised name rather than the raw parts
 * keeps shortened names consistent with short ones: `foo-bar` and `foo_bar` collide either way, and the
 * registration refuses the second (a collision, never a silent merge). hermes has no such guard.
 */
import { createHash } from "node:crypto";

/** Longest tool name every provider accepts. */
export const MCP_TOOL_NAME_MAX = 64;

const HASH_HEX_CHARS = 8;

/** `name` with each character (code point) outside `[A-Za-z0-9_]` replaced by `_`. */
export function sanitizeNamePart(part: string): string {
  return part.replace(/[^A-Za-z0-9_]/gu, "_");
}

export interface McpToolName {
  /** The registry name, at most `MCP_TOOL_NAME_MAX` characters. */
  name: string;
  /** True when the full name was longer and `name` is its shortened form (report the mapping). */
  shortened: boolean;
}

/** `mcp__<server>__<tool>`, sanitised, shortened to 64 characters when longer (see the module comment). */
export function mcpToolName(server: string, tool: string): McpToolName {
  const full = `mcp__${sanitizeNamePart(server)}__${sanitizeNamePart(tool)}`;
  if (full.length <= MCP_TOOL_NAME_MAX) return { name: full, shortened: false };
  const hash = createHash("sha256").update(full).digest("hex").slice(0, HASH_HEX_CHARS);
  return { name: `${full.slice(0, MCP_TOOL_NAME_MAX - HASH_HEX_CHARS - 1)}_${hash}`, shortened: true };
}

/**
 * Toolset `mcp-<server>`. The server name is kept as configured where it is made of letters,
 * digits, `_`, `.` and `-` (every real name), so the toolset reads like the config key; other
 * characters (spaces, commas, which would split a `--toolsets a,b` list) become `_`.
 */
export function mcpToolsetName(server: string): string {
  return `mcp-${server.replace(/[^A-Za-z0-9_.-]/gu, "_")}`;
}

/** The registry names of a server's generated utility tools (offered when it has resources / prompts). */
export interface McpUtilityToolNames {
  listResources: string;
  readResource: string;
  listPrompts: string;
  getPrompt: string;
}

/** Raw names of the utility tools, as hermes `_build_utility_schemas` names them. */
export const MCP_UTILITY_TOOLS = Object.freeze({
  listResources: "list_resources",
  readResource: "read_resource",
  listPrompts: "list_prompts",
  getPrompt: "get_prompt",
} as const);

export function mcpUtilityToolNames(server: string): McpUtilityToolNames {
  return {
    listResources: mcpToolName(server, MCP_UTILITY_TOOLS.listResources).name,
    readResource: mcpToolName(server, MCP_UTILITY_TOOLS.readResource).name,
    listPrompts: mcpToolName(server, MCP_UTILITY_TOOLS.listPrompts).name,
    getPrompt: mcpToolName(server, MCP_UTILITY_TOOLS.getPrompt).name,
  };
}
