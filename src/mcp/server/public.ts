/**
 * The MCP server as the package entry exports it: its types and `createMcpServer` as a wrapper that
 * loads the server (and the SDK) on first use, so `import "mibyan-tools"` does not pay for the SDK.
 */
import type { McpServerOptions, MibyanMcpServer } from "./types.js";

export type {
  McpAgentLoopBinding,
  McpHttpOptions,
  McpHttpServer,
  McpServedTool,
  McpServerConnection,
  McpServerOptions,
  McpServerTransportLike,
  McpToolAnnotations,
  MibyanMcpServer,
} from "./types.js";

/** Serves the registry's tools over MCP: stdio, Streamable HTTP, or a transport you bring (docs/integrations/mcp-server.md). */
export async function createMcpServer(options?: McpServerOptions): Promise<MibyanMcpServer> {
  return (await import("./server.js")).createMcpServer(options);
}
