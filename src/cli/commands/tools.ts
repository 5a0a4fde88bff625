import path from "node:path";
import type { Runtime } from "../boot.js";
import { AGENT_LOOP_TOOLS } from "../../dispatch/agent-loop.js";
import { describeUnregistered, unregisteredTools } from "../../toolsets/unregistered-tools.js";

export interface ToolStatus {
  name: string;
  emoji: string;
  available: boolean;
  reason: string | null;
}

export interface ToolsetStatus {
  name: string;
  description: string;
  available: boolean;
  tools: ToolStatus[];
  /** Tools the toolset names that are not registered (agent-loop tools included). */
  unregistered: string[];
  /** Why a toolset has no registered tools ("no tools registered: web_search, ... are not built in; ..."), else null. */
  note: string | null;
}

/**
 * Every known toolset (built-in, defined, dynamic; not the composites and presets, which only bundle
 * toolsets), with each registered tool's availability and, when unavailable, why. A toolset with no
 * registered tools is listed too, with a note saying which tools it names and that they are not built
 * in or belong to the agent loop: the Mibyan document's names (`web`, `memory`, ...) are reserved here,
 * and selecting one must not look like it worked.
 */
export function collectToolStatus({ registry, discovery }: Runtime): ToolsetStatus[] {
  const byToolset = new Map<string, ToolStatus[]>();
  const add = (toolset: string, status: ToolStatus): void => {
    const list = byToolset.get(toolset) ?? [];
    list.push(status);
    byToolset.set(toolset, list);
  };
  const registeredIn = new Map<string, string[]>();
  for (const entry of registry.listTools()) {
    registeredIn.set(entry.toolset, [...(registeredIn.get(entry.toolset) ?? []), entry.name]);
    const availability = registry.availabilityOf(entry);
    add(entry.toolset, { name: entry.name, emoji: entry.emoji, available: availability.available, reason: availability.reason ?? null });
  }
  for (const failure of discovery.failed) {
    const tools = failure.tools.length > 0 ? failure.tools : [{ name: path.basename(failure.file).replace(/\.[^.]+$/, "") }];
    for (const tool of tools) {
      const name = tool.name ?? path.basename(failure.file);
      if (registry.has(name)) continue;
      add(tool.toolset ?? name, { name, emoji: "🔧", available: false, reason: `missing dependency: ${failure.error}` });
    }
  }
  const catalog = registry.toolsets;
  const names = new Set(byToolset.keys());
  for (const name of catalog.names()) {
    const kind = catalog.get(name)?.kind;
    if (kind !== "composite" && kind !== "preset") names.add(name);
  }
  const isRegistered = (tool: string): boolean => registry.has(tool);
  // A toolset that includes nothing has its declared tools plus those registered under it; taking
  // them directly skips the catalog's cold first resolution (about 2 ms of `mibyan tools`' start-up).
  const toolsOf = (name: string): Iterable<string> => {
    const def = catalog.get(name);
    if (def === undefined || def.includes.length > 0) return catalog.resolve(name).tools;
    return new Set([...def.tools, ...(registeredIn.get(name) ?? [])]);
  };
  return [...names].sort().map((name) => {
    // Code-unit order, as for the toolsets: `localeCompare` loads ICU's collation data, 15 ms of `mibyan tools`' start-up.
    const tools = (byToolset.get(name) ?? []).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    // A toolset is available when any of its tools is (registry.isToolsetAvailable's rule; a module that failed to load counts as an unavailable tool).
    const available = tools.some((tool) => tool.available);
    const registration = unregisteredTools(name, toolsOf(name), isRegistered, AGENT_LOOP_TOOLS);
    // A tool whose module failed to load is listed (unavailable) though not registered: it is not "missing".
    const listed = new Set(tools.map((tool) => tool.name));
    const missing = registration.missing.filter((tool) => !listed.has(tool));
    const agentLoop = registration.agentLoop.filter((tool) => !listed.has(tool));
    const note = tools.length === 0 ? describeUnregistered({ missing, agentLoop }) : null;
    return { name, description: registry.toolsets.get(name)?.description ?? "", available, tools, unregistered: [...missing, ...agentLoop], note };
  });
}

export function renderToolStatus(toolsets: readonly ToolsetStatus[]): string {
  const lines: string[] = [];
  for (const toolset of toolsets) {
    const mark = toolset.available ? "✓" : toolset.note !== null ? "-" : "✗";
    lines.push(`${mark} ${toolset.name}${toolset.description ? ` — ${toolset.description}` : ""}`);
    for (const tool of toolset.tools) {
      const state = tool.available ? "available" : `unavailable: ${tool.reason}`;
      lines.push(`    ${tool.emoji} ${tool.name.padEnd(24)} ${state}`);
    }
    if (toolset.note !== null) lines.push(`    ${toolset.note}`);
    else if (toolset.unregistered.length > 0) lines.push(`    also named, not registered: ${toolset.unregistered.join(", ")}`);
  }
  if (!toolsets.some((toolset) => toolset.tools.length > 0)) lines.push("No tools are registered.");
  return `${lines.join("\n")}\n`;
}

/** The local backend's OS sandbox, as `mibyan tools` reports it (docs/sandbox.md). */
export interface SandboxReport {
  mode: string;
  network: boolean | null;
  writableRoots: string[];
  active: boolean;
  /** Why a configured sandbox is not active (commands are then refused), or why the setting is invalid. */
  reason: string | null;
  version: string | null;
}

/** Whether the configured sandbox is active here, and why not. Never throws: an invalid setting is reported as such. */
export async function collectSandboxStatus(): Promise<SandboxReport> {
  const [{ configuredSandboxPolicy }, { sandboxStatus }] = await Promise.all([import("../../sandbox/policy.js"), import("../../sandbox/command-sandbox.js")]);
  try {
    const status = sandboxStatus(configuredSandboxPolicy());
    return {
      mode: status.mode,
      network: status.mode === "off" ? null : status.network,
      writableRoots: status.writableRoots,
      active: status.active,
      reason: status.reason ?? null,
      version: status.version ?? null,
    };
  } catch (err) {
    return { mode: "invalid", network: null, writableRoots: [], active: false, reason: (err as Error).message, version: null };
  }
}

export function renderSandboxStatus(report: SandboxReport): string {
  if (report.mode === "off") return "Local sandbox: off (terminal.local.sandbox; see docs/sandbox.md)\n";
  const refused = "local commands and execute_code are refused until this is fixed";
  if (report.mode === "invalid") return `✗ Local sandbox: invalid setting: ${report.reason}; ${refused}\n`;
  const what = `${report.mode}, network ${report.network ? "on" : "off"}${report.writableRoots.length > 0 ? `, extra writable: ${report.writableRoots.join(", ")}` : ""}`;
  if (report.active) return `✓ Local sandbox: active (${what}; ${report.version ?? "bubblewrap"})\n`;
  return `✗ Local sandbox: NOT active (configured: ${what}): ${report.reason}; ${refused}\n`;
}

/** `mibyan tools --plan`: what a model would be sent directly, what tool search defers and why (docs/tool-search.md). */
export interface ToolPlanReport {
  activated: boolean;
  mode: string;
  reason: string;
  contextTokens: number | null;
  thresholdTokens: number | null;
  deferrableTokens: number;
  visible: string[];
  deferred: { name: string; reason: string }[];
  withheld: { name: string; reason: string }[];
}

/** Loads the tool-search code only here: plain `mibyan tools` never pays for it. */
export async function collectToolPlan({ registry, config }: Runtime, contextTokens: number | undefined): Promise<ToolPlanReport> {
  const { planToolDefinitions } = await import("../../agent/tool-search/plan.js");
  const selection = config.config.toolsets;
  const plan = planToolDefinitions({
    registry,
    enabledToolsets: selection.enabled,
    disabledToolsets: selection.disabled,
    // A configured MCP server that is down keeps its toolset names: warn, as `definitions` does, not fail.
    unknownToolsets: "warn",
    quiet: true,
    toolSearch: config.config.toolSearch,
    contextTokens,
  });
  return {
    activated: plan.activated,
    mode: plan.mode,
    reason: plan.reason,
    contextTokens: plan.contextTokens ?? null,
    thresholdTokens: plan.thresholdTokens ?? null,
    deferrableTokens: plan.deferrableTokens,
    visible: plan.definitions.map((d) => d.function.name),
    deferred: plan.deferred,
    withheld: plan.withheld,
  };
}

export function renderToolPlan(report: ToolPlanReport): string {
  const lines: string[] = [];
  const count = (n: number): string => n.toLocaleString("en-US");
  lines.push(`Tool search: ${report.activated ? "active" : "not active"} (mode ${report.mode}): ${report.reason}`);
  const context = report.contextTokens === null ? "unknown context" : `context ${count(report.contextTokens)} tokens`;
  const threshold = report.thresholdTokens === null ? "no threshold" : `threshold ${count(report.thresholdTokens)} tokens`;
  lines.push(`  ${context}; ${threshold}; MCP and plugin schemas ~${count(report.deferrableTokens)} tokens`);
  lines.push(`Visible (${report.visible.length}): ${report.visible.length > 0 ? report.visible.join(", ") : "none"}`);
  lines.push(`Deferred (${report.deferred.length})${report.deferred.length > 0 ? ":" : ""}`);
  for (const tool of report.deferred) lines.push(`    ${tool.name.padEnd(32)} ${tool.reason.split(";")[0]}`);
  for (const tool of report.withheld) lines.push(`Withheld: ${tool.name}: ${tool.reason}`);
  return `${lines.join("\n")}\n`;
}
