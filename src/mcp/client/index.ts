/** The MCP client: tools of configured MCP servers in the registry, kept live (docs/mcp.md). */

// The full surface, loading the SDK at import. The package entry should use ./public.ts (lazy) instead.
export { discoverMcpTools, UnknownMcpServerError, DEFAULT_CONNECT_WAIT_MS, type DiscoverMcpOptions, type McpHandle } from "./discover.js";
export { DEFAULT_TIMINGS, backoffDelay, realClock, type McpClock, type McpServerStatus, type McpState, type McpTimings } from "./types.js";
export { resolveMcpServers, resolveMcpServer, type ResolvedMcpServer } from "./server-config.js";
export { mcpToolName, mcpToolsetName, mcpUtilityToolNames, sanitizeNamePart } from "./naming.js";
export { FileOAuthProvider, tokenFilePath, DEFAULT_OAUTH_REDIRECT_URL, type FileOAuthProviderOptions } from "./oauth-provider.js";
export { stderrLogPath } from "./transport.js";
export { liveStdioPids } from "./stdio-transport.js";
export type { McpElicitationAnswer, McpElicitationHandler, McpElicitationRequest } from "./elicitation.js";
export { testMcpServer, type McpServerTestResult, type TestMcpServerOptions } from "./test-server.js";
