/**
 * What `tools/list` answers: `getToolDefinitions` for the server's selection (names, descriptions and
 * input schemas exactly as the registry exports them for OpenAI, no conversion), narrowed by the
 * `tools`/`exclude` names, without the agent-loop tools (todo, memory, ...: they need the agent's live
 * state, which a stateless MCP call does not have) unless the server is bound to a stored session that
 * has their handlers, with annotations from annotations.ts.
 */
import type { ToolSearchBridge } from "../../agent/tool-search/bridge.js";
import { isBridgeToolName } from "../../agent/tool-search/names.js";
import { planToolDefinitions } from "../../agent/tool-search/plan.js";
import { getToolDefinitions } from "../../definitions/get-tool-definitions.js";
import type { ToolRegistry } from "../../registry/tool-registry.js";
import type { OpenAIToolDefinition } from "../../registry/types.js";
import { annotationsFor } from "./annotations.js";
import type { McpServedTool } from "./types.js";

export interface ToolSelectionOptions {
  registry: ToolRegistry;
  enabledToolsets?: readonly string[] | undefined;
  disabledToolsets?: readonly string[] | undefined;
  tools?: readonly string[] | undefined;
  exclude?: readonly string[] | undefined;
  /** Agent-loop tools that have a handler here (`McpServerOptions.agentLoop`) are served; the rest are not. */
  agentLoopTools?: ReadonlySet<string> | undefined;
  /** Tool search settings (`McpServerOptions.toolSearch`); undefined or false: every tool listed directly. */
  toolSearch?: unknown;
  contextTokens?: number | undefined;
}

/** How long `names()` reuses its answer within one registry generation. */
const NAMES_TTL_MS = 1_000;

export class ToolLister {
  private cachedNames: { generation: number; at: number; names: ReadonlySet<string>; bridge: ToolSearchBridge | undefined } | undefined;
  private readonly only: ReadonlySet<string> | undefined;
  private readonly exclude: ReadonlySet<string>;

  constructor(private readonly options: ToolSelectionOptions) {
    this.only = options.tools === undefined ? undefined : new Set(options.tools);
    this.exclude = new Set(options.exclude ?? []);
    // A typo in a toolset name fails here, once, rather than serving an empty list.
    this.definitions("error");
  }

  /** The definitions of the tools served now. Later lists only warn about an unknown toolset: an MCP server's toolset may come and go. */
  definitions(unknownToolsets: "error" | "warn" = "warn"): OpenAIToolDefinition[] {
    return this.plan(unknownToolsets).definitions;
  }

  /**
   * What is served now: the definitions, and with tool search the bridge and what it may reach. The
   * `tools`/`exclude` names narrow the deferred tools too, so an excluded tool is no more reachable
   * through `tool_call` than directly.
   */
  plan(unknownToolsets: "error" | "warn" = "warn"): { definitions: OpenAIToolDefinition[]; bridge: ToolSearchBridge | undefined; reach: ReadonlySet<string> } {
    const { registry } = this.options;
    const served = (name: string): boolean => {
      if (this.only !== undefined && !this.only.has(name)) return false;
      if (this.exclude.has(name)) return false;
      return !registry.isAgentLoopTool(name) || this.options.agentLoopTools?.has(name) === true;
    };
    const selection = { registry, enabledToolsets: this.options.enabledToolsets, disabledToolsets: this.options.disabledToolsets, unknownToolsets, quiet: true };
    if (this.options.toolSearch === undefined || this.options.toolSearch === false) {
      const definitions = getToolDefinitions(selection).filter((d) => served(d.function.name));
      return { definitions, bridge: undefined, reach: new Set(definitions.map((d) => d.function.name)) };
    }
    const agentLoop = Object.fromEntries([...(this.options.agentLoopTools ?? [])].map((name) => [name, true]));
    const plan = planToolDefinitions({ ...selection, agentLoop, toolSearch: this.options.toolSearch, contextTokens: this.options.contextTokens });
    const definitions = plan.definitions.filter((d) => isBridgeToolName(d.function.name) || served(d.function.name));
    if (plan.bridge === undefined) return { definitions, bridge: undefined, reach: new Set(definitions.map((d) => d.function.name)) };
    return { definitions, bridge: plan.bridge, reach: new Set([...plan.allowedTools].filter((name) => isBridgeToolName(name) || served(name))) };
  }

  /** Names of the `tools` option that are not registered (for a warning at start). */
  unknownNames(): string[] {
    return [...(this.only ?? []), ...this.exclude].filter((name) => !this.options.registry.has(name));
  }

  list(): McpServedTool[] {
    return this.definitions().map((d) => toServedTool(this.options.registry, d));
  }

  /** Forgets the names kept by `names()` (the registry changed). */
  invalidate(): void {
    this.cachedNames = undefined;
  }

  /**
   * The names served now, for `allowedTools` of each call. Kept for up to a second within one registry
   * generation: listing rebuilds patched schemas (execute_code's), about 30 µs per call with the built-ins.
   * A tool that stops being available in that second is still refused by dispatch's own availability check.
   */
  names(): ReadonlySet<string> {
    const generation = this.options.registry.generation;
    const now = Date.now();
    const cached = this.cachedNames;
    if (cached !== undefined && cached.generation === generation && now - cached.at < NAMES_TTL_MS) return cached.names;
    const { reach: names, bridge } = this.plan();
    this.cachedNames = { generation, at: now, names, bridge };
    return names;
  }

  /** The tool search bridge of the current plan (`names()`' answer), when tool search defers tools. */
  bridge(): ToolSearchBridge | undefined {
    this.names();
    return this.cachedNames?.bridge;
  }
}

export function toServedTool(registry: ToolRegistry, definition: OpenAIToolDefinition): McpServedTool {
  const { name, description, parameters } = definition.function;
  const entry = registry.get(name);
  const annotations = annotationsFor(entry, name);
  // MCP requires an object schema; the registry's always is one (normalize.ts), passed as it is.
  const tool: McpServedTool = { name, description, inputSchema: parameters };
  if (entry?.outputSchema !== undefined) tool.outputSchema = entry.outputSchema;
  if (annotations !== undefined) tool.annotations = annotations;
  return tool;
}
