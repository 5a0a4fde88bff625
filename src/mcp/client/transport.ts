/**
 * From a resolved server entry to a connected SDK `Client`: which transport, built how.
 *
 * - stdio: our process-group transport (stdio-transport.ts) with the minimal environment
 *   (environment.ts) and stderr appended to `$MIBYAN_HOME/logs/mcp/<server>.log` (last 4 KiB kept in
 *   memory for error messages); the first connection adopts the child launch.ts spawned early.
 * - `transport: http` (the default for `url`) and `transport: sse`: http-transport.ts, loaded on first
 *   use (Streamable HTTP with SSE fallback, OAuth, same-origin redirects only).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

import type { EnvVars } from "../../util/env-vars.js";
import { NotAnMcpEndpointError } from "./errors.js";
import { stdioProcessOptions } from "./launch.js";
import { ProcessGroupStdioTransport } from "./stdio-transport.js";
import { stderrLogPath, type StdioServerProcess } from "./stdio-process.js";
import type { ResolvedMcpServer } from "./server-config.js";
import { permissiveSchemaValidator } from "./output-schema.js";

export { NotAnMcpEndpointError, stderrLogPath };

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

/** The HTTP half, once something needed it (until then no error can come from it). */
let http: typeof import("./http-transport.js") | undefined;
async function loadHttp(): Promise<typeof import("./http-transport.js")> {
  http ??= await import("./http-transport.js");
  return http;
}

/** A fresh SDK client. Output schemas are checked by us, leniently (output-schema.ts), never by the SDK. */
export function createClient(setup?: (client: Client) => void): Client {
  // Elicitation in both modes, so a URL request reaches our handler and is declined there (elicitation.ts).
  const client = new Client({ ...CLIENT_INFO }, { capabilities: { elicitation: { form: {}, url: {} } }, jsonSchemaValidator: permissiveSchemaValidator });
  setup?.(client);
  return client;
}

/**
 * Connects a new client to `server` (spawning the stdio child or adopting the one launched early,
 * or opening HTTP), bounded by `server.connectTimeoutMs`. Throws what the transport or `initialize`
 * threw; a half-open transport is closed first, so a failed attempt leaves no process.
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
  return (await loadHttp()).connectHttp(server, options, () => createClient(setup), requestOptions);
}

/**
 * Completes an `auth: oauth` authorisation: trades the `code` the authorisation server sent to the
 * redirect URL for tokens (with the PKCE verifier and client registration kept in the token file),
 * which the provider stores. The caller then reconnects.
 */
export async function finishOAuth(server: ResolvedMcpServer, options: TransportOptions, code: string): Promise<void> {
  if (server.auth !== "oauth" || server.url === undefined) throw new Error(`MCP server '${server.name}' is not configured with auth: oauth`);
  await (await loadHttp()).finishHttpOAuth(server, options, code);
}

/** Whether an error means an HTTP session the server no longer knows (404 on a request that carried a session id). */
export function isSessionExpired(error: unknown): boolean {
  if (http?.isHttpNotFound(error) === true) return true;
  const message = error instanceof Error ? error.message : String(error);
  return /session not found|unknown session|invalid session/i.test(message);
}

/** Errors another attempt cannot fix: a person must act (OAuth) or the configuration is wrong (not an MCP endpoint). */
export function isPermanentConnectError(error: unknown): boolean {
  return error instanceof NotAnMcpEndpointError || http?.isUnauthorized(error) === true;
}
