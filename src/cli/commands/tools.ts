import path from "node:path";
import type { Runtime } from "../boot.js";

export interface ToolStatus {
  name: string;
  emoji: string;
  available: boolean;
  reason: string | null;
}

export interface ToolsetStatus {
  name: string;
  description: string;
  available: boolean;
  tools: ToolStatus[];
}

/**
 * Every toolset that has registered tools (or a tool module that failed to
 * load), with each tool's availability and, when unavailable, why.
 */
export function collectToolStatus({ registry, discovery }: Runtime): ToolsetStatus[] {
  const byToolset = new Map<string, ToolStatus[]>();
  const add = (toolset: string, status: ToolStatus): void => {
    const list = byToolset.get(toolset) ?? [];
    list.push(status);
    byToolset.set(toolset, list);
  };
  for (const entry of registry.listTools()) {
    const availability = registry.availabilityOf(entry);
    add(entry.toolset, { name: entry.name, emoji: entry.emoji, available: availability.available, reason: availability.reason ?? null });
  }
  for (const failure of discovery.failed) {
    const tools = failure.tools.length > 0 ? failure.tools : [{ name: path.basename(failure.file).replace(/\.[^.]+$/, "") }];
    for (const tool of tools) {
      const name = tool.name ?? path.basename(failure.file);
      if (registry.has(name)) continue;
      add(tool.toolset ?? name, { name, emoji: "🔧", available: false, reason: `missing dependency: ${failure.error}` });
    }
  }
  return [...byToolset.keys()].sort().map((name) => {
    const tools = byToolset.get(name)!.sort((a, b) => a.name.localeCompare(b.name));
    const available = registry.isToolsetAvailable(name) && tools.some((tool) => tool.available);
    return { name, description: registry.toolsets.get(name)?.description ?? "", available, tools };
  });
}

export function renderToolStatus(toolsets: readonly ToolsetStatus[]): string {
  const lines: string[] = [];
  for (const toolset of toolsets) {
    const mark = toolset.available ? "✓" : "✗";
    lines.push(`${mark} ${toolset.name}${toolset.description ? ` — ${toolset.description}` : ""}`);
    for (const tool of toolset.tools) {
      const state = tool.available ? "available" : `unavailable: ${tool.reason}`;
      lines.push(`    ${tool.emoji} ${tool.name.padEnd(24)} ${state}`);
    }
  }
  if (lines.length === 0) lines.push("No tools are registered.");
  return `${lines.join("\n")}\n`;
}
