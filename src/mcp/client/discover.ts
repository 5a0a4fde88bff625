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
 *
 * Resolving, checking and spawning the stdio servers is launch.ts's job; each server's first
 * connection adopts the child it spawned. The lazy package entry (public.ts) launches while this
 * module (and the SDK) loads, then calls `discoverLaunched`.
 */
import type { Logger } from "../../registry/types.js";
import { isSafeMode } from "../../util/env-vars.js";
import { launchMcpServers, notStarted, type McpLaunch } from "./launch.js";
import { discoverySettings, type DiscoverMcpOptions, type DiscoverySettings } from "./options.js";
import { McpServerRuntime } from "./server-runtime.js";
import { finishOAuth } from "./transport.js";
import { UnknownMcpServerError } from "./errors.js";
import type { McpServerStatus } from "./types.js";

export { UnknownMcpServerError };
export type { DiscoverMcpOptions };

export const DEFAULT_CONNECT_WAIT_MS = 10_000;

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
  const settings = await discoverySettings(options);
  const { logger } = settings;
  const launch = await launchMcpServers({ config: settings.config, env: settings.env, home: settings.home, warn: (message) => logger.warn(message) });
  return discoverLaunched(settings, launch);
}

/**
 * Discovery over servers `launchMcpServers` has already resolved, checked and (stdio) spawned: each
 * server's first connection adopts its child. Takes ownership of `launch`: whatever happens, the
 * children end with the handle's `close()` or, if this throws, before the error leaves.
 */
export async function discoverLaunched(settings: DiscoverySettings, launch: McpLaunch): Promise<McpHandle> {
  const runtimes = new Map<string, McpServerRuntime>();
  const closeAll = (): Promise<void> =>
    Promise.all([launch.close(), ...[...runtimes.values()].map((runtime) => runtime.connection.close())]).then(() => undefined);
  try {
    return await connectLaunched(settings, launch, runtimes, closeAll);
  } catch (error) {
    await closeAll().catch(() => undefined);
    throw error;
  }
}

async function connectLaunched(
  settings: DiscoverySettings,
  launch: McpLaunch,
  runtimes: Map<string, McpServerRuntime>,
  closeAll: () => Promise<void>,
): Promise<McpHandle> {
  const { registry, logger, env, home } = settings;
  const resolved = launch.servers;
  const safeMode = isSafeMode(env);
  const idle: McpServerStatus[] = [];
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
        clock: settings.clock,
        timings: settings.timings,
        onElicitation: settings.onElicitation,
        transport: {
          env,
          home,
          onAuthorizationUrl: settings.onAuthorizationUrl ?? defaultAuthorizationNotice(logger),
          takeSpawned: () => launch.take(server.name),
        },
      }),
    );
  }

  const started = [...runtimes.values()].map((runtime) => runtime.connection.start());
  const allSettled = Promise.allSettled(started).then(() => undefined);
  const waitMs = settings.connectWaitMs ?? DEFAULT_CONNECT_WAIT_MS;
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
      closing ??= closeAll();
      return closing;
    },
  };
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
