/**
 * The MCP server's public shapes (docs/integrations/mcp-server.md). Free of the SDK's types on
 * purpose: the package entry re-exports them, and its declarations must compile in a project
 * without DOM types (the SDK's reference `Request`/`Response`).
 */
import type { AgentLoopHandler } from "../../dispatch/agent-loop.js";
import type { ApprovalGate } from "../../approval/flow/gate.js";
import type { ApprovalSurface } from "../../approval/flow/types.js";
import type { ToolRegistry } from "../../registry/tool-registry.js";
import type { JsonSchema, Logger } from "../../registry/types.js";

export interface McpServerOptions {
  /** The registry whose tools are served (default: the process-wide `registry`). */
  registry?: ToolRegistry | undefined;
  /** As `getToolDefinitions`: only tools of these toolsets. An unknown name throws `UnknownToolsetError`. */
  enabledToolsets?: readonly string[] | undefined;
  /** As `getToolDefinitions`: tools of these toolsets are left out. */
  disabledToolsets?: readonly string[] | undefined;
  /** Only these tool names (after the toolset selection). */
  tools?: readonly string[] | undefined;
  /** These tool names are left out; a call to one is refused like a call to any tool not listed. */
  exclude?: readonly string[] | undefined;
  /** The server's name and version in the `initialize` answer (default `mibyan-tools` and the package version). */
  name?: string | undefined;
  version?: string | undefined;
  /**
   * The gate the served tools ask (default: the process-wide `getApprovalGate()`, which the built-in tools
   * use). The server installs its elicitation surface on it; calls that do not come from an MCP client
   * are then answered by `approvalFallback`.
   */
  approvalGate?: ApprovalGate | undefined;
  /** Who answers approvals for calls that do not come through this server (default: deny, as a non-interactive run). */
  approvalFallback?: ApprovalSurface | undefined;
  /** How long an elicitation may wait for the person's answer (default 120,000 ms); no answer denies. */
  approvalTimeoutMs?: number | undefined;
  /** Interval of progress notifications for a call whose request carried a progress token (default 1,000 ms). */
  progressIntervalMs?: number | undefined;
  /**
   * How long after a registry change (`registry.onChange`) the tool list is compared with what clients were
   * last told, for `tools/list_changed`: changes within it are one notification (default 50 ms).
   */
  listChangedDebounceMs?: number | undefined;
  /**
   * How often the list is compared without a registry change, while clients are connected: availability
   * (an environment variable, what a check looks at) changes without an event (default 30,000 ms; 0: never).
   * `registry.refreshAvailability()` announces such a change at once.
   */
  availabilityRecheckMs?: number | undefined;
  /**
   * The session id calls run under (approvals, processes, the working directory); each MCP session adds its
   * own id (`mcp-<Mcp-Session-Id>`). Default `mcp`.
   */
  sessionId?: string | undefined;
  /** Where the server logs (default: the registry's logger, which writes to stderr). */
  logger?: Logger | undefined;
  /**
   * Serves agent-loop tools (todo, memory, session_search) bound to one stored session: each tool with a
   * handler here is listed (its schema must be registered) and its calls run that handler with
   * `sessionId`, whichever client calls. Without it they are neither listed nor callable: they need an
   * agent's state. `mibyan mcp serve --with-session ID` builds this from the profile home.
   */
  agentLoop?: McpAgentLoopBinding | undefined;
  /**
   * Tool search (docs/tool-search.md): config.yaml's `tool_search` section, `{ enabled: "auto" | "on" |
   * "off" }`, `true` or `false`. When it defers the selection's MCP and plugin tools, clients see
   * `tool_search` / `tool_describe` / `tool_call` in their place; a bridged call runs the real tool. Default off.
   */
  toolSearch?: unknown;
  /** The client model's context window in tokens, for tool search's share (unknown: a fixed cutoff). */
  contextTokens?: number | undefined;
}

export interface McpAgentLoopBinding {
  /** The stored session the tools work on: its todo list, its memory snapshot, the conversation `session_search` leaves out. */
  sessionId: string;
  handlers: Readonly<Record<string, AgentLoopHandler | undefined>>;
}

/** One entry of `tools/list`, as the server sends it. */
export interface McpServedTool {
  name: string;
  description: string;
  /** The registry's JSON Schema, as `getToolDefinitions` gives it (no conversion). */
  inputSchema: JsonSchema;
  /** The tool's `outputSchema` registration option, when it has one: its successful results carry `structuredContent`. */
  outputSchema?: JsonSchema | undefined;
  annotations?: McpToolAnnotations | undefined;
}

export interface McpToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/**
 * A transport as the SDK's `Server.connect` takes it (`StdioServerTransport`, `InMemoryTransport`,
 * `StreamableHTTPServerTransport`, ...), typed structurally so these declarations need no SDK import.
 */
export interface McpServerTransportLike {
  start(): Promise<void>;
  close(): Promise<void>;
  send(message: never, options?: never): Promise<void>;
}

export interface McpHttpOptions {
  /** Interface to bind (default `127.0.0.1`). Anything but a loopback address needs a token. */
  host?: string | undefined;
  /** Port (default 0: a free one; `url` tells which). */
  port?: number | undefined;
  /** Path of the MCP endpoint (default `/mcp`). */
  path?: string | undefined;
  /** When set, every request needs `Authorization: Bearer <token>` (compared in constant time). */
  token?: string | undefined;
  /** Serve without sessions: a new server for each request, no `Mcp-Session-Id` (and so no elicitation). */
  stateless?: boolean | undefined;
  /** Extra `Host` header values accepted besides the bound address, `localhost`, `127.0.0.1` and `[::1]` (with the port). */
  allowedHosts?: readonly string[] | undefined;
  /** Extra `Origin` values accepted besides `http://<allowed host>`. A request without `Origin` is accepted. */
  allowedOrigins?: readonly string[] | undefined;
}

export interface McpHttpServer {
  /** `http://127.0.0.1:<port>/mcp` */
  readonly url: string;
  readonly port: number;
  /** Live sessions (stateful mode). */
  readonly sessionCount: number;
  /** Closes every session and the listening socket. */
  close(): Promise<void>;
}

export interface McpServerConnection {
  /** Ends this connection (its running calls are aborted). */
  close(): Promise<void>;
}

/** What `createMcpServer` returns: the tool list, and ways to serve it. */
export interface MibyanMcpServer {
  /** The tools `tools/list` answers with now. */
  listTools(): McpServedTool[];
  /** Serves one client over a transport you made (one SDK `Server` per connection). */
  connect(transport: McpServerTransportLike): Promise<McpServerConnection>;
  /** Serves the process's stdin/stdout; resolves when stdin ends or the connection closes. */
  serveStdio(): Promise<void>;
  /** Serves Streamable HTTP on a node:http server. */
  listen(options?: McpHttpOptions): Promise<McpHttpServer>;
  /**
   * Closes every connection and HTTP server (their running calls are aborted). The elicitation surface stays
   * on the gate: outside a call of this server it answers with `approvalFallback`.
   */
  close(): Promise<void>;
}
