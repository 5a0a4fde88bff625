/**
 * One child: a fresh `runAgent` conversation under its own session id (and so its own task: terminal
 * working directory, shell state, processes), offered exactly its tool list, with the focused prompt,
 * `delegation.max_iterations` as its budget, the parent's signal (and the optional time limit)
 * cancelling it, and an approval surface registered for its session that never asks anybody. Whatever
 * happens (an endpoint's 401, a store that fails, a hook that throws) becomes this task's result: a
 * child never fails its siblings or the parent's call.
 */

import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";

import type { ApprovalSurface } from "../../approval/flow/types.js";
import { SubagentSurface } from "../../approval/surfaces/subagent.js";
import type { SubagentHookEvent, SubagentStopHookEvent } from "../../plugins/types.js";
import { redactSecrets } from "../../redaction/redact.js";
import type { ToolRegistry } from "../../registry/tool-registry.js";
import { describeThrown } from "../../util/text.js";
import { runAgent } from "../loop/public.js";
import { sessionRecorder } from "../stores/sessions/recorder.js";
import type { SessionStore } from "../stores/sessions/types.js";
import type { AgentEvent, AgentLoopHandlers, AgentLoopToolHandler, RunAgentOptions, RunAgentResult, SessionRecorder } from "../types.js";
import type { DelegateTaskSpec } from "./args.js";
import { childSystemPrompt } from "./child-prompt.js";
import { budgetSummary, isEmptyAnswer, NO_RESPONSE_ERROR, seconds, type DelegateExitReason, type DelegateTaskResult, type DelegateTaskStatus, type DelegateToolTrace } from "./result.js";
import type { ChildEndpoint, DelegationSettings } from "./settings.js";

/** What the gate must offer: a surface per session, and forgetting a session's grants when it ends. */
export interface SessionSurfaceGate {
  setSessionSurface(sessionId: string, surface: ApprovalSurface): () => void;
  endSession?(sessionId: string): void;
}

/** What `onSubagentStart` is told (the plugin hook `subagent_start`'s event). */
export type SubagentStartEvent = SubagentHookEvent;
/** What `onSubagentStop` is told: the start's fields with the child's status, summary and duration. */
export type SubagentStopEvent = SubagentStopHookEvent;

/** Everything one call's children share. */
export interface ChildRunContext {
  registry: ToolRegistry;
  endpoint: ChildEndpoint;
  settings: DelegationSettings;
  /** The children's depth (the calling agent's plus one). */
  depth: number;
  parentSessionId: string | undefined;
  signal: AbortSignal | undefined;
  sessions: SessionStore | undefined;
  approvals: () => Promise<SessionSurfaceGate | undefined>;
  /** The children's agent-loop handlers (todo, session_search); memory and delegate_task are never among them. */
  handlers: AgentLoopHandlers;
  /** A delegate handler for an orchestrator child at `depth` whose own tools are the toolset `toolsets` names. */
  delegateFor: (depth: number, toolsets: readonly string[]) => AgentLoopToolHandler;
  workspace: string | undefined;
  contextFiles: boolean | undefined;
  /** Options passed through to every child's `runAgent`. */
  runOptions: Pick<RunAgentOptions, "headers" | "modelSettings" | "retry" | "requestTimeoutMs" | "toolSearch" | "contextTokens" | "maxConcurrency" | "compaction">;
  onStart: ((event: SubagentStartEvent) => void | Promise<void>) | undefined;
  onStop: ((event: SubagentStopEvent) => void | Promise<void>) | undefined;
  onEvent: ((taskIndex: number, event: AgentEvent) => void) | undefined;
  /** Closes the child's terminal environment when it ends (its id is its task id). */
  releaseTask: ((taskId: string) => void | Promise<void>) | undefined;
  /** Where a failing hook or cleanup is reported (never thrown). */
  warn: (message: string) => void;
}

/** A task with its tool list already decided (child-tools.ts). */
export interface PlannedTask extends DelegateTaskSpec {
  tools: string[];
  orchestrator: boolean;
}

async function quietly(what: string, warn: (message: string) => void, fn: () => unknown): Promise<void> {
  try {
    await fn();
  } catch (thrown) {
    warn(`delegate_task: ${what} failed (ignored): ${describeThrown(thrown)}`);
  }
}

/** A session id for a child when there is no store to issue one. */
function localSessionId(): string {
  return `subagent_${randomBytes(6).toString("hex")}`;
}

export async function runChild(task: PlannedTask, run: ChildRunContext): Promise<DelegateTaskResult> {
  const started = performance.now();
  const { settings, endpoint } = run;
  const role = task.orchestrator ? "orchestrator" : "leaf";
  const tally = { input: 0, output: 0, apiCalls: 0 };
  const trace: DelegateToolTrace[] = [];
  const traced = new Map<string, DelegateToolTrace>();

  let sessionId = localSessionId();
  let stored: SessionRecorder | undefined;
  const finish = (status: DelegateTaskStatus, exit: DelegateExitReason, summary: string | null, error?: string): DelegateTaskResult => {
    const result: DelegateTaskResult = {
      task_index: task.index,
      status,
      summary,
      api_calls: tally.apiCalls,
      duration_seconds: seconds(performance.now() - started),
      model: endpoint.model,
      exit_reason: exit,
      tokens: { input: tally.input, output: tally.output },
      tool_trace: trace,
      role,
      session_id: sessionId,
    };
    if (summary !== null) {
      const budgeted = budgetSummary(summary, settings.maxSummaryChars, stored === undefined ? undefined : sessionId);
      result.summary = budgeted.summary;
      if (budgeted.truncated) result.summary_truncated = true;
    }
    if (error !== undefined) result.error = redactSecrets(error);
    return result;
  };

  if (run.sessions !== undefined) {
    try {
      const store = run.sessions;
      const parent = run.parentSessionId !== undefined && (await store.getSession(run.parentSessionId)) !== undefined ? run.parentSessionId : null;
      const record = await store.createSession({ source: "subagent", parent_session_id: parent, model: endpoint.model });
      sessionId = record.id;
      stored = await sessionRecorder(store, { id: sessionId });
    } catch (thrown) {
      return finish("error", "error", null, `The subagent's session could not be stored: ${describeThrown(thrown)}`);
    }
  }
  const recorder: SessionRecorder = {
    id: sessionId,
    append: async (messages, usage) => {
      if (usage !== undefined) {
        tally.input += usage.inputTokens;
        tally.output += usage.outputTokens;
      }
      if (stored !== undefined) await stored.append(messages, usage);
    },
  };

  const startEvent: SubagentStartEvent = { parentSessionId: run.parentSessionId, childSessionId: sessionId, childRole: role, taskIndex: task.index, goal: task.goal };
  if (run.onStart !== undefined) await quietly("the subagent_start hook", run.warn, () => run.onStart!(startEvent));

  // Cancelled by the parent's signal, or by the time limit.
  const controller = new AbortController();
  let timedOut = false;
  const onParentAbort = (): void => controller.abort(run.signal?.reason);
  if (run.signal?.aborted) controller.abort(run.signal.reason);
  else run.signal?.addEventListener("abort", onParentAbort, { once: true });
  const timer =
    settings.childTimeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          controller.abort(new Error("the subagent's time limit elapsed"));
        }, settings.childTimeoutMs);

  // The child's own toolset, defined for its run only: exactly its tool list, whatever composites the parent used.
  const toolset = `subagent:${sessionId}`;
  let removeSurface: (() => void) | undefined;
  let gate: SessionSurfaceGate | undefined;
  let result: DelegateTaskResult;
  try {
    gate = await run.approvals();
    removeSurface = gate?.setSessionSurface(sessionId, new SubagentSurface(settings.subagentAutoApprove));
    run.registry.toolsets.define({ name: toolset, description: `The tools of subagent ${sessionId}.`, tools: task.tools, includes: [], kind: "toolset" });
    const handlers: AgentLoopHandlers = { ...run.handlers };
    delete handlers.memory;
    delete handlers.delegate_task;
    if (task.orchestrator) handlers.delegate_task = run.delegateFor(run.depth, [toolset]);

    let outcome: RunAgentResult | undefined;
    let failure: unknown;
    try {
      outcome = await runAgent({
        ...run.runOptions,
        model: endpoint.model,
        baseURL: endpoint.baseURL,
        // The parent's key is never re-read from the environment here (childEndpoint decided it).
        apiKey: endpoint.apiKey ?? "no-key",
        prompt: task.goal,
        registry: run.registry,
        toolsets: [toolset],
        handlers,
        session: recorder,
        taskId: sessionId,
        maxTurns: settings.maxIterations,
        signal: controller.signal,
        systemPrompt: {
          identity: childSystemPrompt({
            goal: task.goal,
            context: task.context,
            workspace: run.workspace,
            orchestrator: task.orchestrator,
            depth: run.depth,
            maxSpawnDepth: settings.maxSpawnDepth,
            maxConcurrentChildren: settings.maxConcurrentChildren,
          }),
          cwd: run.workspace,
          contextFiles: run.contextFiles,
        },
        onEvent: (event) => {
          if (event.type === "assistant_message") tally.apiCalls++;
          else if (event.type === "tool_start") {
            const entry: DelegateToolTrace = { tool: event.name, args_bytes: Buffer.byteLength(event.arguments), result_bytes: 0, status: "error" };
            traced.set(event.callId, entry);
            trace.push(entry);
          } else if (event.type === "tool_end") {
            const entry = traced.get(event.callId);
            if (entry !== undefined) {
              entry.tool = event.name;
              entry.result_bytes = Buffer.byteLength(event.content);
              entry.status = event.status === "ok" ? "ok" : "error";
            }
          }
          run.onEvent?.(task.index, event);
        },
      });
    } catch (thrown) {
      failure = thrown;
    }

    if (outcome === undefined) {
      result = finish("error", "error", null, describeThrown(failure));
    } else if (outcome.status === "interrupted") {
      const partial = isEmptyAnswer(outcome.finalText) ? null : outcome.finalText;
      result = timedOut
        ? finish("timeout", "timeout", partial, `The subagent did not finish within ${Math.round((settings.childTimeoutMs ?? 0) / 1000)} s and was stopped.`)
        : finish("interrupted", "interrupted", partial, "The subagent was interrupted (the parent's run was cancelled).");
    } else {
      const exit: DelegateExitReason = outcome.status === "max_turns" ? "max_iterations" : "completed";
      result = isEmptyAnswer(outcome.finalText) ? finish("failed", exit, null, NO_RESPONSE_ERROR) : finish("completed", exit, outcome.finalText);
    }
  } catch (thrown) {
    result = finish("error", "error", null, describeThrown(thrown));
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    run.signal?.removeEventListener("abort", onParentAbort);
    removeSurface?.();
    gate?.endSession?.(sessionId);
    run.registry.toolsets.remove(toolset);
  }

  if (run.sessions !== undefined && stored !== undefined) await quietly("ending the subagent's session", run.warn, () => run.sessions!.endSession(sessionId, result.exit_reason));
  if (run.releaseTask !== undefined) await quietly("closing the subagent's terminal", run.warn, () => run.releaseTask!(sessionId));
  if (run.onStop !== undefined) {
    const stop: SubagentStopEvent = { ...startEvent, childStatus: result.status, childSummary: result.summary, durationMs: Math.round(performance.now() - started) };
    await quietly("the subagent_stop hook", run.warn, () => run.onStop!(stop));
  }
  return result;
}

