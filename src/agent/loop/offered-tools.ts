/**
 * The tools a run offers the model: `planToolDefinitions` for the run's toolsets (OpenAI format,
 * schemas patched; with tool search active, the visible tools and the three bridge tools, the MCP and
 * plugin tools deferred behind them), minus agent-loop tools the run has no handler for (every call
 * would fail). Planned once per run, so every request carries the same tool list (the provider's
 * prefix cache holds). `allowedTools` is every call's reach: what was sent, plus what the bridge may
 * reach, so a model cannot call a registered tool outside the selection by naming it.
 */

import { planToolDefinitions } from "../tool-search/plan.js";
import type { ToolSearchBridge } from "../tool-search/bridge.js";
import type { ToolRegistry } from "../../registry/tool-registry.js";
import type { OpenAIToolDefinition } from "../../registry/types.js";
import type { AgentLoopHandlers } from "../types.js";

export interface OfferedTools {
  definitions: OpenAIToolDefinition[];
  /** The names sent to the model. */
  names: ReadonlySet<string>;
  /** What calls may reach: the names sent, and with tool search the deferred tools. */
  allowedTools: ReadonlySet<string>;
  /** Answers `tool_search` / `tool_describe` and unwraps `tool_call` when tool search is active. */
  bridge: ToolSearchBridge | undefined;
}

export function offeredTools(
  registry: ToolRegistry,
  selection: { toolsets: readonly string[] | undefined; disabledToolsets: readonly string[] | undefined },
  handlers: AgentLoopHandlers | undefined,
  search: { toolSearch?: unknown; contextTokens?: number | undefined } = {},
): OfferedTools {
  const plan = planToolDefinitions({
    registry,
    enabledToolsets: selection.toolsets,
    disabledToolsets: selection.disabledToolsets,
    agentLoop: handlers ?? {},
    toolSearch: search.toolSearch,
    contextTokens: search.contextTokens,
    quiet: true,
  });
  const names = new Set(plan.definitions.map((d) => d.function.name));
  return { definitions: plan.definitions, names, allowedTools: plan.bridge === undefined ? names : plan.allowedTools, bridge: plan.bridge };
}
