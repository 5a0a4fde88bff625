/**
 * What a child may use: the parent's tools (its toolsets as the parent's run selected them), narrowed
 * to the task's `toolsets` when given (intersected, never widened), minus the tools no subagent gets
 * and every tool of the composite toolsets `delegation` and `code_execution` (subtracted by tool, after
 * composites expand, so a preset that includes them cannot bring them back). An orchestrator below the
 * depth limit gets `delegate_task` back.
 *
 * The result is a list of tool names; the child run offers exactly those, through a toolset defined
 * for its run (child-run.ts).
 */

import type { ToolRegistry } from "../../registry/tool-registry.js";
import { DELEGATE_TASK_NAME } from "./schema.js";

/** Tools no subagent gets (the original's `DELEGATE_BLOCKED_TOOLS`, with execute_code). */
export const DELEGATE_BLOCKED_TOOLS: readonly string[] = Object.freeze([DELEGATE_TASK_NAME, "clarify", "memory", "send_message", "execute_code", "cronjob"]);
/** Toolsets whose every tool is withheld from subagents. */
export const DELEGATE_BLOCKED_TOOLSETS: readonly string[] = Object.freeze(["delegation", "code_execution"]);

export interface ParentSelection {
  /** The parent run's toolsets (undefined: every registered tool). */
  toolsets?: readonly string[] | undefined;
  disabledToolsets?: readonly string[] | undefined;
}

/** The child's tool names (sorted), or an error text for toolsets that name nothing known. */
export function childToolNames(
  registry: ToolRegistry,
  parent: ParentSelection,
  requested: readonly string[] | undefined,
  canDelegate: boolean,
): { tools: string[] } | { error: string } {
  const catalog = registry.toolsets;
  const tools = catalog.select({ enabled: parent.toolsets, disabled: parent.disabledToolsets }).tools;
  if (requested !== undefined) {
    const unknown = requested.filter((name) => !catalog.has(name));
    if (unknown.length > 0) {
      const hints = unknown.map((name) => {
        const close = catalog.suggest(name);
        return close.length > 0 ? `"${name}" (did you mean ${close.join(", ")}?)` : `"${name}"`;
      });
      return { error: `unknown toolset ${hints.join(", ")}; name toolsets you have, such as terminal, file or web` };
    }
    const asked = catalog.select({ enabled: requested }).tools;
    for (const name of [...tools]) if (!asked.has(name)) tools.delete(name);
  }
  for (const name of DELEGATE_BLOCKED_TOOLS) tools.delete(name);
  for (const toolset of DELEGATE_BLOCKED_TOOLSETS) for (const name of catalog.resolve(toolset).tools) tools.delete(name);
  if (canDelegate) tools.add(DELEGATE_TASK_NAME);
  return { tools: [...tools].sort() };
}
