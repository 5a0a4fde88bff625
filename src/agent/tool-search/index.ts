/** Tool search: deferring MCP and plugin tools behind `tool_search` / `tool_describe` / `tool_call` (docs/tool-search.md). */

export { planToolDefinitions, estimateTokens, type PlanToolDefinitionsOptions, type ToolDefinitionsPlan, type DeferredTool } from "./plan.js";
export { ToolSearchBridge, ToolSearchState, REPEAT_HINT, MATCH_DESCRIPTION_CHARS, type UnwrappedCall } from "./bridge.js";
export { executeToolCallsWithToolSearch } from "./execute.js";
export {
  resolveToolSearchConfig,
  parseToolSearchMode,
  TOOL_SEARCH_DEFAULTS,
  UNKNOWN_CONTEXT_CUTOFF_TOKENS,
  type ToolSearchConfig,
  type ToolSearchMode,
} from "./config.js";
export { BRIDGE_TOOL_NAMES, isBridgeToolName, TOOL_CALL_NAME, TOOL_DESCRIBE_NAME, TOOL_SEARCH_NAME } from "./names.js";
export { bridgeToolDefinitions } from "./bridge-schemas.js";
