/**
 * `createMcpServer`: the registry as an MCP server, on the official SDK's low-level `Server` (so the
 * registry's JSON Schemas go out as they are, with no zod round trip). One SDK `Server` per connection
 * (stdio, one HTTP session, one stateless HTTP request); what they share lives here: the tool lister,
 * the list-changed watcher, the approval surface installed on the gate.
 *
 * Errors: a tool's failure is a result with `isError: true` (call.ts, results.ts); the SDK answers
 * JSON-RPC errors only for requests it cannot parse or route (a malformed `tools/call`, say).
 */
import { readFileSync } from "node:fs";

import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type ServerNotification } from "@modelcontextprotocol/sdk/types.js";

import type { ApprovalGate } from "../../approval/flow/gate.js";
import { registry as defaultRegistry } from "../../registry/singleton.js";
import type { Logger } from "../../registry/types.js";
import { callTool } from "./call.js";
import { McpElicitationSurface, type ElicitationReply, type McpCallScope } from "./elicitation-surface.js";
import { listenHttp } from "./http.js";
import { ListChangedWatcher } from "./list-changed.js";
import { serveStdio } from "./stdio.js";
import { ToolLister } from "./tool-list.js";
import type { McpHttpServer, McpServerConnection, McpServerOptions, McpServerTransportLike, MibyanMcpServer } from "./types.js";

const DEFAULT_APPROVAL_TIMEOUT_MS = 120_000;
const DEFAULT_PROGRESS_INTERVAL_MS = 1_000;
const DEFAULT_LIST_CHANGED_DEBOUNCE_MS = 50;
const DEFAULT_AVAILABILITY_RECHECK_MS = 30_000;

function packageVersion(): string {
  try {
    // src/mcp/server and dist/mcp/server are both three levels below the package root.
    return (JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { version: string }).version;
  } catch {
    return "0.0.0";
  }
}

/** Serves the registry's tools over MCP (docs/integrations/mcp-server.md). */
export async function createMcpServer(options: McpServerOptions = {}): Promise<MibyanMcpServer> {
  const registry = options.registry ?? defaultRegistry;
  const logger: Logger = options.logger ?? registry.logger;
  const lister = new ToolLister({
    registry,
    enabledToolsets: options.enabledToolsets,
    disabledToolsets: options.disabledToolsets,
    tools: options.tools,
    exclude: options.exclude,
    agentLoopTools: options.agentLoop === undefined ? undefined : new Set(Object.keys(options.agentLoop.handlers).filter((name) => options.agentLoop!.handlers[name] !== undefined)),
    toolSearch: options.toolSearch,
    contextTokens: options.contextTokens,
  });
  for (const name of lister.unknownNames()) logger.warn(`mcp server: no tool named ${name} is registered`);
  const watcher = new ListChangedWatcher(
    registry,
    lister,
    {
      debounceMs: options.listChangedDebounceMs ?? DEFAULT_LIST_CHANGED_DEBOUNCE_MS,
      recheckMs: options.availabilityRecheckMs ?? DEFAULT_AVAILABILITY_RECHECK_MS,
    },
    logger,
  );
  const gate: ApprovalGate = options.approvalGate ?? (await import("../../approval/default-gate.js")).getApprovalGate();
  gate.setSurface(new McpElicitationSurface(options.approvalFallback));
  const baseSession = options.sessionId ?? "mcp";
  const approvalTimeoutMs = options.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS;
  const progressIntervalMs = options.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS;
  const info = { name: options.name ?? "mibyan-tools", version: options.version ?? packageVersion() };
  const connections = new Set<McpServerConnection>();
  const httpServers = new Set<McpHttpServer>();

  let connects = 0;

  /**
   * A fresh SDK `Server` answering from this registry. Its calls run under `session` (approvals, processes,
   * working directory), or `<session>-<Mcp-Session-Id>` for an HTTP session. A `stateless` one answers one
   * HTTP request: nobody to notify of list changes, no session of its own to end.
   */
  function newServer(session = baseSession, stateless = false): Server {
    const server = new Server(info, {
      capabilities: { tools: { listChanged: true }, logging: {} },
      instructions: "Tools of the mibyan-tools runtime. Dangerous commands need approval: this client is asked when it supports elicitation; otherwise they are refused.",
    });
    const sessions = new Set<string>();
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: lister.list() }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const sessionId = extra.sessionId === undefined ? session : `${session}-${extra.sessionId}`;
      sessions.add(sessionId);
      const canElicit = server.getClientCapabilities()?.elicitation !== undefined;
      const scope: McpCallScope = {
        timeoutMs: approvalTimeoutMs,
        elicit: canElicit
          ? async (question, signal, timeoutMs): Promise<ElicitationReply> =>
              (await server.elicitInput(
                { mode: "form", message: question.message, requestedSchema: question.requestedSchema as never },
                // Related to the call, so over HTTP the question goes out on the call's own response stream.
                { relatedRequestId: extra.requestId, signal, timeout: timeoutMs },
              )) as ElicitationReply
          : undefined,
      };
      return callTool(
        { name: request.params.name, requestId: extra.requestId, arguments: request.params.arguments, progressToken: request.params._meta?.progressToken },
        {
          registry,
          allowedTools: () => lister.names(),
          toolSearch: () => lister.bridge(),
          sessionId,
          signal: extra.signal,
          scope,
          progressIntervalMs,
          agentLoop: options.agentLoop,
          sendProgress: (progressToken, progress, message) =>
            extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress, message } } as ServerNotification),
        },
      );
    });
    const unsubscribe = stateless
      ? (): void => undefined
      : watcher.subscribe(() => {
          // Before `initialized` there is nobody to tell; the list the client asks for will be current.
          if (server.getClientCapabilities() === undefined) return;
          server.sendToolListChanged().catch((err: unknown) => logger.debug(`mcp server: list_changed not sent: ${String(err)}`));
        });
    const previous = server.onclose;
    server.onclose = () => {
      unsubscribe();
      // Approvals granted "for this MCP session" end with it (a stateless request's server is no session).
      if (!stateless) for (const id of sessions) gate.endSession(id);
      previous?.();
    };
    return server;
  }

  async function connect(transport: McpServerTransportLike): Promise<McpServerConnection> {
    // Each connection is a session of its own: one client's "this session" approval never covers another's.
    // The first keeps the plain name (`mcp`: what `mibyan processes list --session mcp` shows for stdio).
    connects += 1;
    const server = newServer(connects === 1 ? baseSession : `${baseSession}-${connects}`);
    await server.connect(transport as never);
    const connection: McpServerConnection = {
      close: async () => {
        connections.delete(connection);
        await server.close();
      },
    };
    connections.add(connection);
    const onclose = server.onclose;
    server.onclose = () => {
      connections.delete(connection);
      onclose?.();
    };
    return connection;
  }

  return {
    listTools: () => lister.list(),
    connect,
    serveStdio: () => serveStdio(connect, logger),
    async listen(httpOptions = {}): Promise<McpHttpServer> {
      const http = await listenHttp(httpOptions, { newServer: (stateless) => newServer(baseSession, stateless), logger, onSessionClosed: () => undefined });
      httpServers.add(http);
      return {
        get url() {
          return http.url;
        },
        get port() {
          return http.port;
        },
        get sessionCount() {
          return http.sessionCount;
        },
        close: async () => {
          httpServers.delete(http);
          await http.close();
        },
      };
    },
    async close(): Promise<void> {
      await Promise.all([...connections].map((c) => c.close()));
      await Promise.all([...httpServers].map((h) => h.close()));
      httpServers.clear();
    },
  };
}
