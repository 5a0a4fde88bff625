/**
 * The checks of a `delegate_task` call, in the original's order and with its texts: depth, too many
 * tasks, neither goal nor tasks, a task that is not an object or has no goal. `tasks` sent as a JSON
 * string is recovered. The arguments are the model's: anything may be in them.
 */

import type { DelegationSettings } from "./settings.js";

export type DelegateRole = "leaf" | "orchestrator";

/** One task as the handler runs it. */
export interface DelegateTaskSpec {
  /** Its place in the call (0-based): results are sorted by it. */
  index: number;
  goal: string;
  context: string | undefined;
  /** As asked; whether it may orchestrate is decided by the depth, not by the model. */
  role: DelegateRole;
  /** Toolsets asked for (only narrow the parent's), or undefined. */
  toolsets: string[] | undefined;
}

export function depthError(depth: number, maxSpawnDepth: number): string {
  return `Delegation depth limit reached (depth=${depth}, max_spawn_depth=${maxSpawnDepth}). Raise delegation.max_spawn_depth in config.yaml if deeper nesting is required (no hard ceiling, but each level multiplies API cost).`;
}

export function tooManyTasksError(count: number, max: number): string {
  return `Too many tasks: ${count} provided, but max_concurrent_children is ${max}. Either reduce the task count, split into multiple delegate_task calls, or increase delegation.max_concurrent_children in config.yaml.`;
}

export const NO_GOAL_ERROR = "Provide either 'goal' (single task) or 'tasks' (batch).";

/** Python's type names, which the original's "must be an object" text uses. */
function typeName(value: unknown): string {
  if (value === null) return "NoneType";
  if (Array.isArray(value)) return "list";
  if (typeof value === "string") return "str";
  if (typeof value === "boolean") return "bool";
  if (typeof value === "number") return Number.isInteger(value) ? "int" : "float";
  return typeof value;
}

const text = (value: unknown): string | undefined => (typeof value === "string" && value.trim() !== "" ? value : undefined);

function role(value: unknown): DelegateRole {
  return typeof value === "string" && value.trim().toLowerCase() === "orchestrator" ? "orchestrator" : "leaf";
}

function toolsets(value: unknown): string[] | undefined | { error: string } {
  if (value === undefined || value === null) return undefined;
  const list = typeof value === "string" ? [value] : value;
  if (!Array.isArray(list) || list.some((name) => typeof name !== "string" || name.trim() === "")) return { error: "toolsets must be a list of toolset names" };
  return [...new Set(list.map((name: string) => name.trim()))];
}

/** The tasks of a call, or the error text the model gets. `depth` is the calling agent's (top level 0). */
export function parseDelegateArgs(args: Record<string, unknown>, settings: DelegationSettings, depth: number): { tasks: DelegateTaskSpec[] } | { error: string } {
  if (depth >= settings.maxSpawnDepth) return { error: depthError(depth, settings.maxSpawnDepth) };

  let tasks: unknown = args.tasks;
  if (typeof tasks === "string") {
    // Models sometimes send the list as a JSON string.
    try {
      tasks = JSON.parse(tasks);
    } catch {
      return { error: "tasks must be a list of task objects, got an unparseable string" };
    }
  }
  if (tasks !== undefined && tasks !== null && !Array.isArray(tasks)) return { error: `tasks must be a list, got ${typeName(tasks)}` };
  const list = Array.isArray(tasks) && tasks.length > 0 ? tasks : undefined;
  if (list !== undefined && list.length > settings.maxConcurrentChildren) return { error: tooManyTasksError(list.length, settings.maxConcurrentChildren) };

  const goal = text(args.goal);
  if (list === undefined && goal === undefined) return { error: NO_GOAL_ERROR };

  if (list === undefined) {
    const asked = toolsets(args.toolsets);
    if (asked !== undefined && !Array.isArray(asked)) return asked;
    return { tasks: [{ index: 0, goal: goal!, context: text(args.context), role: role(args.role), toolsets: asked }] };
  }
  const specs: DelegateTaskSpec[] = [];
  for (const [index, task] of list.entries()) {
    if (task === null || typeof task !== "object" || Array.isArray(task)) return { error: `Task ${index} must be an object, got ${typeName(task)}.` };
    const fields = task as Record<string, unknown>;
    const taskGoal = text(fields.goal);
    if (taskGoal === undefined) return { error: `Task ${index} is missing a 'goal'.` };
    const asked = toolsets(fields.toolsets);
    if (asked !== undefined && !Array.isArray(asked)) return { error: `Task ${index}: ${asked.error}.` };
    specs.push({ index, goal: taskGoal, context: text(fields.context) ?? text(args.context), role: role(fields.role ?? args.role), toolsets: asked });
  }
  return { tasks: specs };
}
