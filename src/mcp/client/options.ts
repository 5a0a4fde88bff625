/**
 * `discoverMcpTools`'s options and their defaults, in a module of their own so the lazy package
 * entry (public.ts) can work them out, and start the stdio servers (launch.ts), before the client
 * and its SDK have loaded.
 */
import type { McpServerConfig } from "../../config/config-types.js";
import { mibyanHome } from "../../config/home.js";
import { loadConfig } from "../../config/load-config.js";
import type { ToolRegistry } from "../../registry/tool-registry.js";
import type { Logger } from "../../registry/types.js";
import type { EnvVars } from "../../util/env-vars.js";
import type { McpClock, McpElicitationHandler, McpTimings } from "./types.js";

export interface DiscoverMcpOptions {
  /** Where the tools go (default: the process-wide `registry`). */
  registry?: ToolRegistry | undefined;
  /** The `mcp_servers` section (default: `loadConfig().config.mcpServers` of the profile home). */
  config?: Record<string, McpServerConfig> | undefined;
  /** Environment for `${VAR}` expansion, the stdio baseline and `MIBYAN_SAFE_MODE` (default `process.env`). */
  env?: EnvVars | undefined;
  /** The profile home for stderr logs and OAuth tokens (default `mibyanHome(env)`). */
  home?: string | undefined;
  logger?: Logger | undefined;
  /** How long the returned promise waits for servers to connect (default 10,000 ms; 0: not at all). */
  connectWaitMs?: number | undefined;
  clock?: McpClock | undefined;
  /** Backoff, probe, keepalive and breaker timing (types.ts `McpTimings`). */
  timings?: Partial<McpTimings> | undefined;
  /** Told the URL to open when an `auth: oauth` server needs a person to authorise (default: logged). */
  onAuthorizationUrl?: ((server: string, url: URL) => void) | undefined;
  /** Asks the person when a server requests input mid-call (elicitation); without it every request is declined. */
  onElicitation?: McpElicitationHandler | undefined;
}

/** The options with their defaults filled in. */
export interface DiscoverySettings extends DiscoverMcpOptions {
  registry: ToolRegistry;
  config: Record<string, McpServerConfig>;
  env: EnvVars;
  home: string;
  logger: Logger;
}

export async function discoverySettings(options: DiscoverMcpOptions): Promise<DiscoverySettings> {
  const env = options.env ?? process.env;
  const registry = options.registry ?? (await import("../../registry/singleton.js")).registry;
  return {
    ...options,
    registry,
    env,
    logger: options.logger ?? registry.logger,
    config: options.config ?? loadConfig({ env }).config.mcpServers,
    home: options.home ?? mibyanHome(env),
  };
}
