import { InvalidArgumentError } from "commander";
import type { Runtime } from "../boot.js";
import { getToolDefinitions } from "../../definitions/get-tool-definitions.js";
import type { ExportFormat } from "../../adapters/index.js";
import { configValueError } from "../../config/load-config.js";
import { describeUnknownToolset, findUnknownToolsets, type UnknownToolset } from "../../toolsets/unknown-toolset.js";

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
  const unknown = findUnknownToolsets(runtime.registry.toolsets, selection);
  if (unknown.length > 0) {
    if (fromFlags) throw new InvalidArgumentError(unknown.map(flagMessage).join("; "));
    const [first, ...rest] = unknown as [UnknownToolset, ...UnknownToolset[]];
    const others = rest.length > 0 ? ` (also unknown: ${rest.map((u) => `toolsets.${u.list}[${u.index}] ${JSON.stringify(u.name)}`).join(", ")})` : "";
    throw configValueError(runtime.config, ["toolsets", first.list, first.index], `${lowerFirst(describeUnknownToolset(first))}${others}`);
  }
  const definitions = getToolDefinitions({
    registry: runtime.registry,
    enabledToolsets: selection.enabled,
    disabledToolsets: selection.disabled,
    format: options.format,
  });
  process.stdout.write(`${JSON.stringify(definitions, null, 2)}\n`);
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
