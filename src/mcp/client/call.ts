/**
 * One call to an MCP server on the model's behalf: the per-tool handler and the session handling
 * every RPC shares (utilities.ts uses it too).
 *
 * Order (hermes `_make_tool_handler`, with its defects fixed):
 * 1. Circuit breaker: refused without any RPC while open (breaker.ts).
 * 2. No session (reconnecting): wait up to min(5 s, timeout) for it; else "transport is down;
 *    reconnect requested" (#26892). A parked server gets a probe.
 * 3. The RPC, alone among the server's calls unless it supports parallel calls. Options: `timeout`
 *    (per call, default 300 s), the caller's `AbortSignal` (the SDK sends `notifications/cancelled`),
 *    progress resetting the timeout (typescript-sdk#245) up to `maxTotalTimeout` (10× the timeout).
 * 4. Session expired (HTTP 404 for the session id) → reconnect, retry once (#13383).
 * 5. `tools/call` goes through `client.request`, not `client.callTool`: the latter throws on an
 *    `outputSchema` mismatch and loses the content (#101330); here it is a logged warning.
 *
 * What counts for the breaker: no session, a timeout, a protocol or transport error. Not: a tool
 * answering `isError`, an output-schema mismatch, a call the caller cancelled.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { CallToolResultSchema, ErrorCode, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";

import type { JsonSchema, Logger, ToolContext, ToolHandler, ToolResult } from "../../registry/types.js";
import { perCallSignal } from "../../dispatch/call-context.js";
import { fail } from "../../dispatch/result.js";
import { redactText } from "../../redaction/tool-output.js";
import type { McpConnection } from "./connection.js";
import { describe } from "./connection.js";
import { checkStructuredContent } from "./output-schema.js";
import { convertCallToolResult } from "./results.js";
import { isSessionExpired } from "./transport.js";

/** How much longer than its timeout a call that keeps reporting progress may run in total. */
export const MAX_TOTAL_TIMEOUT_FACTOR = 10;

/** Asking for progress (any handler) is what makes a long call's notifications reset the timeout. */
const IGNORE_PROGRESS = (): void => undefined;

export type SessionOutcome<T> = { ok: true; value: T } | { ok: false; result: ToolResult };

export function transportDownMessage(server: string): string {
  return `MCP server '${server}' transport is down; reconnect requested. Do NOT retry this tool immediately — give it a few seconds to come back.`;
}

function isTimeout(error: unknown): boolean {
  return error instanceof McpError && error.code === ErrorCode.RequestTimeout;
}

/** Errors that mean the session itself is gone (as opposed to the server answering with an error). */
function isTransportFailure(error: unknown): boolean {
  if (error instanceof McpError) return error.code === ErrorCode.ConnectionClosed;
  const message = describe(error);
  return error instanceof TypeError || /not connected|fetch failed|ECONNREFUSED|ECONNRESET|socket hang up|EPIPE/i.test(message);
}

/**
 * Runs `op` on the server's session with the breaker, the wait for a reconnect, the RPC slot, the
 * timeout and one retry after an expired session. Never throws.
 */
export async function withSession<T>(
  connection: McpConnection,
  ctx: Pick<ToolContext, "signal">,
  label: string,
  op: (client: Client, options: RequestOptions) => Promise<T>,
): Promise<SessionOutcome<T>> {
  const { server, breaker } = connection;
  const refusal = breaker.admit();
  if (refusal !== undefined) return { ok: false, result: fail(refusal) };
  const timeoutMs = server.timeoutMs;
  // Undefined when nothing can cancel this call: the SDK then keeps no abort listener for it.
  const signal = perCallSignal(ctx);
  for (let attempt = 0; ; attempt++) {
    let client = connection.client;
    if (client === undefined) {
      client = await connection.waitReady(Math.min(connection.timings.sessionWaitMs, timeoutMs), signal);
      if (client === undefined) {
        if (signal?.aborted === true) {
          breaker.release();
          return { ok: false, result: fail(`MCP call to '${server.name}' was cancelled`, "cancelled") };
        }
        if (connection.state === "parked") void connection.reconnect();
        breaker.failure();
        return { ok: false, result: fail(transportDownMessage(server.name)) };
      }
    }
    const options: RequestOptions = {
      timeout: timeoutMs,
      ...(signal === undefined ? {} : { signal }),
      resetTimeoutOnProgress: true,
      maxTotalTimeout: timeoutMs * MAX_TOTAL_TIMEOUT_FACTOR,
      onprogress: IGNORE_PROGRESS,
    };
    const session = client;
    try {
      const value = await connection.withRpcSlot(() => op(session, options), signal);
      breaker.success();
      return { ok: true, value };
    } catch (error) {
      if (signal?.aborted === true) {
        breaker.release();
        return { ok: false, result: fail(`MCP call to '${server.name}' was cancelled`, "cancelled") };
      }
      if (attempt === 0 && isSessionExpired(error)) {
        // The server forgot our session (restarted, expired): a new session, and the call once more.
        await connection.reconnect();
        continue;
      }
      breaker.failure();
      if (isTimeout(error)) {
        return { ok: false, result: fail(`MCP ${label} on server '${server.name}' timed out after ${formatSeconds(timeoutMs)}`) };
      }
      if (isTransportFailure(error)) connection.sessionLost(describe(error));
      const type = error instanceof Error ? error.constructor.name : typeof error;
      return { ok: false, result: fail(redactText(`MCP call failed: ${type}: ${describe(error)}`)) };
    }
  }
}

function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)}s`;
}

export interface ToolHandlerDeps {
  connection: McpConnection;
  logger: Logger;
  /** The registry name of the server's `read_resource` utility, when registered (resource links point at it). */
  readResourceTool: () => string | undefined;
}

/** The handler registered for one of the server's tools. `outputSchema` is read per call (a refresh may change it). */
export function mcpToolHandler(deps: ToolHandlerDeps, rawName: string, outputSchema: () => JsonSchema | undefined): ToolHandler {
  return async (args, ctx) => {
    const { connection, logger } = deps;
    const outcome = await withSession(connection, ctx, `tool ${rawName}`, (client, options) =>
      client.request({ method: "tools/call", params: { name: rawName, arguments: args } }, CallToolResultSchema, options),
    );
    if (!outcome.ok) return outcome.result;
    const result = outcome.value as CallToolResult;
    const mismatch = checkStructuredContent(outputSchema(), result);
    if (mismatch !== undefined) {
      logger.warn(`MCP tool ${rawName} of server '${connection.name}': ${mismatch}; the result is passed on as it is`);
    }
    return convertCallToolResult(result, { server: connection.name, tool: rawName, readResourceTool: deps.readResourceTool() });
  };
}

