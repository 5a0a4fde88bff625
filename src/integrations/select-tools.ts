/**
 * Which tools an adapter offers, and what the model sees of them: exactly the OpenAI
 * definitions `getToolDefinitions` gives for the same selection (names, descriptions and
 * parameter schemas, patched schemas included), narrowed by `names`, without agent-loop tools
 * the session has no handler for.
 */

import { planToolDefinitions } from "../agent/tool-search/plan.js";
import type { ToolSearchBridge } from "../agent/tool-search/bridge.js";
import { getToolDefinitions } from "../definitions/get-tool-definitions.js";
import { registry as defaultRegistry } from "../registry/singleton.js";
import type { FunctionSchema } from "../registry/types.js";
import type { IntegrationOptions } from "./types.js";

/** One offered tool, framework-neutral. */
export interface IntegrationTool {
  name: string;
  description: string;
  /** The OpenAI `parameters` object, as `getToolDefinitions` gives it (not copied: do not mutate). */
  parameters: FunctionSchema["parameters"];
}

/** `names` named a tool that is not registered at all (a typo), rather than one that is merely unavailable. */
export class IntegrationSelectionError extends Error {
  readonly unknownNames: readonly string[];
  constructor(unknownNames: readonly string[]) {
    super(`no tool is registered under ${unknownNames.map((n) => JSON.stringify(n)).join(", ")} (names option)`);
    this.name = "IntegrationSelectionError";
    this.unknownNames = unknownNames;
  }
}

export function selectIntegrationTools(options: IntegrationOptions = {}): IntegrationTool[] {
  const target = options.registry ?? defaultRegistry;
  const wanted = options.names === undefined ? undefined : new Set(options.names);
  if (wanted !== undefined) {
    const unknown = [...wanted].filter((name) => target.lookup(name) === undefined && !target.isAgentLoopTool(name));
    if (unknown.length > 0) throw new IntegrationSelectionError(unknown);
  }
  const loopHandlers = options.session?.agentLoop;
  const tools: IntegrationTool[] = [];
  for (const definition of getToolDefinitions({
    registry: target,
    enabledToolsets: options.enabledToolsets,
    disabledToolsets: options.disabledToolsets,
  })) {
    const { name, description, parameters } = definition.function;
    if (wanted !== undefined && !wanted.has(name)) continue;
    // Only the loop can run these; offering one without its handler would fail every call.
    if (target.isAgentLoopTool(name) && typeof loopHandlers?.[name] !== "function") continue;
    tools.push({ name, description, parameters });
  }
  return tools;
}

/** What an adapter offers, what its calls may reach, and the tool search bridge when it is active. */
export interface IntegrationToolPlan {
  tools: IntegrationTool[];
  /** The calls' `allowedTools`: the tools offered, and with tool search the deferred ones. */
  allowedTools: ReadonlySet<string>;
  /** Answers `tool_search` / `tool_describe` and unwraps `tool_call`; present when tool search defers tools. */
  bridge: ToolSearchBridge | undefined;
}

export function planIntegrationTools(options: IntegrationOptions = {}): IntegrationToolPlan {
  if (options.toolSearch === undefined || options.toolSearch === false) {
    const tools = selectIntegrationTools(options);
    return { tools, allowedTools: new Set(tools.map((t) => t.name)), bridge: undefined };
  }
  // The bridge searches the toolsets' tools; a names list it would not honour must not look honoured.
  if (options.names !== undefined) throw new TypeError("toolSearch cannot be combined with names: select the tools with enabledToolsets / disabledToolsets");
  const plan = planToolDefinitions({
    registry: options.registry ?? defaultRegistry,
    enabledToolsets: options.enabledToolsets,
    disabledToolsets: options.disabledToolsets,
    agentLoop: options.session?.agentLoop ?? {},
    toolSearch: options.toolSearch,
    contextTokens: options.contextTokens,
  });
  const tools = plan.definitions.map(({ function: { name, description, parameters } }) => ({ name, description, parameters }));
  return plan.bridge === undefined
    ? { tools, allowedTools: new Set(tools.map((t) => t.name)), bridge: undefined }
    : { tools, allowedTools: plan.allowedTools, bridge: plan.bridge };
}
