/** Registries of many MCP-like and plugin tools for the tool-search tests (real registrations, real handlers). */

import { ToolRegistry } from "../src/registry/tool-registry.js";
import type { ToolRegistry as Registry } from "../src/registry/tool-registry.js";
import { createMemoryLogger } from "../src/util/logger.js";

export interface Ran {
  name: string;
  args: Record<string, unknown>;
}

export function newRegistry(): Registry {
  return new ToolRegistry({ logger: createMemoryLogger() });
}

const VERBS = ["create", "list", "get", "update", "delete", "search", "close", "merge"];
const NOUNS = ["issue", "pull_request", "branch", "commit", "release", "label", "milestone"];

/** `mcp__<server>__<verb>_<noun>` tools registered as the MCP client does (toolset `mcp-<server>`, source mcp). */
export function registerGithubLike(registry: Registry, server: string, ran: Ran[], count = 50): string[] {
  const names: string[] = [];
  for (let i = 0; names.length < count; i++) {
    const verb = VERBS[i % VERBS.length]!;
    const noun = NOUNS[Math.floor(i / VERBS.length) % NOUNS.length]!;
    const suffix = i >= VERBS.length * NOUNS.length ? `_${i}` : "";
    const name = `mcp__${server}__${verb}_${noun}${suffix}`;
    registerMcpTool(registry, server, name, `${capital(verb)} a ${server} ${noun.replace("_", " ")} in a repository.`, ran, {
      owner: { type: "string" },
      repo: { type: "string" },
    });
    names.push(name);
  }
  return names;
}

export function registerMcpTool(
  registry: Registry,
  server: string,
  name: string,
  description: string,
  ran: Ran[],
  properties: Record<string, unknown> = {},
  required: string[] = [],
): void {
  const entry = registry.register({
    name,
    toolset: `mcp-${server}`,
    source: { kind: "mcp", server },
    schema: { name, description, parameters: { type: "object", properties, required } },
    handler: (args: Record<string, unknown>) => {
      ran.push({ name, args });
      return JSON.stringify({ ok: true, tool: name, args });
    },
  });
  if (entry === undefined) throw new Error(`registration of ${name} was refused`);
}

export function registerPluginTool(registry: Registry, plugin: string, name: string, description: string, ran: Ran[]): void {
  const entry = registry.register({
    name,
    toolset: plugin,
    source: { kind: "plugin", id: plugin },
    schema: { name, description, parameters: { type: "object", properties: { text: { type: "string" } } } },
    handler: (args: Record<string, unknown>) => {
      ran.push({ name, args });
      return `plugin ${name} ran`;
    },
  });
  if (entry === undefined) throw new Error(`registration of ${name} was refused`);
}

/** A tool registered in code (source user), like the application's own. */
export function registerUserTool(registry: Registry, toolset: string, name: string, ran: Ran[]): void {
  registry.register({
    name,
    toolset,
    schema: { name, description: `The application's ${name}.`, parameters: { type: "object", properties: { path: { type: "string" } } } },
    handler: (args: Record<string, unknown>) => {
      ran.push({ name, args });
      return `${name} ran`;
    },
  });
}

function capital(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}
