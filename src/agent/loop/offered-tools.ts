/**
 * The tools a run offers the model: `getToolDefinitions` for the run's toolsets (OpenAI format,
 * sorted by name, schemas patched), minus agent-loop tools the run has no handler for (every call
 * would fail). The names become the calls' `allowedTools`, so a model cannot reach a registered
 * tool outside the selection by naming it.
 */

import { getToolDefinitions } from "../../definitions/get-tool-definitions.js";
import type { ToolRegistry } from "../../registry/tool-registry.js";
import type { OpenAIToolDefinition } from "../../registry/types.js";
import type { AgentLoopHandlers } from "../types.js";

export interface OfferedTools {
  definitions: OpenAIToolDefinition[];
  names: ReadonlySet<string>;
}

export function offeredTools(
  registry: ToolRegistry,
  selection: { toolsets: readonly string[] | undefined; disabledToolsets: readonly string[] | undefined },
  handlers: AgentLoopHandlers | undefined,
): OfferedTools {
  const definitions = getToolDefinitions({ registry, enabledToolsets: selection.toolsets, disabledToolsets: selection.disabledToolsets, quiet: true }).filter((definition) => {
    const name = definition.function.name;
    return !registry.isAgentLoopTool(name) || typeof (handlers as Record<string, unknown> | undefined)?.[name] === "function";
  });
  return { definitions, names: new Set(definitions.map((d) => d.function.name)) };
}
