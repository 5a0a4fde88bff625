/**
 * From a resolved server entry to a connected SDK `Client`: which transport, built how.
 *
 * - stdio: our process-group transport (stdio-transport.ts) with the minimal environment
 *   (environment.ts) and stderr appended to `$MIBYAN_HOME/logs/mcp/<server>.log` (last 4 KiB kept in
 *   memory for error messages).
 * - `transport: http` (the default for `url`): Streamable HTTP with the entry's headers; when the
 *   endpoint answers the first POST with 404 or 405 (an older server that only speaks SSE), one more
 *   try with the SSE transport, as the SDK's own client example does. `transport: sse`: SSE only.
 * - `auth: oauth`: the SDK's OAuth client with our file-backed provider (oauth-provider.ts). An
 *   `UnauthorizedError` is not a reason to fall back to SSE.
 *
 * Redirects stay on the endpoint's origin (`redirectPolicy: "same-origin"`): a configured header may
 * carry a token, and a redirect must not hand it to another host.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

import type { EnvVars } from "../../util/env-vars.js";
import { stdioProcessOptions } from "./launch.js";
import { FileOAuthProvider } from "./oauth-provider.js";
import { ProcessGroupStdioTransport } from "./stdio-transport.js";
import { stderrLogPath, type StdioServerProcess } from "./stdio-process.js";
import type { ResolvedMcpServer } from "./server-config.js";
import { permissiveSchemaValidator } from "./output-schema.js";

export const CLIENT_INFO = Object.freeze({ name: "mibyan-tools", version: "0.1.0" });

export type ConnectedKind = "stdio" | "http" | "sse";

export interface TransportOptions {
  /** The parent environment the stdio baseline is taken from (default `process.env`). */
  env?: EnvVars | undefined;
  /** The profile home: stderr logs and OAuth tokens live under it. */
  home: string;
  onAuthorizationUrl?: ((server: string, url: URL) => void) | undefined;
  /**
   * A stdio child launch.ts already spawned for this server, handed over once (later calls give
   * `undefined`): the first connection adopts it instead of spawning; retries spawn afresh.
   */
  takeSpawned?: (() => StdioServerProcess | undefined) | undefined;
}

export interface Connected {
  client: Client;
  transport: Transport;
  kind: ConnectedKind;
  /** The stdio child's pid, when there is one. */
  pid?: number | undefined;
  /** The stdio child's last stderr, for error messages. */
  stderrTail?: () => string;
}

export { stderrLogPath };

/** A fresh SDK client. Output schemas are checked by us, leniently (output-schema.ts), never by the SDK. */
export function createClient(setup?: (client: Client) => void): Client {
  // Elicitation in both modes, so a URL request reaches our handler and is declined there (elicitation.ts).
  const client = new Client({ ...CLIENT_INFO }, { capabilities: { elicitation: { form: {}, url: {} } }, jsonSchemaValidator: permissiveSchemaValidator });
  setup?.(client);
  return client;
}

function httpOptions(server: ResolvedMcpServer, options: TransportOptions) {
  const authProvider =
    server.auth === "oauth"
      ? new FileOAuthProvider({ home: options.home, server: server.name, onAuthorizationUrl: options.onAuthorizationUrl })
      : undefined;
  return {
    requestInit: { headers: { ...(server.headers ?? {}) } },
    redirectPolicy: "same-origin" as const,
    ...(authProvider === undefined ? {} : { authProvider }),
  };
}

/**
 * The URL answers with a web page: a typo'd path, a login portal, a documentation site. Retrying
 * (or falling back to SSE) cannot help, so the server is parked at once with this reason. This is
 * judged from the answer to `initialize` itself, so it costs no extra request (hermes sends a
 * HEAD/GET preflight first and needs `skip_preflight` for servers that mishandle it).
 */
export class NotAnMcpEndpointError extends Error {
  override readonly name = "NotAnMcpEndpointError";
  constructor(url: string) {
    super(`${url} is not an MCP endpoint (it answers with an HTML page); check the url`);
  }
}

function looksLikeHtml(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /content type: text\/html|<!doctype html|<html[\s>]/i.test(message);
}

/** Whether a Streamable HTTP failure means "this endpoint speaks the older SSE transport". */
function wantsSseFallback(error: unknown): boolean {
  if (error instanceof UnauthorizedError) return false;
  return error instanceof StreamableHTTPError && (error.code === 404 || error.code === 405);
}

/**
 * Connects a new client to `server` (spawning the stdio child or adopting the one launched early,
 * or opening HTTP), bounded by
 * `server.connectTimeoutMs`. Throws what the transport or `initialize` threw; a half-open transport is
 * closed first, so a failed attempt leaves no process.
 */
export async function connectServer(
  server: ResolvedMcpServer,
  options: TransportOptions,
  signal?: AbortSignal,
  setup?: (client: Client) => void,
): Promise<Connected> {
  const requestOptions = { timeout: server.connectTimeoutMs, ...(signal === undefined ? {} : { signal }) };
  if (server.transport === "stdio") {
    const spawned = options.takeSpawned?.();
    const transport =
      spawned !== undefined
        ? ProcessGroupStdioTransport.adopt(spawned)
        : new ProcessGroupStdioTransport(stdioProcessOptions(server, options.env ?? process.env, options.home));
    const client = createClient(setup);
    try {
      await client.connect(transport, requestOptions);
    } catch (error) {
      await transport.close().catch(() => undefined);
      const tail = transport.stderrTail.trim();
      if (tail !== "" && error instanceof Error) error.message += ` (server stderr: ${tail.slice(-500)})`;
      throw error;
    }
    return { client, transport, kind: "stdio", pid: transport.pid, stderrTail: () => transport.stderrTail };
  }

  const url = new URL(server.url!);
  if (server.transport === "http") {
    const transport = new StreamableHTTPClientTransport(url, httpOptions(server, options));
    const client = createClient(setup);
    try {
      await client.connect(transport, requestOptions);
      return { client, transport, kind: "http" };
    } catch (error) {
      await transport.close().catch(() => undefined);
      if (looksLikeHtml(error)) throw new NotAnMcpEndpointError(server.url!);
      if (!wantsSseFallback(error)) throw error;
    }
  }
  const transport = new SSEClientTransport(url, httpOptions(server, options));
  const client = createClient(setup);
  try {
    await client.connect(transport, requestOptions);
  } catch (error) {
    await transport.close().catch(() => undefined);
    if (looksLikeHtml(error)) throw new NotAnMcpEndpointError(server.url!);
    throw error;
  }
  return { client, transport, kind: "sse" };
}

/**
 * Completes an `auth: oauth` authorisation: trades the `code` the authorisation server sent to the
 * redirect URL for tokens (with the PKCE verifier and client registration kept in the token file),
 * which the provider stores. The caller then reconnects.
 */
export async function finishOAuth(server: ResolvedMcpServer, options: TransportOptions, code: string): Promise<void> {
  if (server.auth !== "oauth" || server.url === undefined) throw new Error(`MCP server '${server.name}' is not configured with auth: oauth`);
  const transport = new StreamableHTTPClientTransport(new URL(server.url), httpOptions(server, options));
  await transport.finishAuth(code);
}

/** Whether an error means an HTTP session the server no longer knows (404 on a request that carried a session id). */
export function isSessionExpired(error: unknown): boolean {
  if (error instanceof StreamableHTTPError && error.code === 404) return true;
  const message = error instanceof Error ? error.message : String(error);
  return /session not found|unknown session|invalid session/i.test(message);
}

/** Errors another attempt cannot fix: a person must act (OAuth) or the configuration is wrong (not an MCP endpoint). */
export function isPermanentConnectError(error: unknown): boolean {
  return error instanceof UnauthorizedError || error instanceof NotAnMcpEndpointError;
}
