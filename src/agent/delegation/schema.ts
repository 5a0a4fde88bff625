/**
 * The `delegate_task` schema the model sees. Its description states the real limits (tasks per call,
 * depth, the children's budget), rebuilt from the settings each time the tool list is assembled
 * (`patchSchema`), so a changed config.yaml is what the model reads. `toolsets` per task may only
 * narrow the parent's tools; the budget, the endpoint and the depth are not the model's to choose.
 */

import type { FunctionSchema, MibyanToolOptions } from "../../registry/types.js";
import { DELEGATION_DEFAULTS, type DelegationSettings } from "./settings.js";

export const DELEGATE_TASK_NAME = "delegate_task";

function description(settings: DelegationSettings): string {
  const depth =
    settings.maxSpawnDepth <= 1
      ? "Subagents cannot delegate further (max_spawn_depth 1)."
      : `Delegation may nest ${settings.maxSpawnDepth} levels deep: a task with role "orchestrator" may delegate again; leaves cannot.`;
  return [
    "Run subagents with their own fresh context for self-contained pieces of work, and get back their summaries.",
    "Each subagent sees NOTHING of this conversation: give it a complete `goal` and, in `context`, every fact, path and constraint it needs.",
    `One task: give \`goal\` (and \`context\`). Several independent tasks: give \`tasks\`, at most ${settings.maxConcurrentChildren} per call; they run at the same time and the results come back in task order.`,
    `Subagents get your tools except delegate_task, clarify, memory, send_message, execute_code and cronjob; a task's \`toolsets\` can only narrow them. Each has a budget of ${settings.maxIterations} model requests. Commands that need approval are ${settings.subagentAutoApprove ? "allowed once without asking" : "refused"} in subagents.`,
    depth,
    "The call waits until every subagent has finished. Each result has a status (completed, failed, interrupted, error, timeout) and a summary of what was done and found.",
  ].join("\n\n");
}

function taskProperties(settings: DelegationSettings): Record<string, unknown> {
  const properties: Record<string, unknown> = {
    goal: { type: "string", description: "What the subagent must achieve, stated completely." },
    context: { type: "string", description: "Everything it needs to know: paths, facts, constraints, what to report." },
    toolsets: {
      type: "array",
      items: { type: "string" },
      description: "Only these of your toolsets (e.g. [\"file\"], [\"terminal\", \"web\"]); omit for all of yours.",
    },
  };
  if (settings.maxSpawnDepth >= 2 && settings.orchestratorEnabled) {
    properties.role = { type: "string", enum: ["leaf", "orchestrator"], description: "leaf (default): does the work itself. orchestrator: may delegate again." };
  }
  return properties;
}

/** The schema for these settings. */
export function delegateTaskSchema(settings: DelegationSettings = DELEGATION_DEFAULTS): FunctionSchema {
  const task = taskProperties(settings);
  const properties: Record<string, unknown> = {
    goal: { type: "string", description: "The task of a single subagent (or use `tasks`)." },
    context: { type: "string", description: "Background the single subagent needs." },
    toolsets: task.toolsets,
    tasks: {
      type: "array",
      description: `Several independent tasks, run at the same time (at most ${settings.maxConcurrentChildren}).`,
      items: { type: "object", properties: task, required: ["goal"] },
    },
  };
  if (task.role !== undefined) properties.role = { ...(task.role as object), description: "The single subagent's role (see tasks[].role)." };
  return { name: DELEGATE_TASK_NAME, description: description(settings), parameters: { type: "object", properties, required: [] } };
}

/**
 * The registration that lists `delegate_task` among the model's tools (toolset `delegation`). The
 * schema is rebuilt from `settings()` at every listing. Dispatch refuses agent-loop tools before calling
 * a handler; the loop runs it with `createDelegateHandler`.
 */
export function delegateTaskTool(settings: () => DelegationSettings = () => DELEGATION_DEFAULTS): MibyanToolOptions {
  const initial = delegateTaskSchema(settings());
  return {
    name: DELEGATE_TASK_NAME,
    toolset: "delegation",
    emoji: "🔀",
    schema: { description: initial.description, parameters: initial.parameters },
    patchSchema: () => delegateTaskSchema(settings()),
    handler: () => JSON.stringify({ error: "delegate_task is an agent-loop tool: run it through the agent loop (createDelegateHandler)" }),
  };
}

/** `delegate_task` with the default limits (register `delegateTaskTool(() => settings)` to state others). */
export const DELEGATE_TASK_TOOL: MibyanToolOptions = delegateTaskTool();
