/**
 * One configured server wired to the registry: its connection (connection.ts), its tools
 * (register.ts) and its list_changed refresher (refresh.ts). Every transition to ready lists and
 * registers the tools; parking and closing remove them.
 */
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

import type { ToolRegistry } from "../../registry/tool-registry.js";
import type { Logger, ToolHandler } from "../../registry/types.js";
import { mcpToolHandler } from "./call.js";
import { McpConnection } from "./connection.js";
import { listAllTools, ServerTools } from "./register.js";
import { ToolRefresher } from "./refresh.js";
import type { ResolvedMcpServer } from "./server-config.js";
import type { TransportOptions } from "./transport.js";
import type { McpClock, McpServerStatus, McpState, McpTimings } from "./types.js";
import { utilityHandler } from "./utilities.js";
import { installElicitation, type McpElicitationHandler } from "./elicitation.js";

export interface ServerRuntimeOptions {
  registry: ToolRegistry;
  logger: Logger;
  transport: TransportOptions;
  clock?: McpClock | undefined;
  timings?: Partial<McpTimings> | undefined;
  onElicitation?: McpElicitationHandler | undefined;
}

export class McpServerRuntime {
  readonly connection: McpConnection;
  readonly tools: ServerTools;
  readonly refresher: ToolRefresher;
  readonly transportOptions: TransportOptions;

  constructor(
    readonly server: ResolvedMcpServer,
    options: ServerRuntimeOptions,
  ) {
    const { registry, logger } = options;
    let connection!: McpConnection;
    const tools: ServerTools = new ServerTools(server, registry, logger, {
      tool: (raw): ToolHandler => mcpToolHandler({ connection, logger, readResourceTool: (): string | undefined => tools.readResourceTool }, raw, () => tools.outputSchemas.get(raw)),
      utility: (kind) => utilityHandler(connection, kind),
    });
    connection = new McpConnection({
      server,
      logger,
      transport: options.transport,
      clock: options.clock,
      timings: options.timings,
      hooks: {
        setup: (conn, client) => {
          client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.refresher.schedule());
          installElicitation(client, server.name, options.onElicitation, { timeoutMs: conn.timings.elicitationTimeoutMs, clock: conn.clock, logger });
        },
        onReady: async (_conn, client) => {
          const listed = await listAllTools(client, { timeout: server.connectTimeoutMs });
          const outcome = tools.apply(listed, client.getServerCapabilities());
          logger.info(`MCP server '${server.name}': ${outcome.registered.length} tool(s) registered`);
        },
        onParked: () => {
          tools.clear();
        },
        onStateChange: (_conn, state: McpState) => logger.debug(`MCP server '${server.name}': ${state}`),
      },
    });
    this.connection = connection;
    this.transportOptions = options.transport;
    this.tools = tools;
    this.refresher = new ToolRefresher(connection, tools, logger);
  }

  status(): McpServerStatus {
    return {
      name: this.server.name,
      transport: this.connection.transportKind ?? this.server.transport,
      state: this.connection.state,
      lastError: this.connection.lastError,
      toolCount: this.tools.count,
      pid: this.connection.pid,
    };
  }
}
