import type { ToolRegistry } from "../registry/tool-registry.js";
import { registry } from "../registry/singleton.js";
import { getConfig, type LoadedConfig } from "../config/load-config.js";
import { applyConfig } from "../config/apply-config.js";
import { discoverBuiltinTools, type DiscoveryReport } from "../discovery/discover.js";

export interface Runtime {
  registry: ToolRegistry;
  config: LoadedConfig;
  discovery: DiscoveryReport;
}

/** Loads config.yaml, applies it to the registry and discovers the built-in tools. */
export async function boot(): Promise<Runtime> {
  const config = getConfig();
  for (const warning of config.warnings) registry.logger.warn(warning);
  applyConfig(registry, config.config);
  const discovery = await discoverBuiltinTools();
  return { registry, config, discovery };
}
