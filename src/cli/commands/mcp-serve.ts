/**
 * `mibyan mcp serve`: the registry as an MCP server (docs/integrations/mcp-server.md), over stdio
 * (default) or Streamable HTTP. It boots like the other commands — config.yaml applied, the built-in
 * tools, plugins when config.yaml enables one — but does not start the MCP servers of config.yaml:
 * re-serving them would make mibyan a proxy that a client's config can loop through (a config listing
 * `mibyan mcp serve` itself would spawn servers without end), and a client can connect to those
 * servers directly.
 *
 * On stdio, stdout is the JSON-RPC wire: nothing else may reach it, so console output of plugins and
 * tools is sent to stderr for the life of the command.
 */
import type { McpServerOptions } from "../../mcp/server/types.js";
import type { SessionWiring } from "../../agent/session-wiring.js";
import type { BootOptions, Runtime } from "../boot.js";

export interface McpServeOptions {
  transport?: "stdio" | "http";
  host?: string;
  port?: number;
  toolsets?: string[];
  tools?: string[];
  exclude?: string[];
  tokenEnv?: string;
  stateless?: boolean;
  printTools?: boolean;
  /** Serve todo, memory and session_search bound to this stored session (started when not stored yet). */
  withSession?: string;
  /** Tool search: the mode, with config.yaml's other `tool_search` settings (threshold, limits). Default off. */
  toolSearch?: "auto" | "on" | "off";
}

export class McpServeUsageError extends Error {
  override readonly name = "McpServeUsageError";
}

/** Everything that writes to stdout through `console` writes to stderr instead. */
function keepStdoutForJsonRpc(): void {
  const toStderr = (...args: unknown[]): void => console.error(...args);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
  console.warn = toStderr;
}

function serverOptions(runtime: Runtime, options: McpServeOptions, wiring: SessionWiring | undefined): McpServerOptions {
  return {
    registry: runtime.registry,
    enabledToolsets: options.toolsets,
    tools: options.tools,
    exclude: options.exclude,
    agentLoop: wiring === undefined ? undefined : { sessionId: wiring.sessionId, handlers: wiring.handlers },
    toolSearch: options.toolSearch === undefined ? undefined : { ...runtime.config.config.toolSearch, enabled: options.toolSearch },
  };
}

/**
 * `--with-session ID`: the profile's stores (docs/sessions.md, docs/memory.md) with the agent-loop tools'
 * schemas registered, so `todo`, `memory` and `session_search` are served for that stored session. The
 * SQLite driver loads only here.
 */
async function openWiring(runtime: Runtime, id: string): Promise<SessionWiring> {
  const [{ openSessionWiring }, { mibyanHome }] = await Promise.all([import("../../agent/session-wiring.js"), import("../../config/home.js")]);
  try {
    return await openSessionWiring({ home: mibyanHome(), registry: runtime.registry, memory: runtime.config.config.memory, resume: id, createIfMissing: true, source: "mcp" });
  } catch (thrown) {
    if ((thrown as Error)?.name === "SessionStoreError") throw new McpServeUsageError(`--with-session ${id}: ${(thrown as Error).message}`);
    throw thrown;
  }
}

/**
 * Every name of `--tools` and `--exclude` must be a registered tool: the configured MCP servers are not
 * started, so every tool the server could serve is registered by now, and a typo in `--exclude` would
 * otherwise serve the very tool it meant to leave out.
 */
async function checkToolNames(runtime: Runtime, options: McpServeOptions): Promise<void> {
  const { closeMatches } = await import("../../toolsets/suggest.js");
  for (const [flag, names] of [["--tools", options.tools], ["--exclude", options.exclude]] as const) {
    for (const name of names ?? []) {
      if (runtime.registry.has(name)) continue;
      const close = closeMatches(name, runtime.registry.names);
      throw new McpServeUsageError(`${flag}: no tool named ${name}${close.length > 0 ? ` (did you mean ${close.join(", ")}?)` : ""}`);
    }
  }
}

/** Until SIGINT or SIGTERM. */
function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals): void => {
      process.off("SIGINT", on);
      process.off("SIGTERM", on);
      resolve(signal);
    };
    process.on("SIGINT", on);
    process.on("SIGTERM", on);
  });
}

/** Runs the server until its client goes (stdio) or a signal (HTTP); returns the exit status. */
export async function mcpServeCommand(options: McpServeOptions, withRuntime: <T>(boot: BootOptions, run: (runtime: Runtime) => Promise<T>) => Promise<T>): Promise<number> {
  const transport = options.transport ?? "stdio";
  let token: string | undefined;
  if (options.tokenEnv !== undefined) {
    token = process.env[options.tokenEnv];
    if (token === undefined || token.trim() === "") throw new McpServeUsageError(`--token-env ${options.tokenEnv}: the environment variable is not set or empty`);
    if (transport !== "http") throw new McpServeUsageError("--token-env applies to --transport http only (stdio has no network peer to authenticate)");
  }
  if (transport === "stdio" && !options.printTools) keepStdoutForJsonRpc();

  return withRuntime({}, async (runtime) => {
    // First: it registers the agent-loop tools' schemas, which --tools may name.
    const wiring = options.withSession === undefined ? undefined : await openWiring(runtime, options.withSession);
    let server;
    try {
      await checkToolNames(runtime, options);
      const { createMcpServer } = await import("../../mcp/server/server.js");
      server = await createMcpServer(serverOptions(runtime, options, wiring));
    } catch (thrown) {
      wiring?.close();
      throw thrown;
    }
    try {
      if (options.printTools) {
        process.stdout.write(`${JSON.stringify(server.listTools(), null, 2)}\n`);
        return 0;
      }
      if (transport === "stdio") {
        runtime.registry.logger.info(`mibyan mcp serve: serving ${server.listTools().length} tools on stdio`);
        const stopped = untilSignal();
        await Promise.race([server.serveStdio(), stopped]);
        return 0;
      }
      const http = await server.listen({ host: options.host, port: options.port, token, stateless: options.stateless });
      // The one line on stdout: where to connect (a client's config, a test).
      process.stdout.write(`mibyan mcp serve: listening on ${http.url}${options.stateless ? " (stateless)" : ""}${token !== undefined ? " (bearer token required)" : ""}\n`);
      await untilSignal();
      return 0;
    } finally {
      await server.close();
      wiring?.close();
    }
  });
}
