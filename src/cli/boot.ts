/**
 * What the CLI's commands that touch tools start with: config.yaml applied to the registry, the built-in
 * tools, then the dynamic sources of docs/mcp.md and docs/plugins.md — each only when config.yaml asks
 * for it, and imported only then, so `mibyan tools` without plugins or MCP servers loads neither.
 */
import type { ToolRegistry } from "../registry/tool-registry.js";
import { registry } from "../registry/singleton.js";
import { getConfig, type LoadedConfig } from "../config/load-config.js";
import { applyConfig } from "../config/apply-config.js";
import type { MibyanConfig } from "../config/config-types.js";
import { discoverBuiltinTools, type DiscoveryReport } from "../discovery/discover.js";
import type { McpHandle } from "../mcp/client/discover.js";
import type { PluginManager } from "../plugins/manager.js";

/** How long a command waits for configured MCP servers to connect before it goes on without the slow ones. */
export const CLI_MCP_WAIT_MS = 10_000;
/**
 * A command lives for seconds, not hours: its first connection is retried after 0.25, 0.5 and 1 s (the
 * library's default, 1, 2 and 4 s, is for a long-running agent) so a broken server is reported parked
 * within about two seconds instead of holding up `mibyan tools` for eight.
 */
export const CLI_MCP_BACKOFF_BASE_MS = 250;

export interface Runtime {
  registry: ToolRegistry;
  config: LoadedConfig;
  discovery: DiscoveryReport;
  /** Loaded when config.yaml enables a plugin or sets a shell hook (or `plugins: "always"`). */
  plugins?: PluginManager | undefined;
  /** Started when config.yaml has `mcp_servers` and the command wants them. */
  mcp?: McpHandle | undefined;
  /** Ends MCP server processes and unloads plugins; commands call it before they return. */
  close(): Promise<void>;
}

export interface BootOptions {
  /**
   * `"configured"` (default): load plugins when config.yaml enables one or sets a shell hook;
   * `"always"`: discover them anyway (`mibyan plugins list` shows the ones not enabled too).
   */
  plugins?: "configured" | "always" | undefined;
  /**
   * Start the configured MCP servers (default false), or decide once the built-ins and plugins are in
   * (`mibyan call` starts them only for a tool nobody else registered). `boot` waits at most `CLI_MCP_WAIT_MS`.
   */
  mcp?: boolean | ((registry: ToolRegistry) => boolean) | undefined;
  /** Stop waiting for MCP servers once this holds (`mibyan call`: its tool is registered), rather than for all of them. */
  mcpReadyWhen?: ((registry: ToolRegistry) => boolean) | undefined;
}

/** Loads config.yaml, applies it to the registry and discovers the built-in tools, then plugins and MCP servers. */
export async function boot(options: BootOptions = {}): Promise<Runtime> {
  const config = getConfig();
  for (const warning of config.warnings) registry.logger.warn(warning);
  applyConfig(registry, config.config);
  const discovery = await discoverBuiltinTools();
  const runtime: Runtime = { registry, config, discovery, close: async () => undefined };
  // Plugins come after the built-ins (an override is judged against them) and before MCP servers,
  // so a plugin's hooks see MCP calls too.
  if (options.plugins === "always" || wantsPlugins(config.config)) {
    const { loadPlugins } = await import("../plugins/manager.js");
    runtime.plugins = await loadPlugins({ registry, config: config.config, logger: registry.logger });
  }
  const mcp = typeof options.mcp === "function" ? options.mcp(registry) : options.mcp === true;
  if (mcp && Object.keys(config.config.mcpServers).length > 0) {
    // A stdio command line the fast shell parser cannot take loads the bash grammar for its check; as
    // bin/mibyan.js says, a CLI process wants it compiled by Liftoff only (`tools` and `definitions`
    // start without that flag).
    (await import("node:v8")).setFlagsFromString("--liftoff-only");
    // The lazy entry spawns each stdio server as soon as its command line passes the check, while the
    // MCP client (the SDK) loads, and ends them if loading fails (docs/mcp.md, "Starting servers early").
    const { discoverMcpTools } = await import("../mcp/client/public.js");
    runtime.mcp = await discoverMcpTools({ registry, config: config.config.mcpServers, logger: registry.logger, connectWaitMs: 0, timings: { backoffBaseMs: CLI_MCP_BACKOFF_BASE_MS } });
    const readyWhen = options.mcpReadyWhen;
    await waitForServers(runtime.mcp, registry, readyWhen === undefined ? undefined : () => readyWhen(registry));
  }
  runtime.close = async () => {
    await Promise.all([runtime.mcp?.close(), runtime.plugins?.close()]);
  };
  return runtime;
}

/** True when config.yaml enables a plugin or sets a shell hook: only then are plugin folders scanned. */
export function wantsPlugins(config: MibyanConfig): boolean {
  const enabled = (config.plugins.enabled?.length ?? 0) > 0 || Object.values(config.plugins.entries).some((entry) => entry.enabled === true);
  const hooks = Object.values(config.hooks).some((list) => Array.isArray(list) && list.length > 0);
  return enabled || hooks;
}

/**
 * Until every server has settled (ready, parked, refused), `ready()` holds, or `CLI_MCP_WAIT_MS` passed.
 * `ready()` is asked when a tool is registered (the registry's change event), not on a timer: `mibyan
 * call` goes on the moment its server's tool arrives.
 */
async function waitForServers(mcp: McpHandle, tools: ToolRegistry, ready: (() => boolean) | undefined): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let unsubscribe: (() => void) | undefined;
  const registered = new Promise<void>((resolve) => {
    if (ready === undefined) return;
    if (ready()) return resolve();
    unsubscribe = tools.onChange((change) => {
      if (change.kind === "registered" && ready()) resolve();
    });
  });
  try {
    await Promise.race([mcp.settled(), registered, new Promise<void>((resolve) => (timer = setTimeout(resolve, CLI_MCP_WAIT_MS)))]);
  } finally {
    unsubscribe?.();
    clearTimeout(timer);
  }
}
