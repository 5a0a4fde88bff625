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

/**
 * Starts the configured MCP servers and keeps their tools in the registry (docs/mcp.md).
 *
 * The stdio servers are spawned first (launch.ts, which loads no SDK), so their start-up overlaps the
 * loading of the client and the SDK; the client then connects over the running children. If loading
 * the client fails, or anything throws before the handle exists, the children are ended first.
 */
export async function discoverMcpTools(options: DiscoverMcpOptions = {}): Promise<McpHandle> {
  const [{ discoverySettings }, { launchMcpServers }] = await Promise.all([import("./options.js"), import("./launch.js")]);
  const settings = await discoverySettings(options);
  // launchMcpServers spawns the servers whose check needs no grammar before it first yields, so the
  // client starts loading after them, and alongside the grammar when some command line needs it.
  const launching = launchMcpServers({ config: settings.config, env: settings.env, home: settings.home, warn: (message) => settings.logger.warn(message) });
  const client = import("./discover.js");
  client.catch(() => undefined); // awaited below; never an unhandled rejection while the launch finishes
  const launch = await launching; // a launch that throws has ended its children itself
  try {
    // discoverLaunched owns the children from here (it ends them itself when it throws); closing
    // again below is a no-op then, and covers a client that failed to load or is not what we expect.
    return await (await client).discoverLaunched(settings, launch);
  } catch (error) {
    await launch.close();
    throw error;
  }
}

/** Connects to one server entry afresh and lists its tools, registering nothing (`mibyan mcp test`). */
export async function testMcpServer(name: string, entry: McpServerConfig, options?: TestMcpServerOptions): Promise<McpServerTestResult> {
  return (await import("./test-server.js")).testMcpServer(name, entry, options);
}
