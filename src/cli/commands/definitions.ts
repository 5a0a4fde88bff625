import { InvalidArgumentError } from "commander";
import type { Runtime } from "../boot.js";
import { getToolDefinitions } from "../../definitions/get-tool-definitions.js";
import type { ExportFormat } from "../../adapters/index.js";
import { configValueError } from "../../config/load-config.js";
import { describeUnknownToolset, findUnknownToolsets, type UnknownToolset } from "../../toolsets/unknown-toolset.js";
import { describeUnregistered, unregisteredTools } from "../../toolsets/unregistered-tools.js";
import { AGENT_LOOP_TOOLS } from "../../dispatch/agent-loop.js";
import { offlineMcpToolsets } from "./mcp.js";

export interface DefinitionsCommandOptions {
  enable?: string[];
  disable?: string[];
  format: ExportFormat;
}

/**
 * `mibyan definitions`: the tool definitions a model would receive, as JSON on stdout.
 * A toolset name that matches nothing is a usage error (`--enable`/`--disable`: exit 2, via
 * commander's `InvalidArgumentError`) or a configuration error (`toolsets.*` in config.yaml: a
 * located `ConfigError`, exit 2), never a silently shorter list.
 */
export function runDefinitionsCommand(runtime: Runtime, options: DefinitionsCommandOptions): void {
  const fromFlags = options.enable !== undefined || options.disable !== undefined;
  // Flags replace config.yaml's toolsets section as a whole, so --enable x is never emptied by a configured disable.
  const selection = fromFlags ? { enabled: options.enable, disabled: options.disable } : runtime.config.config.toolsets;
  // A configured MCP server that is down keeps its toolset names: selecting it warns rather than failing.
  const offline = offlineMcpToolsets(runtime);
  const unknown = findUnknownToolsets(runtime.registry.toolsets, selection).filter((u) => !offline.has(u.name));
  const down = (name: string): boolean => offline.has(name) && !runtime.registry.toolsets.has(name);
  for (const name of new Set([...(selection.enabled ?? []), ...(selection.disabled ?? [])])) {
    if (down(name)) process.stderr.write(`mibyan: warning: toolset ${JSON.stringify(name)}: ${offline.get(name)}\n`);
  }
  if (unknown.length > 0) {
    if (fromFlags) throw new InvalidArgumentError(unknown.map(flagMessage).join("; "));
    const [first, ...rest] = unknown as [UnknownToolset, ...UnknownToolset[]];
    const others = rest.length > 0 ? ` (also unknown: ${rest.map((u) => `toolsets.${u.list}[${u.index}] ${JSON.stringify(u.name)}`).join(", ")})` : "";
    throw configValueError(runtime.config, ["toolsets", first.list, first.index], `${lowerFirst(describeUnknownToolset(first))}${others}`);
  }
  const enabled = selection.enabled?.filter((name) => !down(name));
  const definitions = getToolDefinitions({
    registry: runtime.registry,
    enabledToolsets: enabled,
    disabledToolsets: selection.disabled?.filter((name) => !down(name)),
    format: options.format,
  });
  const warning = emptySelectionWarning(runtime, enabled, definitions.length);
  if (warning !== null) process.stderr.write(`mibyan: warning: ${warning}\n`);
  process.stdout.write(`${JSON.stringify(definitions, null, 2)}\n`);
}

/**
 * A warning about enabled toolsets that have no registered tools, or about a selection that gave
 * no tools at all; null when neither. The names are valid (the exit status stays 0), but most
 * built-in toolset names are reserved for tools this package does not ship (docs/toolsets.md), so
 * `--enable web` printing `[]` without a word looked like a working selection.
 */
export function emptySelectionWarning(runtime: Runtime, enabled: readonly string[] | null | undefined, count: number): string | null {
  if (count === 0 && enabled != null && enabled.length === 0) return "the enabled toolset list is empty, so no tools are selected";
  const isRegistered = (tool: string): boolean => runtime.registry.has(tool);
  const empty = (enabled ?? [])
    .filter((name, index, all) => all.indexOf(name) === index)
    .map((name) => ({ name, registration: unregisteredTools(name, runtime.registry.toolsets.resolve(name).tools, isRegistered, AGENT_LOOP_TOOLS) }))
    .filter(({ registration }) => registration.registered.length === 0);
  const head = count === 0 ? "no tools selected" : "some enabled toolsets give no tools";
  if (empty.length > 0) {
    return `${head}: ${empty.map(({ name, registration }) => `toolset ${JSON.stringify(name)} has ${describeUnregistered(registration)}`).join("; ")}`;
  }
  return count === 0 ? `${head}: the selected tools are unavailable or disabled (mibyan tools says why)` : null;
}

/** `unknown toolset "terminl" in --enable; did you mean: terminal, terminal_tools?` */
function flagMessage(unknown: UnknownToolset): string {
  const flag = unknown.list === "enabled" ? "--enable" : "--disable";
  const hint = unknown.suggestions.length > 0 ? `; did you mean: ${unknown.suggestions.join(", ")}?` : "";
  return `unknown toolset ${JSON.stringify(unknown.name)} in ${flag}${hint}`;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
