/**
 * `createDelegateHandler`: the loop's handler of `delegate_task`. It closes over what the parent's run
 * was given (endpoint, registry, toolsets, the session store, the approval gate) and the `delegation`
 * settings; the loop hands it the model's arguments and the call's signal and session id. A call is
 * checked (args.ts), each task's tool list decided (child-tools.ts), and the children run at the same
 * time (child-run.ts), all joined; the answer is the JSON of `{results, total_duration_seconds}`.
 *
 * Synchronous by design (docs/delegation.md): the call returns when every child has finished, unlike
 * the original's default background mode.
 */

import { performance } from "node:perf_hooks";

import type { DelegationConfig } from "../../config/config-types.js";
import { registry as defaultRegistry } from "../../registry/singleton.js";
import type { ToolRegistry } from "../../registry/tool-registry.js";
import type { Logger } from "../../registry/types.js";
import type { EnvVars } from "../../util/env-vars.js";
import type { SessionStore } from "../stores/sessions/types.js";
import type { AgentEvent, AgentLoopHandlers, AgentLoopToolHandler, RunAgentOptions } from "../types.js";
import { parseDelegateArgs } from "./args.js";
import { childToolNames } from "./child-tools.js";
import { runChild, type ChildRunContext, type PlannedTask, type SessionSurfaceGate, type SubagentStartEvent, type SubagentStopEvent } from "./child-run.js";
import { aggregate } from "./result.js";
import { childEndpoint, delegationSettings, type ChildEndpoint, type DelegationSettings } from "./settings.js";

export interface DelegateHandlerOptions {
  /** The parent's endpoint; the children use it unless `child` or `delegation` names another. */
  model: string;
  baseURL: string;
  apiKey?: string | undefined;
  /** The children's endpoint, already resolved. Default: `childEndpoint(delegation, parent, env)`, read once, now. */
  child?: ChildEndpoint | undefined;
  /** config.yaml's `delegation` section (as loaded), or part of one. */
  delegation?: Partial<DelegationConfig> | undefined;
  /** Settings laid over the section's (a library caller's own limits; no floors applied). */
  settings?: Partial<DelegationSettings> | undefined;
  /** For `DELEGATION_MAX_CONCURRENT_CHILDREN` and `delegation.api_key_env`. Default `process.env`. */
  env?: EnvVars | undefined;
  /** Default: the shared registry. `delegate_task` must be registered there to be offered (`delegateTaskTool`). */
  registry?: ToolRegistry | undefined;
  /** The parent run's toolsets (undefined: every registered tool) and disabled toolsets: the children's ceiling. */
  toolsets?: readonly string[] | undefined;
  disabledToolsets?: readonly string[] | undefined;
  /** The calling agent's depth: 0 for the top level (children of an orchestrator get handlers one deeper). */
  depth?: number | undefined;
  /** The children's agent-loop handlers (todo, session_search). memory and delegate_task given here are ignored. */
  handlers?: AgentLoopHandlers | undefined;
  /** Where children's sessions are stored (source `subagent`, parent = the calling session), when given. */
  sessions?: SessionStore | undefined;
  /** The gate children's commands pass (a surface is registered for each child session). Default: the process-wide gate. */
  approvals?: SessionSurfaceGate | undefined;
  /** The workspace named in the children's prompt, and where their project context files are read. Default `process.cwd()`. */
  cwd?: string | undefined;
  /** `false`: no project context files in the children's prompts. */
  contextFiles?: boolean | undefined;
  headers?: RunAgentOptions["headers"];
  modelSettings?: RunAgentOptions["modelSettings"];
  retry?: RunAgentOptions["retry"];
  requestTimeoutMs?: number | undefined;
  toolSearch?: unknown;
  contextTokens?: number | undefined;
  maxConcurrency?: number | undefined;
  /** The children's context compaction (docs/compaction.md); default the loop's. A child's session keeps its id when compacted. */
  compaction?: RunAgentOptions["compaction"];
  /** Called as each child starts and ends (the plugin hooks `subagent_start` / `subagent_stop`). A throw is logged, never fatal. */
  onSubagentStart?: ((event: SubagentStartEvent) => void | Promise<void>) | undefined;
  onSubagentStop?: ((event: SubagentStopEvent) => void | Promise<void>) | undefined;
  /** Every child's loop events, with its task index (a UI's activity lines). */
  onEvent?: ((taskIndex: number, event: AgentEvent) => void) | undefined;
  /** Closes a finished child's terminal environment. Default: the shared environment manager's `close(taskId)`; `false`: leave it. */
  releaseTask?: ((taskId: string) => void | Promise<void>) | false | undefined;
  /** Where failing hooks are reported. Default: the registry's logger. */
  logger?: Logger | undefined;
}

async function defaultGate(): Promise<SessionSurfaceGate> {
  return (await import("../../approval/default-gate.js")).getApprovalGate();
}

async function closeSharedEnvironment(taskId: string): Promise<void> {
  await (await import("../../environments/manager.js")).peekEnvironmentManager()?.close(taskId);
}

/** The `delegate_task` handler for a parent run (see the options). */
export function createDelegateHandler(options: DelegateHandlerOptions): AgentLoopToolHandler {
  const env = options.env ?? process.env;
  const settings: DelegationSettings = { ...delegationSettings(options.delegation, env), ...options.settings };
  const endpoint = options.child ?? childEndpoint(options.delegation, { model: options.model, baseURL: options.baseURL, apiKey: options.apiKey }, env);
  const registry = options.registry ?? defaultRegistry;
  const depth = options.depth ?? 0;
  const logger = options.logger ?? registry.logger;
  const gate = options.approvals;
  const release = options.releaseTask === false ? undefined : (options.releaseTask ?? closeSharedEnvironment);

  return async function delegateTask(args, ctx): Promise<string> {
    const started = performance.now();
    const parsed = parseDelegateArgs(args, settings, depth);
    if ("error" in parsed) return JSON.stringify({ error: parsed.error });

    const childDepth = depth + 1;
    const planned: PlannedTask[] = [];
    for (const task of parsed.tasks) {
      // Capability comes from the depth, never from the role the model names.
      const orchestrator = task.role === "orchestrator" && settings.orchestratorEnabled && childDepth < settings.maxSpawnDepth;
      const tools = childToolNames(registry, { toolsets: options.toolsets, disabledToolsets: options.disabledToolsets }, task.toolsets, orchestrator);
      if ("error" in tools) return JSON.stringify({ error: parsed.tasks.length > 1 ? `Task ${task.index}: ${tools.error}` : tools.error });
      planned.push({ ...task, tools: tools.tools, orchestrator });
    }

    const run: ChildRunContext = {
      registry,
      endpoint,
      settings,
      depth: childDepth,
      parentSessionId: ctx.sessionId,
      signal: ctx.signal,
      sessions: options.sessions,
      approvals: gate === undefined ? defaultGate : async () => gate,
      handlers: options.handlers ?? {},
      delegateFor: (nextDepth, toolsets) =>
        createDelegateHandler({ ...options, settings, child: endpoint, depth: nextDepth, toolsets, disabledToolsets: undefined }),
      workspace: options.cwd ?? process.cwd(),
      contextFiles: options.contextFiles,
      runOptions: {
        headers: options.headers,
        modelSettings: options.modelSettings,
        retry: options.retry,
        requestTimeoutMs: options.requestTimeoutMs,
        toolSearch: options.toolSearch,
        contextTokens: options.contextTokens,
        maxConcurrency: options.maxConcurrency,
        compaction: options.compaction,
      },
      onStart: options.onSubagentStart,
      onStop: options.onSubagentStop,
      onEvent: options.onEvent,
      releaseTask: release,
      warn: (message) => logger.warn(message),
    };
    const results = await Promise.all(planned.map((task) => runChild(task, run)));
    return JSON.stringify(aggregate(results, performance.now() - started));
  };
}
