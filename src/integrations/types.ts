/**
 * The options every framework adapter takes (`toAiSdkTools`, ...): which tools to offer, the
 * same way `getToolDefinitions` selects them, and the session the calls belong to.
 */

import type { AgentLoopHandler } from "../dispatch/agent-loop.js";
import type { ToolRegistry } from "../registry/tool-registry.js";

/** The session an adapter's calls run in: approvals, processes and the task's shell state key on it. */
export interface IntegrationSession {
  /** Session key (approvals, yolo, background processes). Default `"default"`, shared with every other caller. */
  id?: string | undefined;
  /** Task key (working directory, exported variables of the terminal). Default `"default"`. */
  taskId?: string | undefined;
  /**
   * The agent loop's handlers for its own tools (`todo`, `memory`, `session_search`, `delegate_task`).
   * Those tools are offered only when a handler for them is given here: the registry cannot run them.
   */
  agentLoop?: Readonly<Record<string, AgentLoopHandler>> | undefined;
  /** The embedder's session object, handed to handlers as `ctx.session`. */
  data?: unknown;
}

export interface IntegrationOptions {
  /** Default: the shared registry. */
  registry?: ToolRegistry | undefined;
  /** Only tools of these toolsets (as in `getToolDefinitions`; an unknown name throws `UnknownToolsetError`). */
  enabledToolsets?: readonly string[] | undefined;
  /** Tools of these toolsets are removed. */
  disabledToolsets?: readonly string[] | undefined;
  /**
   * Only these tools, out of the selection. A name no tool is registered under throws
   * `IntegrationSelectionError`; a registered tool that is unavailable (its check fails) or outside
   * the toolsets is left out, as `getToolDefinitions` leaves it out.
   */
  names?: readonly string[] | undefined;
  session?: IntegrationSession | undefined;
  /**
   * Tool search (docs/tool-search.md): config.yaml's `tool_search` section, `{ enabled: "auto" | "on" |
   * "off", threshold_pct? }`, `true` (auto) or `false`. When it defers the selection's MCP and plugin tools,
   * the framework gets `tool_search` / `tool_describe` / `tool_call` in their place, and a bridged call runs
   * the real tool (its hooks, approvals and validation). Default: off (every selected tool is given
   * directly; the framework may have its own way to defer tools). Not combined with `names`.
   */
  toolSearch?: unknown;
  /** The model's context window in tokens, for tool search's share. */
  contextTokens?: number | undefined;
}
