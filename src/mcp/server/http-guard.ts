/**
 * The checks every HTTP request passes before the MCP transport sees it:
 * - `Host` must name this server (a loopback name or the bound address, with the bound port). A web
 *   page on evil.example that rebinds its DNS name to 127.0.0.1 still sends `Host: evil.example`, so
 *   DNS rebinding reaches nothing (403). Checked here rather than by the SDK's option, which compares
 *   the header to a fixed list and cannot know a port chosen at bind time.
 * - `Origin`, when present (browsers send it), must be `http://<one of those hosts>` or listed: another
 *   site's page cannot drive the server from the user's browser (403).
 * - with a token, `Authorization: Bearer <token>`, compared in constant time (hashes of equal length,
 *   `timingSafeEqual`), so response timing does not leak the token a byte at a time (401).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

export interface GuardOptions {
  /** Accepted `Host` values (host:port, lowercase). */
  hosts: ReadonlySet<string>;
  /** Accepted `Origin` values (lowercase, no trailing slash). */
  origins: ReadonlySet<string>;
  token?: string | undefined;
}

export interface GuardRefusal {
  status: 401 | 403;
  message: string;
  headers?: Record<string, string>;
}

const LOOPBACK_NAMES = ["127.0.0.1", "localhost", "[::1]"];

/** The `Host` values a server bound to `host:port` accepts, and the matching origins. */
export function allowedHostsFor(host: string, port: number, extraHosts: readonly string[] = [], extraOrigins: readonly string[] = []): Pick<GuardOptions, "hosts" | "origins"> {
  const bound = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  const names = new Set([...LOOPBACK_NAMES, bound.toLowerCase()]);
  const hosts = new Set([...names].map((name) => `${name}:${port}`));
  for (const extra of extraHosts) hosts.add(extra.toLowerCase());
  const origins = new Set([...hosts].map((h) => `http://${h}`));
  for (const extra of extraOrigins) origins.add(extra.toLowerCase().replace(/\/+$/, ""));
  return { hosts, origins };
}

const digest = (value: string): Buffer => createHash("sha256").update(value, "utf8").digest();

/** Whether `presented` equals `expected`, in time independent of where they differ. */
export function tokensMatch(presented: string, expected: string): boolean {
  return timingSafeEqual(digest(presented), digest(expected));
}

export function checkRequest(req: IncomingMessage, options: GuardOptions): GuardRefusal | undefined {
  const host = req.headers.host?.toLowerCase();
  if (host === undefined || !options.hosts.has(host)) {
    return { status: 403, message: `Forbidden: Host header ${JSON.stringify(req.headers.host ?? "")} does not name this server` };
  }
  const origin = req.headers.origin;
  if (origin !== undefined && !options.origins.has(origin.toLowerCase().replace(/\/+$/, ""))) {
    return { status: 403, message: `Forbidden: Origin ${JSON.stringify(origin)} is not allowed` };
  }
  if (options.token !== undefined) {
    const header = req.headers.authorization ?? "";
    const match = /^Bearer\s+(.+)$/i.exec(header);
    if (match === null || !tokensMatch(match[1]!.trim(), options.token)) {
      return { status: 401, message: "Unauthorized: a valid bearer token is required", headers: { "WWW-Authenticate": 'Bearer realm="mibyan-mcp"' } };
    }
  }
  return undefined;
}
