/**
 * `discoverMcpTools`: start every configured MCP server and keep its tools in the registry.
 *
 * - `MIBYAN_SAFE_MODE` truthy: nothing starts (every entry reported `disabled`).
 * - Entries with `enabled: false` are reported `disabled` and never spawned; entries the config
 *   resolution refuses (a suspicious stdio command line, an unusable URL) are `refused` with the reason.
 * - The others connect concurrently. The returned promise waits at most `connectWaitMs` (default 10 s)
 *   for them, so a slow server never holds up the built-in tools; servers still connecting keep
 *   connecting in the background and register their tools when they are ready.
 * - The handle is how an application controls the lifecycle: `servers` (live status), `refresh(name)`,
 *   `reconnect(name)`, `close()` — which ends every child process and removes every MCP tool.
 */
import type { McpServerConfig } from "../../config/config-types.js";
import { mibyanHome } from "../../config/home.js";
import { loadConfig } from "../../config/load-config.js";
import { isSafeMode } from "../../util/env-vars.js";
import type { ToolRegistry } from "../../registry/tool-registry.js";
import type { Logger } from "../../registry/types.js";
import type { EnvVars } from "../../util/env-vars.js";
import type { McpElicitationHandler } from "./types.js";
import { loadMcpCommandScanner } from "./security.js";
import { resolveMcpServers, type ResolvedMcpServer } from "./server-config.js";
import { McpServerRuntime } from "./server-runtime.js";
import { finishOAuth } from "./transport.js";
import { UnknownMcpServerError } from "./errors.js";

export { UnknownMcpServerError };
import type { McpClock, McpServerStatus, McpTimings } from "./types.js";

export const DEFAULT_CONNECT_WAIT_MS = 10_000;

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

export interface McpHandle {
  /** Every configured server's status, as of now. */
  readonly servers: McpServerStatus[];
  /** Lists the server's tools again and re-registers them. */
  refresh(name: string): Promise<void>;
  /** Drops the server's session (if any) and connects again now; a parked server comes back this way. */
  reconnect(name: string): Promise<void>;
  /**
   * Completes an `auth: oauth` server's authorisation with the `code` its authorisation server sent to
   * the redirect URL (the tokens are stored), then reconnects it.
   */
  finishAuth(name: string, code: string): Promise<void>;
  /** Resolves once no server is still making its first connection (ready, parked, or not started). */
  settled(): Promise<void>;
  /** Ends every server (child processes exit before this resolves) and removes their tools. */
  close(): Promise<void>;
}

export async function discoverMcpTools(options: DiscoverMcpOptions = {}): Promise<McpHandle> {
  const env = options.env ?? process.env;
  const registry = options.registry ?? (await import("../../registry/singleton.js")).registry;
  const logger = options.logger ?? registry.logger;
  const config = options.config ?? loadConfig({ env }).config.mcpServers;
  const home = options.home ?? mibyanHome(env);

  // The full command-line analysis needs the bash grammar; without it some disguises would only get the text rules.
  if (Object.values(config).some((entry) => entry !== null && typeof entry === "object" && typeof entry.command === "string")) {
    await loadMcpCommandScanner();
  }
  const resolved = resolveMcpServers(config, { env, warn: (message: string) => logger.warn(message) });
  const safeMode = isSafeMode(env);
  const idle: McpServerStatus[] = [];
  const runtimes = new Map<string, McpServerRuntime>();
  for (const server of resolved) {
    const reason = notStarted(server, safeMode);
    if (reason !== undefined) {
      idle.push({ name: server.name, transport: server.transport, state: reason.state, toolCount: 0, refusal: reason.why });
      if (reason.state === "refused") logger.warn(`MCP server '${server.name}' not started: ${reason.why}`);
      continue;
    }
    runtimes.set(
      server.name,
      new McpServerRuntime(server, {
        registry,
        logger,
        clock: options.clock,
        timings: options.timings,
        onElicitation: options.onElicitation,
        transport: { env, home, onAuthorizationUrl: options.onAuthorizationUrl ?? defaultAuthorizationNotice(logger) },
      }),
    );
  }

  const started = [...runtimes.values()].map((runtime) => runtime.connection.start());
  const allSettled = Promise.allSettled(started).then(() => undefined);
  const waitMs = options.connectWaitMs ?? DEFAULT_CONNECT_WAIT_MS;
  if (started.length > 0 && waitMs > 0) await Promise.race([allSettled, delay(waitMs)]);
  if (runtimes.size > 0) {
    const statuses = [...runtimes.values()].map((r) => r.status());
    const tools = statuses.reduce((sum, s) => sum + s.toolCount, 0);
    const failed = statuses.filter((s) => s.state === "parked").length;
    const pending = statuses.filter((s) => s.state === "connecting").length;
    logger.info(`MCP: ${tools} tool(s) from ${statuses.length - failed - pending} server(s) (${failed} failed${pending > 0 ? `, ${pending} still connecting` : ""})`);
  }

  const find = (name: string): McpServerRuntime => {
    const runtime = runtimes.get(name);
    if (runtime === undefined) throw new UnknownMcpServerError(name, [...runtimes.keys()]);
    return runtime;
  };
  let closing: Promise<void> | undefined;
  return {
    get servers(): McpServerStatus[] {
      const live = new Map([...runtimes].map(([name, runtime]) => [name, runtime.status()]));
      return resolved.map((server) => live.get(server.name) ?? idle.find((s) => s.name === server.name)!);
    },
    async refresh(name) {
      const runtime = find(name);
      if (runtime.connection.state === "ready") await runtime.refresher.refresh();
      else await runtime.connection.reconnect();
    },
    async reconnect(name) {
      await find(name).connection.reconnect();
    },
    async finishAuth(name, code) {
      const runtime = find(name);
      await finishOAuth(runtime.server, runtime.transportOptions, code);
      await runtime.connection.reconnect();
    },
    settled: () => allSettled,
    close() {
      closing ??= Promise.all([...runtimes.values()].map((runtime) => runtime.connection.close())).then(() => undefined);
      return closing;
    },
  };
}

function notStarted(server: ResolvedMcpServer, safeMode: boolean): { state: "disabled" | "refused"; why: string } | undefined {
  if (server.refusal !== undefined) return { state: "refused", why: server.refusal };
  if (!server.enabled) return { state: "disabled", why: "enabled: false in config.yaml" };
  if (safeMode) return { state: "disabled", why: "MIBYAN_SAFE_MODE is set" };
  return undefined;
}

function defaultAuthorizationNotice(logger: Logger): (server: string, url: URL) => void {
  return (server, url) =>
    logger.warn(`MCP server '${server}' needs authorisation: open ${url.toString()} in a browser, then finish the flow (docs/mcp.md, "OAuth")`);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref?.();
  });
}
