/** delegate_task: subagents with their own context, run by the agent loop (docs/delegation.md). */

export { createDelegateHandler, type DelegateHandlerOptions } from "./handler.js";
export { delegateTaskSchema, delegateTaskTool, DELEGATE_TASK_TOOL, DELEGATE_TASK_NAME } from "./schema.js";
export { childEndpoint, delegationSettings, DELEGATION_DEFAULTS, MAX_CHILDREN_ENV, type ChildEndpoint, type DelegationSettings } from "./settings.js";
export { DELEGATE_BLOCKED_TOOLS, DELEGATE_BLOCKED_TOOLSETS, childToolNames } from "./child-tools.js";
export { depthError, tooManyTasksError, NO_GOAL_ERROR, type DelegateRole, type DelegateTaskSpec } from "./args.js";
export type { SessionSurfaceGate, SubagentStartEvent, SubagentStopEvent } from "./child-run.js";
export {
  NO_RESPONSE_ERROR,
  type DelegateExitReason,
  type DelegateTaskOutput,
  type DelegateTaskResult,
  type DelegateTaskStatus,
  type DelegateToolTrace,
} from "./result.js";
