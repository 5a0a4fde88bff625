/**
 * `mcp_servers.<name>` as the connection code needs it: variables expanded, the transport chosen,
 * defaults filled in, filters as sets, and the entry refused when its command line looks like an
 * attack (security.ts). The config loader has already checked every value's type (config-rules.ts);
 * this module decides what the combination of values means.
 *
 * An entry that cannot be started (neither `command` nor `url`, `transport: sse` without `url`, a
 * URL that is not http(s) once its variables are expanded, a suspicious command line) is not an
 * exception: it comes back with `refusal` set, and its reason is shown by `mibyan mcp list` and
 * logged through `warn`. One broken entry must not hide the other servers' tools (hermes logs and
 * skips such an entry too; a silently missing server was hermes #19179).
 */
import type { McpServerConfig } from "../../config/config-types.js";
import { boolishValue } from "../../config/value-types.js";
import type { EnvVars } from "../../util/env-vars.js";
import { expandEnvVars } from "./environment.js";
import { suspiciousStdioCommand } from "./security.js";

export interface ResolvedMcpServer {
  /** The key under `mcp_servers`, as configured. */
  name: string;
  transport: "stdio" | "http" | "sse";
  /** stdio: program, arguments, variables added to the minimal environment, working directory (all expanded). */
  command?: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  /** http / sse: endpoint and headers (expanded). */
  url?: string;
  headers: Record<string, string>;
  auth?: "oauth";
  enabled: boolean;
  /** Per-call limit (config `timeout`, seconds); default 300 s. */
  timeoutMs: number;
  /** Connect + initialise limit (config `connect_timeout`, seconds); default 60 s. */
  connectTimeoutMs: number;
  /** Raw MCP tool names to offer; absent = all. An empty `include` list counts as absent (as in hermes). */
  include?: ReadonlySet<string>;
  /** Raw MCP tool names never to offer (`include` wins). */
  exclude?: ReadonlySet<string>;
  /** Offer the resource / prompt utility tools when the server has them. */
  resources: boolean;
  prompts: boolean;
  /** `supports_parallel_tool_calls`. */
  parallel: boolean;
  /** Set when the entry must not be started or connected; the server is listed with this reason. */
  refusal?: string;
}

export const DEFAULT_MCP_TIMEOUT_MS = 300_000;
export const DEFAULT_MCP_CONNECT_TIMEOUT_MS = 60_000;

export interface ResolveMcpServersOptions {
  /** Variables for `${VAR}` expansion (usually `process.env`). */
  env: EnvVars;
  /** Told about each refused entry and each questionable value. */
  warn?: (message: string) => void;
}

/** Every configured server, in configured order, resolved. Never throws. */
export function resolveMcpServers(config: Readonly<Record<string, McpServerConfig>>, options: ResolveMcpServersOptions): ResolvedMcpServer[] {
  const warn = options.warn ?? (() => {});
  if (config === null || typeof config !== "object") return [];
  return Object.keys(config).map((name) => resolveMcpServer(name, config[name], options.env, warn));
}

/** One entry, resolved. Never throws. */
export function resolveMcpServer(name: string, raw: McpServerConfig | undefined, env: EnvVars, warn: (message: string) => void = () => {}): ResolvedMcpServer {
  const entry = (raw !== null && typeof raw === "object" ? expandEnvVars(raw, env) : {}) as McpServerConfig;
  const tools = entry.tools !== null && typeof entry.tools === "object" ? entry.tools : {};
  const server: ResolvedMcpServer = {
    name,
    transport: "stdio",
    args: [],
    env: {},
    headers: {},
    enabled: enabledValue(name, entry.enabled, warn),
    timeoutMs: secondsToMs(entry.timeout, DEFAULT_MCP_TIMEOUT_MS),
    connectTimeoutMs: secondsToMs(entry.connectTimeout, DEFAULT_MCP_CONNECT_TIMEOUT_MS),
    resources: tools.resources !== false,
    prompts: tools.prompts !== false,
    parallel: entry.supportsParallelToolCalls === true,
  };
  const include = nameSet(tools.include);
  if (include !== undefined) server.include = include;
  const exclude = nameSet(tools.exclude);
  if (exclude !== undefined) server.exclude = exclude;
  if (entry.auth === "oauth") server.auth = "oauth";

  const command = nonEmpty(entry.command);
  const url = nonEmpty(entry.url);
  const refuse = (reason: string): ResolvedMcpServer => {
    server.refusal = reason;
    warn(refusalWarning(name, reason));
    return server;
  };

  if (url !== undefined) {
    if (command !== undefined) warn(`MCP server '${name}' sets both command and url; using url (${entry.transport ?? "http"})`);
    server.transport = entry.transport === "sse" ? "sse" : "http";
    server.url = url;
    server.headers = stringRecord(entry.headers);
    if (!isHttpUrl(url)) return refuse(`url ${JSON.stringify(url.slice(0, 200))} is not an http(s) URL${url.includes("${") ? " (a variable in it is not set)" : ""}`);
    return server;
  }
  if (entry.transport === "sse") return refuse("transport: sse needs a url");
  if (command === undefined) return refuse("neither command (stdio) nor url (HTTP) is set");
  server.command = command;
  server.args = Array.isArray(entry.args) ? entry.args.map((arg) => String(arg)) : [];
  server.env = stringRecord(entry.env);
  const cwd = nonEmpty(entry.cwd);
  if (cwd !== undefined) server.cwd = cwd;
  if (entry.transport === "http") warn(`MCP server '${name}' sets transport: http without a url; starting it over stdio`);
  const suspicious = suspiciousStdioCommand(server.command, server.args);
  if (suspicious !== undefined) return refuse(suspicious);
  return server;
}

/** The warning for an entry that is not started. */
export function refusalWarning(name: string, reason: string): string {
  return `MCP server '${name}' is not started: ${reason}`;
}

const TRUE_WORDS = new Set(["true", "yes", "on", "1"]);
const FALSE_WORDS = new Set(["false", "no", "off", "0"]);

/** `enabled` through `boolishValue`; a value it does not know means the default (true), with a warning. */
function enabledValue(name: string, value: unknown, warn: (message: string) => void): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value === "boolean") return value;
  if (typeof value === "string" || typeof value === "number") {
    const word = String(value).trim().toLowerCase();
    if (TRUE_WORDS.has(word) || FALSE_WORDS.has(word)) return boolishValue(value);
  }
  warn(`MCP server '${name}': enabled: ${JSON.stringify(value)} is not a boolean; the server stays enabled`);
  return true;
}

function secondsToMs(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.round(value * 1000) : fallback;
}

function nameSet(value: unknown): ReadonlySet<string> | undefined {
  const names = typeof value === "string" ? [value] : Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  return names.length === 0 ? undefined : new Set(names);
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
}

function stringRecord(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (value === null || typeof value !== "object" || Array.isArray(value)) return out;
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === "string") Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}
