/**
 * The MCP client as the package entry (`src/index.ts`) should export it: types, the error class, and
 * the two functions as thin wrappers that load the client on first use. Importing the client itself
 * costs about 200 ms (the SDK, zod, the command-line scanner), which every `import "mibyan-tools"` and
 * every CLI command would pay even with no MCP server configured.
 */
import type { McpServerConfig } from "../../config/config-types.js";
import type { DiscoverMcpOptions, McpHandle } from "./discover.js";
import type { McpServerTestResult, TestMcpServerOptions } from "./test-server.js";

export { UnknownMcpServerError } from "./errors.js";
export type { DiscoverMcpOptions, McpHandle } from "./discover.js";
export type { McpClock, McpServerStatus, McpState, McpTimings } from "./types.js";
export type { McpElicitationAnswer, McpElicitationHandler, McpElicitationRequest } from "./types.js";
export type { McpServerTestResult, TestMcpServerOptions } from "./test-server.js";

/** Starts the configured MCP servers and keeps their tools in the registry (docs/mcp.md). */
export async function discoverMcpTools(options?: DiscoverMcpOptions): Promise<McpHandle> {
  return (await import("./discover.js")).discoverMcpTools(options);
}

/** Connects to one server entry afresh and lists its tools, registering nothing (`mibyan mcp test`). */
export async function testMcpServer(name: string, entry: McpServerConfig, options?: TestMcpServerOptions): Promise<McpServerTestResult> {
  return (await import("./test-server.js")).testMcpServer(name, entry, options);
}
