import type { ToolRegistry } from "../registry/tool-registry.js";
import type { MibyanConfig } from "./config-types.js";

/** Applies the `tools` section of config.yaml to a registry. */
export function applyConfig(target: ToolRegistry, config: MibyanConfig): void {
  const tools = config.tools;
  if (tools.maxResultChars !== undefined) target.maxResultChars = tools.maxResultChars;
  if (tools.timeoutSeconds !== undefined) target.defaultTimeoutMs = tools.timeoutSeconds * 1000;
  if (tools.maxConcurrency !== undefined) target.maxConcurrency = tools.maxConcurrency;
  if (tools.availabilityTtlSeconds !== undefined) target.availability.ttlMs = tools.availabilityTtlSeconds * 1000;
}
