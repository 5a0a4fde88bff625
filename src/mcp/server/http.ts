/**
 * Streamable HTTP on node:http, with the SDK's server transport. Every request passes http-guard.ts
 * first (Host, Origin, bearer token). Two modes:
 * - sessions (default): an `initialize` without `Mcp-Session-Id` opens a session (its own transport and
 *   SDK `Server`, a random id in the `Mcp-Session-Id` header); later requests carry the id; DELETE ends
 *   the session; an unknown id is 404 (the client starts over).
 * - stateless: every POST gets a new transport and server, answered and closed; no session ids, and so
 *   no elicitation (the server cannot know the client's capabilities) — dangerous commands are refused.
 * Binds 127.0.0.1 unless told otherwise; an address other than loopback needs a token.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";

import type { Logger } from "../../registry/types.js";
import { allowedHostsFor, checkRequest, type GuardOptions } from "./http-guard.js";
import type { McpHttpOptions, McpHttpServer } from "./types.js";

/** Largest request body read (a tool call's arguments); more is 413. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export class McpHttpConfigError extends Error {
  override readonly name = "McpHttpConfigError";
}

interface Deps {
  /** A fresh SDK server; `stateless`: for one request, not a session. */
  newServer: (stateless: boolean) => Server;
  logger: Logger;
  onSessionClosed: (sessionId: string) => void;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/i;

function sendError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}, code = -32000): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  // After a refused body the connection is not reused: its rest is being dropped.
  res.writeHead(status, { "Content-Type": "application/json", ...(status === 413 ? { Connection: "close" } : {}), ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

/** The body as JSON; over MAX_BODY_BYTES it is 413, and the rest is read and dropped (closing unread would reset the connection before the client reads the answer). */
async function readBody(req: IncomingMessage): Promise<unknown> {
  const tooBig = (): Error => {
    req.resume();
    return Object.assign(new Error(`Payload too large: the request body is over ${MAX_BODY_BYTES} bytes`), { status: 413 });
  };
  if (Number(req.headers["content-length"] ?? 0) > MAX_BODY_BYTES) throw tooBig();
  const text = await new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) return void chunks.push(chunk);
      req.off("data", onData);
      chunks.length = 0;
      reject(tooBig());
    };
    req.on("data", onData);
    req.once("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.once("error", reject);
  });
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw Object.assign(new Error("Parse error: the body is not JSON"), { status: 400, code: -32700 });
  }
}

export async function listenHttp(options: McpHttpOptions, deps: Deps): Promise<McpHttpServer> {
  const host = options.host ?? "127.0.0.1";
  const path = options.path ?? "/mcp";
  if (!LOOPBACK.test(host) && (options.token === undefined || options.token === "")) {
    throw new McpHttpConfigError(`binding ${host} (not a loopback address) needs a bearer token: anyone who can reach it could run commands`);
  }
  const sessions = new Map<string, Session>();
  let guard: GuardOptions | undefined;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const refusal = checkRequest(req, guard!);
    if (refusal !== undefined) return sendError(res, refusal.status, refusal.message, refusal.headers);
    const url = new URL(req.url ?? "/", "http://localhost");
    if (url.pathname !== path) return sendError(res, 404, `Not found: the MCP endpoint is ${path}`);
    const body = req.method === "POST" ? await readBody(req) : undefined;

    if (options.stateless === true) {
      if (req.method !== "POST") return sendError(res, 405, "Method not allowed: this server is stateless (POST only)", { Allow: "POST" });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      const server = deps.newServer(true);
      res.on("close", () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      return transport.handleRequest(req, res, body);
    }

    const id = req.headers["mcp-session-id"];
    if (typeof id === "string") {
      const session = sessions.get(id);
      if (session === undefined) return sendError(res, 404, "Session not found: initialize a new session");
      return session.transport.handleRequest(req, res, body);
    }
    if (req.method !== "POST" || !isInitializeRequest(body)) {
      return sendError(res, 400, "Bad request: no Mcp-Session-Id; start with an initialize request");
    }
    const server = deps.newServer(false);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, { transport, server });
      },
    });
    transport.onclose = () => {
      const sessionId = transport.sessionId;
      if (sessionId === undefined || !sessions.delete(sessionId)) return;
      deps.onSessionClosed(sessionId);
      // The Server's own onclose ends its gate sessions; closing it aborts its running calls.
      void server.close();
    };
    await server.connect(transport);
    return transport.handleRequest(req, res, body);
  }

  const http = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const status = (err as { status?: number }).status ?? 500;
      if (status === 500) deps.logger.error(`mcp server: HTTP request failed: ${err instanceof Error ? err.message : String(err)}`);
      const code = (err as { code?: unknown }).code;
      sendError(res, status, err instanceof Error ? err.message : String(err), {}, typeof code === "number" ? code : -32000);
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port ?? 0, host, () => {
      http.off("error", reject);
      resolve();
    });
  });
  const port = (http.address() as AddressInfo).port;
  guard = { ...allowedHostsFor(host, port, options.allowedHosts, options.allowedOrigins), token: options.token };
  const shownHost = host.includes(":") ? `[${host}]` : host;
  const url = `http://${shownHost}:${port}${path}`;

  return {
    url,
    port,
    get sessionCount() {
      return sessions.size;
    },
    async close() {
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.all(open.map(async ({ transport, server }) => {
        await transport.close().catch(() => undefined);
        await server.close().catch(() => undefined);
      }));
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
    },
  };
}
