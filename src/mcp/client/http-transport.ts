/**
 * The HTTP side of `connectServer` (transport.ts): Streamable HTTP with the entry's headers, falling
 * back to SSE when the endpoint answers the first POST with 404 or 405 (an older server that only
 * speaks SSE), as the SDK's own client example does; `transport: sse` is SSE only. `auth: oauth` uses
 * the SDK's OAuth client with our file-backed provider (oauth-provider.ts); an `UnauthorizedError`
 * is not a reason to fall back to SSE.
 *
 * Redirects stay on the endpoint's origin (`redirectPolicy: "same-origin"`): a configured header may
 * carry a token, and a redirect must not hand it to another host.
 *
 * A module of its own, loaded on first use: the SDK's HTTP transports and OAuth client are about 40 ms
 * of loading that a configuration of stdio servers only never needs.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

import { NotAnMcpEndpointError } from "./errors.js";
import { FileOAuthProvider } from "./oauth-provider.js";
import type { ResolvedMcpServer } from "./server-config.js";

export interface HttpConnectOptions {
  home: string;
  onAuthorizationUrl?: ((server: string, url: URL) => void) | undefined;
}

function httpOptions(server: ResolvedMcpServer, options: HttpConnectOptions) {
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

function looksLikeHtml(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /content type: text\/html|<!doctype html|<html[\s>]/i.test(message);
}

/** Whether a Streamable HTTP failure means "this endpoint speaks the older SSE transport". */
function wantsSseFallback(error: unknown): boolean {
  if (error instanceof UnauthorizedError) return false;
  return error instanceof StreamableHTTPError && (error.code === 404 || error.code === 405);
}

/** Connects `client` (made by `makeClient`, once per try) over HTTP or SSE; see transport.ts `connectServer`. */
export async function connectHttp(
  server: ResolvedMcpServer,
  options: HttpConnectOptions,
  makeClient: () => Client,
  requestOptions: { timeout: number; signal?: AbortSignal },
): Promise<{ client: Client; transport: Transport; kind: "http" | "sse" }> {
  const url = new URL(server.url!);
  if (server.transport === "http") {
    const transport = new StreamableHTTPClientTransport(url, httpOptions(server, options));
    const client = makeClient();
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
  const client = makeClient();
  try {
    await client.connect(transport, requestOptions);
  } catch (error) {
    await transport.close().catch(() => undefined);
    if (looksLikeHtml(error)) throw new NotAnMcpEndpointError(server.url!);
    throw error;
  }
  return { client, transport, kind: "sse" };
}

/** See transport.ts `finishOAuth`. */
export async function finishHttpOAuth(server: ResolvedMcpServer, options: HttpConnectOptions, code: string): Promise<void> {
  const transport = new StreamableHTTPClientTransport(new URL(server.url!), httpOptions(server, options));
  await transport.finishAuth(code);
}

/** A 404 from the Streamable HTTP transport (on a request that carried a session id: the session is gone). */
export function isHttpNotFound(error: unknown): boolean {
  return error instanceof StreamableHTTPError && error.code === 404;
}

export function isUnauthorized(error: unknown): boolean {
  return error instanceof UnauthorizedError;
}
