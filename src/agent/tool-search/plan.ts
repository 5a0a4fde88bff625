/**
 * The definitions to send: `planToolDefinitions` decides, at each assembly, whether the session's MCP and
 * plugin tools are sent directly or deferred behind `tool_search` / `tool_describe` / `tool_call`.
 *
 * Deferred when tool search is `on` and one tool is deferrable, or `auto` and the deferrable tools'
 * definitions take at least `threshold_pct` of the context window (tokens estimated as ceil(chars / 4) of
 * their compact JSON; an unknown window uses a fixed 20,000-token cutoff). Otherwise the definitions are
 * exactly what `getToolDefinitions` gives (byte-identical), and there is no bridge.
 */

import { getToolDefinitions, type ToolSelection } from "../../definitions/get-tool-definitions.js";
import type { ToolRegistry } from "../../registry/tool-registry.js";
import { registry as defaultRegistry } from "../../registry/singleton.js";
import { describeSource } from "../../registry/source.js";
import type { OpenAIToolDefinition, ToolEntry } from "../../registry/types.js";
import { ToolSearchBridge, ToolSearchState } from "./bridge.js";
import { bridgeToolDefinitions } from "./bridge-schemas.js";
import { resolveToolSearchConfig, UNKNOWN_CONTEXT_CUTOFF_TOKENS, type ToolSearchConfig } from "./config.js";
import { isBridgeToolName, notDeferrableReason } from "./names.js";
import { BridgeScope } from "./scope.js";

export interface PlanToolDefinitionsOptions extends ToolSelection {
  registry?: ToolRegistry | undefined;
  /**
   * The settings: config.yaml's `toolSearch` section, a `ToolSearchConfig`, `true` (auto), `false` (off)
   * or a raw `{enabled, threshold_pct, ...}` mapping (read leniently, never throws). Default: auto.
   */
  toolSearch?: unknown;
  /** The model's context window in tokens; overrides the settings' `contextTokens`. */
  contextTokens?: number | undefined;
  /**
   * The agent loop's handlers: an agent-loop tool without one is left out (every call would fail), as the
   * loop's own offered tools do. Omit it to keep the registry's listing as it is.
   */
  agentLoop?: Readonly<Record<string, unknown>> | undefined;
  /** Carried across the plans of one session (the bridge's repeat hint); a fresh one by default. */
  state?: ToolSearchState | undefined;
  /** See `getToolDefinitions`' `unknownToolsets` (default `"error"`). */
  unknownToolsets?: "error" | "warn" | undefined;
  quiet?: boolean | undefined;
}

export interface DeferredTool {
  name: string;
  reason: string;
}

export interface ToolDefinitionsPlan {
  /** What to send the model: the visible tools in their original order, then the three bridges when active. */
  definitions: OpenAIToolDefinition[];
  /** Tools reached only through the bridge, with why. Empty when tool search is not active. */
  deferred: DeferredTool[];
  /** Registered tools holding a bridge's name, withheld while the bridge is active (never reachable). */
  withheld: DeferredTool[];
  activated: boolean;
  mode: ToolSearchConfig["enabled"];
  /** Why tool search is active or not, in one sentence. */
  reason: string;
  visibleCount: number;
  /** Tools that could be deferred, and their estimated tokens (whether deferred or not). */
  deferrableCount: number;
  deferrableTokens: number;
  /** The token count at which auto mode defers (`undefined` when the mode is on or off). */
  thresholdTokens: number | undefined;
  contextTokens: number | undefined;
  config: ToolSearchConfig;
  /** The names calls may reach at plan time (visible, bridges, deferred): pass as `allowedTools`, or none. */
  allowedTools: ReadonlySet<string>;
  /** Answers the bridge tools; present when active. */
  bridge: ToolSearchBridge | undefined;
}

/** ceil(chars / 4) of the compact JSON: the Python original's estimate, good enough to compare against a share. */
export function estimateTokens(definitions: readonly OpenAIToolDefinition[]): number {
  let chars = 0;
  for (const definition of definitions) {
    // A registered tool's definition is one frozen object, reused by every listing: measured once.
    let length = Object.isFrozen(definition) ? definitionChars.get(definition) : undefined;
    if (length === undefined) {
      length = JSON.stringify(definition).length;
      if (Object.isFrozen(definition)) definitionChars.set(definition, length);
    }
    chars += length;
  }
  return Math.ceil(chars / 4);
}

const definitionChars = new WeakMap<OpenAIToolDefinition, number>();

export function planToolDefinitions(options: PlanToolDefinitionsOptions = {}): ToolDefinitionsPlan {
  const registry = options.registry ?? defaultRegistry;
  const config = resolveToolSearchConfig(options.toolSearch);
  const contextTokens = positive(options.contextTokens) ?? config.contextTokens;
  const selection: ToolSelection = { enabledToolsets: options.enabledToolsets, disabledToolsets: options.disabledToolsets };
  const all = getToolDefinitions({ registry, ...selection, unknownToolsets: options.unknownToolsets, quiet: options.quiet }).filter((definition) => {
    const name = definition.function.name;
    return options.agentLoop === undefined || !registry.isAgentLoopTool(name) || typeof options.agentLoop[name] === "function";
  });
  // One pass: each definition is deferrable, bridge-named (withheld when active) or stays visible.
  const deferrable: OpenAIToolDefinition[] = [];
  const deferrableEntries: ToolEntry[] = [];
  const bridgeNamed: OpenAIToolDefinition[] = [];
  const keep: OpenAIToolDefinition[] = [];
  const isAgentLoopTool = (name: string): boolean => registry.isAgentLoopTool(name);
  for (const definition of all) {
    const entry = registry.get(definition.function.name);
    if (entry !== undefined && notDeferrableReason(entry, isAgentLoopTool) === undefined) {
      deferrable.push(definition);
      deferrableEntries.push(entry);
    } else if (entry !== undefined && isBridgeToolName(entry.name) && entry.source.kind !== "builtin") bridgeNamed.push(definition);
    else keep.push(definition);
  }
  const deferrableTokens = estimateTokens(deferrable);
  const thresholdTokens =
    config.enabled !== "auto" ? undefined : contextTokens === undefined ? UNKNOWN_CONTEXT_CUTOFF_TOKENS : Math.floor((contextTokens * config.thresholdPct) / 100);
  const { activated, reason } = decide(config, deferrable.length, deferrableTokens, thresholdTokens, contextTokens);
  const base = {
    mode: config.enabled,
    reason,
    deferrableCount: deferrable.length,
    deferrableTokens,
    thresholdTokens,
    contextTokens,
    config,
  };
  if (!activated) {
    return {
      ...base,
      definitions: all,
      deferred: [],
      withheld: [],
      activated: false,
      visibleCount: all.length,
      allowedTools: new Set(all.map((d) => d.function.name)),
      bridge: undefined,
    };
  }
  const visible = keep;
  const sources = new Map<string, string>();
  const deferred = deferrableEntries.map((entry) => {
    const key = entry.source.kind === "mcp" ? `mcp:${entry.source.server}` : entry.source.kind === "plugin" ? `plugin:${entry.source.id}` : entry.source.kind;
    let why = sources.get(key);
    if (why === undefined) sources.set(key, (why = `${describeSource(entry.source)} tool; ${reason}`));
    return { name: entry.name, reason: why };
  });
  const withheld = bridgeNamed.map((definition) => ({
    name: definition.function.name,
    reason: "its name is reserved for the tool-search bridge, which is active",
  }));
  const visibleNames = new Set(visible.map((d) => d.function.name));
  const bridge = new ToolSearchBridge(registry, new BridgeScope(registry, selection, visibleNames), config, options.state);
  const definitions = [...visible, ...bridgeToolDefinitions(deferred.length, config.maxSearchLimit)];
  const allowedTools = new Set([...definitions.map((d) => d.function.name), ...deferred.map((d) => d.name)]);
  return { ...base, definitions, deferred, withheld, activated: true, visibleCount: visible.length, allowedTools, bridge };
}

function decide(
  config: ToolSearchConfig,
  deferrableCount: number,
  tokens: number,
  threshold: number | undefined,
  context: number | undefined,
): { activated: boolean; reason: string } {
  if (config.enabled === "off") return { activated: false, reason: "tool search is off (tool_search.enabled: off)" };
  if (deferrableCount === 0) return { activated: false, reason: "no MCP or plugin tools in this selection to defer" };
  if (config.enabled === "on") return { activated: true, reason: "tool search is on (tool_search.enabled: on)" };
  const limit = threshold!;
  const of =
    context === undefined ? `the ${fmt(limit)}-token cutoff used when the context size is unknown` : `${config.thresholdPct}% of a ${fmt(context)}-token context (${fmt(limit)})`;
  return tokens >= limit
    ? { activated: true, reason: `MCP and plugin tool schemas take ~${fmt(tokens)} tokens, at least ${of}` }
    : { activated: false, reason: `MCP and plugin tool schemas take ~${fmt(tokens)} tokens, under ${of}` };
}

const fmt = (n: number): string => n.toLocaleString("en-US");

function positive(value: number | undefined): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined;
}

