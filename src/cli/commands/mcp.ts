/**
 * `mibyan mcp list` and `mibyan mcp test NAME`, and the MCP lines of `mibyan tools` and `mibyan
 * definitions`: what a person debugging a server needs — its state, why it is not ready, its tools.
 */
import type { Runtime } from "../boot.js";
import { mcpToolsetName } from "../../mcp/client/naming.js";
import type { McpServerStatus } from "../../mcp/client/types.js";
import { closeMatches } from "../../toolsets/suggest.js";

/** The JSON of one server in `mibyan mcp list --json` and `mibyan tools --json`. */
export interface McpServerReport {
  name: string;
  transport: McpServerStatus["transport"];
  state: McpServerStatus["state"];
  toolCount: number;
  toolset: string;
  /** The last connection error, or why the entry is refused or disabled; null when none. */
  error: string | null;
}

export function mcpServerReports(runtime: Runtime): McpServerReport[] {
  return (runtime.mcp?.servers ?? []).map((s) => ({
    name: s.name,
    transport: s.transport,
    state: s.state,
    toolCount: s.toolCount,
    toolset: mcpToolsetName(s.name),
    error: s.refusal ?? s.lastError ?? null,
  }));
}

export function renderMcpServers(reports: readonly McpServerReport[]): string {
  if (reports.length === 0) return "";
  const lines = ["MCP servers (config.yaml mcp_servers; docs/mcp.md):"];
  for (const r of reports) {
    const mark = r.state === "ready" ? "✓" : r.state === "disabled" ? "–" : "✗";
    const tools = r.state === "ready" ? `, ${r.toolCount} tool${r.toolCount === 1 ? "" : "s"} in toolset ${r.toolset}` : "";
    lines.push(`  ${mark} ${r.name} (${r.transport}): ${r.state}${tools}${r.error !== null ? ` — ${r.error}` : ""}`);
  }
  return `${lines.join("\n")}\n`;
}

/**
 * Toolset names that belong to a configured MCP server whose tools are not registered now (still
 * connecting, parked, refused, disabled): `<server>` and `mcp-<server>`, each with why. Selecting one
 * is a warning, not an unknown-toolset error: the name is right, the server is down.
 */
export function offlineMcpToolsets(runtime: Runtime): Map<string, string> {
  const offline = new Map<string, string>();
  const configured = Object.keys(runtime.config.config.mcpServers);
  const statuses = new Map((runtime.mcp?.servers ?? []).map((s) => [s.name, s]));
  for (const name of configured) {
    const status = statuses.get(name);
    if (status !== undefined && status.toolCount > 0) continue;
    const why = status === undefined ? "was not started" : `is ${status.state}${status.refusal ?? status.lastError ? ` (${status.refusal ?? status.lastError})` : ""}`;
    const message = `MCP server '${name}' ${why}; its tools are left out (mibyan mcp test ${name})`;
    offline.set(name, message);
    offline.set(mcpToolsetName(name), message);
  }
  return offline;
}

/** `mibyan mcp list [--json]`: exit 0 (the states are the report, not a failure). */
export function listMcpCommand(runtime: Runtime, json: boolean): number {
  const reports = mcpServerReports(runtime);
  if (json) {
    process.stdout.write(`${JSON.stringify({ servers: reports }, null, 2)}\n`);
  } else if (reports.length === 0) {
    process.stdout.write("No MCP servers are configured (config.yaml mcp_servers; docs/mcp.md).\n");
  } else {
    process.stdout.write(renderMcpServers(reports));
  }
  return 0;
}

/**
 * `mibyan mcp test NAME [--json]`: connects afresh and lists the tools; exit 0 when it worked, 1 when not,
 * 2 for an unknown name. Needs only config.yaml: the built-in tools and plugins are not loaded for it.
 */
export async function testMcpCommand(name: string, json: boolean): Promise<number> {
  const { getConfig } = await import("../../config/load-config.js");
  const config = getConfig();
  for (const warning of config.warnings) process.stderr.write(`mibyan warn: ${warning}\n`);
  const servers = config.config.mcpServers;
  const entry = servers[name];
  if (entry === undefined) {
    const known = Object.keys(servers);
    const suggestions = closeMatches(name, known);
    const hint = suggestions.length > 0 ? `; did you mean ${suggestions.join(", ")}?` : known.length > 0 ? ` (configured: ${known.join(", ")})` : " (none is configured)";
    process.stderr.write(`mibyan: no MCP server named ${JSON.stringify(name)} in config.yaml mcp_servers${hint}\n`);
    return 2;
  }
  const { testMcpServer } = await import("../../mcp/client/test-server.js");
  const result = await testMcpServer(name, entry);
  if (json) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return result.ok ? 0 : 1;
  }
  const took = `${Math.round(result.durationMs)} ms`;
  if (!result.ok) {
    process.stdout.write(`✗ ${name} (${result.transport}): ${result.refusal !== undefined ? `not started: ${result.refusal}` : `failed after ${took}: ${result.error ?? "unknown error"}`}\n`);
    return 1;
  }
  const extras = [result.resources ? "resources" : "", result.prompts ? "prompts" : ""].filter((x) => x !== "");
  const lines = [`✓ ${name} (${result.transport}): connected in ${took}, ${result.tools.length} tool${result.tools.length === 1 ? "" : "s"}${extras.length > 0 ? `; also offers ${extras.join(" and ")}` : ""}`];
  for (const tool of result.tools) {
    const description = tool.description.split("\n")[0]!.slice(0, 100);
    lines.push(`  ${tool.name}${tool.name !== tool.raw ? ` (${tool.raw})` : ""}${description !== "" ? `: ${description}` : ""}`);
  }
  process.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}
