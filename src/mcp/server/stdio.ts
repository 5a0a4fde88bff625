/**
 * Serving stdin/stdout. The SDK's stdio transport reads one JSON-RPC message per line; a line that is not
 * JSON, or not a JSON-RPC message, it only reports to `onerror` and drops, so a client would wait for an
 * answer that never comes. Here such a line gets the JSON-RPC answer (`-32700 Parse error` or `-32600
 * Invalid Request`, `id: null`), and the session goes on. The client closing stdin ends the session
 * (the transport does not watch for it): its running calls are aborted.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

import type { Logger } from "../../registry/types.js";
import type { McpServerConnection, McpServerTransportLike } from "./types.js";

export async function serveStdio(connect: (transport: McpServerTransportLike) => Promise<McpServerConnection>, logger: Logger): Promise<void> {
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
  });
  // Set before connect: the SDK keeps it and calls it first.
  transport.onerror = (error: Error) => {
    const parse = error instanceof SyntaxError;
    const invalid = error.name === "ZodError" || (error as { issues?: unknown }).issues !== undefined;
    if (!parse && !invalid) return logger.warn(`mcp server: stdio: ${error.message}`);
    const answer = { jsonrpc: "2.0", id: null, error: parse ? { code: -32700, message: "Parse error: the line is not JSON" } : { code: -32600, message: "Invalid Request: not a JSON-RPC message" } };
    transport.send(answer as never).catch(() => undefined);
  };
  const connection = await connect(transport);
  const onEnd = (): void => void connection.close();
  process.stdin.once("end", onEnd);
  process.stdin.once("close", onEnd);
  try {
    await closed;
  } finally {
    process.stdin.off("end", onEnd);
    process.stdin.off("close", onEnd);
  }
}
