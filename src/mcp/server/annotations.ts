/**
 * MCP tool annotations (hints a client uses to decide how much to warn) as data: which built-in tools
 * only read, which change or destroy things, which reach outside the machine. A tool named in no row
 * gets none, which MCP reads as "may be destructive" — the safe default for tools we know nothing of.
 * Hints are hints: the approval gate, not a client's reading of them, is what stops a command.
 */
import type { ToolEntry } from "../../registry/types.js";
import type { McpToolAnnotations } from "./types.js";

/** Reads only: the file readers and searches. */
const READ_ONLY = new Set(["read_file", "search_files", "session_search", "skills_list", "skill_view", "web_search", "web_extract", "vision_analyze"]);

/** Runs commands or changes files: the shell, the process manager, code execution, the writers. */
const DESTRUCTIVE = new Set(["terminal", "process", "execute_code", "write_file", "patch", "skill_manage"]);

/** Talks to the world beyond this machine: the web tools and messaging (MCP-proxied tools by their source). */
const OPEN_WORLD = new Set(["web_search", "web_extract", "send_message", "image_generate", "text_to_speech", "vision_analyze"]);

export function annotationsFor(entry: ToolEntry | undefined, name: string): McpToolAnnotations | undefined {
  const annotations: McpToolAnnotations = {};
  // Only a built-in of that name earns the hint: a plugin tool called read_file could do anything.
  const builtin = entry === undefined || entry.source.kind === "builtin";
  if (builtin && READ_ONLY.has(name)) {
    annotations.readOnlyHint = true;
    annotations.destructiveHint = false;
  } else if (builtin && DESTRUCTIVE.has(name)) {
    annotations.readOnlyHint = false;
    annotations.destructiveHint = true;
  }
  if ((builtin && OPEN_WORLD.has(name)) || entry?.source.kind === "mcp") annotations.openWorldHint = true;
  return Object.keys(annotations).length > 0 ? annotations : undefined;
}
