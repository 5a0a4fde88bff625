/**
 * A server's tools in the registry: which are offered, under which names, and who wins a name.
 *
 * - Listing walks every page of `tools/list` (a server may page; hermes read only the first).
 * - `tools.include` / `tools.exclude` match raw names; include wins.
 * - Names: `mcp__<server>__<tool>` (naming.ts), schemas normalised (schema.ts), description
 *   `MCP tool <tool> from <server>` when the server gives none; an injection-looking description is
 *   logged (security.ts) and the tool still registered.
 * - Collisions. A name another party owns (a built-in, user code, a plugin, another server's tool:
 *   `foo-bar` and `foo_bar` both map to `mcp__foo_bar__…`) → this tool is skipped with a warning and the
 *   first owner stays; both are never dropped (hermes #73668 dropped the whole group). Within one server,
 *   two raw names mapping to one name (`read-file`, `read_file`) → both skipped with an error: neither
 *   can be called unambiguously. A native tool named like a utility (`read_resource`) keeps the name and
 *   the utility is left out (hermes #87112 dropped both).
 * - Utilities `list_resources` / `read_resource` / `list_prompts` / `get_prompt` only when the config
 *   allows them and the server's capabilities include resources / prompts (#18051).
 * - Toolset `mcp-<server>`, and the alias `<server>` (a defined toolset including it), only while at
 *   least one tool is registered; the alias is not defined over a built-in or another party's toolset
 *   (hermes #30563 shadowed them silently).
 * - `apply` replaces the previous set: changed tools are re-registered in place, stale ones removed.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { ServerCapabilities, Tool } from "@modelcontextprotocol/sdk/types.js";

import type { ToolRegistry } from "../../registry/tool-registry.js";
import type { JsonSchema, Logger, ToolHandler } from "../../registry/types.js";
import { describeSource } from "../../registry/source.js";
import { mcpToolName, mcpToolsetName, MCP_UTILITY_TOOLS } from "./naming.js";
import { normalizeMcpInputSchema } from "./schema.js";
import { scanToolDescription } from "./security.js";
import type { ResolvedMcpServer } from "./server-config.js";
import { UTILITY_SCHEMAS, type UtilityKind } from "./utilities.js";

/** A server that pages forever is cut off here (and the tools seen so far are used). */
const MAX_PAGES = 1_000;

/** Every tool of the server, following `nextCursor` through all pages. */
export async function listAllTools(client: Client, options?: { timeout?: number }): Promise<Tool[]> {
  const tools: Tool[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await client.listTools(cursor === undefined ? undefined : { cursor }, options);
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (cursor === undefined || cursor === "" || seen.has(cursor)) break;
    seen.add(cursor);
  }
  return tools;
}

export interface ServerHandlers {
  tool(rawName: string): ToolHandler;
  utility(kind: UtilityKind): ToolHandler;
}

export interface ApplyOutcome {
  registered: string[];
  added: string[];
  removed: string[];
  /** `full name → registered name` for names shortened to 64 characters. */
  shortened: Record<string, string>;
}

interface Candidate {
  name: string;
  description: string;
  parameters: JsonSchema;
  handler: ToolHandler;
  raw: string;
  /** Set for a generated utility tool. */
  utility?: UtilityKind;
}

export class ServerTools {
  readonly toolset: string;
  /** Registry names this server owns now. */
  readonly owned = new Set<string>();
  /** Output schemas of the current tools, by raw name (read by the handlers on each call). */
  readonly outputSchemas = new Map<string, JsonSchema>();
  private aliasDefined = false;
  private readResource: string | undefined;

  constructor(
    private readonly server: ResolvedMcpServer,
    private readonly registry: ToolRegistry,
    private readonly logger: Logger,
    private readonly handlers: ServerHandlers,
  ) {
    this.toolset = mcpToolsetName(server.name);
  }

  get count(): number {
    return this.owned.size;
  }

  /** The registry name of the `read_resource` utility, when registered. */
  get readResourceTool(): string | undefined {
    return this.readResource;
  }

  private isOurs(name: string): boolean {
    const entry = this.registry.get(name);
    return entry !== undefined && entry.source.kind === "mcp" && entry.source.server === this.server.name;
  }

  /** Registers `tools` (and the utilities the capabilities allow) in place of the previous set. */
  apply(tools: readonly Tool[], capabilities: ServerCapabilities | undefined): ApplyOutcome {
    const name = this.server.name;
    const shortened: Record<string, string> = {};
    const candidates = new Map<string, Candidate[]>();
    const add = (candidate: Candidate): void => {
      const group = candidates.get(candidate.name);
      if (group === undefined) candidates.set(candidate.name, [candidate]);
      else group.push(candidate);
    };
    this.outputSchemas.clear();
    for (const tool of tools) {
      if (!this.offered(tool.name)) continue;
      const mapped = mcpToolName(name, tool.name);
      if (mapped.shortened) shortened[`mcp__${name}__${tool.name}`] = mapped.name;
      const description = typeof tool.description === "string" && tool.description.trim() !== "" ? tool.description : `MCP tool ${tool.name} from ${name}`;
      for (const finding of scanToolDescription(description)) {
        this.logger.warn(`MCP server '${name}': the description of tool "${tool.name}" looks like a prompt injection (${finding}); registered anyway, review the server`);
      }
      if (tool.outputSchema !== undefined) this.outputSchemas.set(tool.name, tool.outputSchema as JsonSchema);
      add({ name: mapped.name, description, parameters: normalizeMcpInputSchema(tool.inputSchema as JsonSchema), handler: this.handlers.tool(tool.name), raw: tool.name });
    }
    for (const [mapped, full] of Object.entries(shortened)) {
      this.logger.info(`MCP server '${name}': tool name ${mapped} is over 64 characters; registered as ${full}`);
    }

    // Two raw names of this server for one registry name: neither can be called unambiguously.
    for (const [mapped, group] of candidates) {
      if (group.length < 2) continue;
      this.logger.error(
        `MCP server '${name}': tools ${group.map((c) => `"${c.raw}"`).join(" and ")} all map to ${mapped}; none of them is registered (rename them on the server)`,
      );
      candidates.delete(mapped);
    }

    for (const kind of this.utilities(capabilities)) {
      const mapped = mcpToolName(name, MCP_UTILITY_TOOLS[kind]).name;
      if (candidates.has(mapped)) {
        this.logger.warn(`MCP server '${name}' has its own tool named ${MCP_UTILITY_TOOLS[kind]}; the generated utility is left out`);
        continue;
      }
      const schema = UTILITY_SCHEMAS[kind];
      add({ name: mapped, description: schema.description(name), parameters: schema.parameters, handler: this.handlers.utility(kind), raw: MCP_UTILITY_TOOLS[kind], utility: kind });
    }

    const previous = new Set(this.owned);
    const registered: string[] = [];
    const added: string[] = [];
    this.readResource = undefined;
    for (const [mapped, [candidate]] of candidates) {
      if (this.register(mapped, candidate!)) {
        registered.push(mapped);
        if (!previous.has(mapped)) added.push(mapped);
        // Resource links point at our utility only: a server's own read_resource takes its own arguments.
        if (candidate!.utility === "readResource") this.readResource = mapped;
      }
    }
    const keep = new Set(registered);
    const removed: string[] = [];
    for (const old of previous) {
      if (keep.has(old)) continue;
      if (this.isOurs(old)) this.registry.deregister(old);
      this.owned.delete(old);
      removed.push(old);
    }
    this.updateAlias();
    return { registered, added, removed, shortened };
  }

  /** Removes every tool of this server (parked, closed) and its alias. */
  clear(): string[] {
    const removed: string[] = [];
    for (const name of this.owned) {
      if (this.isOurs(name)) this.registry.deregister(name);
      removed.push(name);
    }
    this.owned.clear();
    this.readResource = undefined;
    this.updateAlias();
    return removed;
  }

  private offered(raw: string): boolean {
    const { include, exclude } = this.server;
    if (include !== undefined) return include.has(raw);
    return exclude === undefined || !exclude.has(raw);
  }

  private utilities(capabilities: ServerCapabilities | undefined): UtilityKind[] {
    const kinds: UtilityKind[] = [];
    if (this.server.resources && capabilities?.resources != null) kinds.push("listResources", "readResource");
    if (this.server.prompts && capabilities?.prompts != null) kinds.push("listPrompts", "getPrompt");
    return kinds;
  }

  private register(mapped: string, candidate: Candidate): boolean {
    const existing = this.registry.get(mapped);
    if (existing !== undefined && !this.isOurs(mapped)) {
      this.logger.warn(
        `MCP server '${this.server.name}': tool "${candidate.raw}" would be ${mapped}, which ${describeSource(existing.source)} already provides (toolset "${existing.toolset}"); skipped, the first owner stays`,
      );
      return false;
    }
    try {
      const entry = this.registry.register({
        name: mapped,
        toolset: this.toolset,
        schema: { description: candidate.description, parameters: candidate.parameters },
        handler: candidate.handler,
        source: { kind: "mcp", server: this.server.name },
        parallelSafe: this.server.parallel,
        // The call enforces the server's own timeout, which progress extends; the registry's would not.
        timeoutMs: 0,
      });
      if (entry === undefined) return false;
    } catch (error) {
      this.logger.error(`MCP server '${this.server.name}': tool "${candidate.raw}" not registered: ${error instanceof Error ? error.message : String(error)}`);
      return false;
    }
    this.owned.add(mapped);
    return true;
  }

  private updateAlias(): void {
    const alias = this.server.name;
    const catalog = this.registry.toolsets;
    if (this.owned.size === 0) {
      if (this.aliasDefined) catalog.remove(alias);
      this.aliasDefined = false;
      return;
    }
    if (this.aliasDefined || alias === this.toolset) return;
    const origin = catalog.origin(alias);
    if (origin !== undefined) {
      this.logger.warn(`MCP server '${alias}': no toolset alias "${alias}", a ${origin} toolset has that name; select its tools with "${this.toolset}"`);
      return;
    }
    catalog.define({ name: alias, description: `MCP server ${alias} (alias of ${this.toolset})`, tools: [], includes: [this.toolset] });
    this.aliasDefined = true;
  }
}
