/**
 * `runAgent`: the agent loop. One call is one user turn: the new message(s) are recorded, then
 * requests alternate with tool rounds until the model answers without calling tools, the budget
 * runs out (one more request asks for a summary, with tools refused), or the signal fires.
 *
 * Tool rounds go through `executeToolCalls` (parallel-safe calls together, results in call order,
 * the approval gate, time limits, redaction, caps), with the run's agent-loop handlers for todo,
 * memory, session_search and delegate_task. What the loop knows of stores is in ../types.ts.
 */

import { executeToolCalls, type ExecuteToolCallsOptions } from "../../dispatch/execute-tool-calls.js";
import { executeToolCallsWithToolSearch } from "../tool-search/execute.js";
import { registry as defaultRegistry } from "../../registry/singleton.js";
import type { ToolCallOutcome } from "../../dispatch/execute-tool-calls.js";
import { buildSystemPrompt } from "../prompt/system-prompt.js";
import { Compactor } from "../compaction/compactor.js";
import { compactionSettings } from "../compaction/settings.js";
import { estimateFixedTokens } from "../compaction/token-estimate.js";
import type {
  AgentAssistantMessage,
  AgentEvent,
  AgentLoopHandlers,
  AgentMessage,
  AgentToolCallRecord,
  AgentToolMessage,
  AgentUsage,
  RunAgentOptions,
  RunAgentResult,
  RunAgentStatus,
  AgentToolStatus,
} from "../types.js";
import { BUDGET_EXHAUSTED_MESSAGE, BUDGET_FALLBACK_TEXT, DEFAULT_MAX_TURNS, checkMaxTurns } from "./budget.js";
import { ChatEndpoint, DEFAULT_REQUEST_TIMEOUT_MS, RequestAborted, parseBaseURL } from "./endpoint.js";
import { useApprovalSurface } from "./approval-surface.js";
import { AgentConfigError } from "./errors.js";
import { answerDanglingToolCalls, checkMessages, toApiMessage, type ApiMessage } from "./messages.js";
import { offeredTools } from "./offered-tools.js";
import { retryPolicy } from "./retry.js";
import { addUsage, emptyUsage } from "./usage.js";

/** Request fields the loop owns; `modelSettings` may not set them. */
const RESERVED_SETTINGS = new Set(["model", "messages", "tools", "tool_choice", "stream", "stream_options"]);

function statusOf(outcome: ToolCallOutcome): AgentToolStatus {
  const kind = outcome.result.error?.kind;
  if (kind === "cancelled") return "cancelled";
  if (kind === "timeout") return "timeout";
  return outcome.isError ? "error" : "ok";
}

function checkOptions(options: RunAgentOptions): void {
  if (options === null || typeof options !== "object") throw new AgentConfigError("options", "runAgent takes an options object");
  if (typeof options.model !== "string" || options.model.trim() === "") throw new AgentConfigError("model", "model is required (the model name the endpoint knows)");
  if (options.prompt !== undefined && typeof options.prompt !== "string") throw new AgentConfigError("prompt", "prompt must be a string");
  for (const key of Object.keys(options.modelSettings ?? {})) {
    if (RESERVED_SETTINGS.has(key)) throw new AgentConfigError("modelSettings", `modelSettings.${key} is set by the loop itself`);
  }
  const surface = options.approvalSurface as { ask?: unknown; kind?: unknown } | undefined;
  if (surface !== undefined && (surface === null || typeof surface.ask !== "function" || typeof surface.kind !== "string")) {
    throw new AgentConfigError("approvalSurface", "approvalSurface must be an approval surface (a kind string and an ask(request, signal) method)");
  }
  if (options.session !== undefined && (typeof options.session?.id !== "string" || typeof options.session.append !== "function")) {
    throw new AgentConfigError("session", "session must have a string id and an append(messages) method");
  }
}

export async function runAgent(options: RunAgentOptions): Promise<RunAgentResult> {
  checkOptions(options);
  const baseURL = parseBaseURL(options.baseURL);
  const maxTurns = checkMaxTurns(options.maxTurns ?? DEFAULT_MAX_TURNS);
  const registry = options.registry ?? defaultRegistry;
  const { signal, session } = options;
  const compaction = compactionSettings(options);
  // A compaction moves the session to its continuation (compaction/compactor.ts); the task stays.
  let sessionId = session?.id;
  const taskId = options.taskId ?? sessionId;
  const listener = options.onEvent;
  const emit = (event: AgentEvent): void => {
    if (listener === undefined) return;
    try {
      listener(event);
    } catch {
      // A UI's fault must not end the run.
    }
  };

  const tools = offeredTools(registry, { toolsets: options.toolsets, disabledToolsets: options.disabledToolsets }, options.handlers, {
    toolSearch: options.toolSearch,
    contextTokens: options.contextTokens,
  });
  // Only the handlers of offered tools: a model naming an agent-loop tool it was not offered is refused by dispatch.
  const handlers: AgentLoopHandlers = {};
  for (const [name, handler] of Object.entries(options.handlers ?? {})) {
    if (typeof handler === "function" && tools.names.has(name)) (handlers as Record<string, unknown>)[name] = handler;
  }

  const history = session?.history === undefined ? [] : checkMessages(await session.history(), "session.history()").filter((m) => m.role !== "system");
  const incoming = checkMessages(options.messages ?? [], "messages");
  if (options.prompt !== undefined) incoming.push({ role: "user", content: options.prompt });
  if (incoming.length === 0 && history.length === 0) throw new AgentConfigError("prompt", "give a prompt or messages (the session has none either)");

  const systemPrompt =
    options.systemPrompt === false
      ? null
      : typeof options.systemPrompt === "string"
        ? options.systemPrompt
        : (await buildSystemPrompt({ ...(options.systemPrompt ?? {}), offeredTools: tools.names, sessionId: sessionId ?? taskId ?? "default" })).text;
  // One object, sent first on every request: the same bytes each time, so the provider's prefix cache holds.
  const systemMessage: ApiMessage | undefined = systemPrompt === null ? undefined : { role: "system", content: systemPrompt };

  const endpointOptions = {
    baseURL,
    apiKey: options.apiKey ?? process.env.OPENAI_API_KEY,
    headers: options.headers,
    timeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    retry: retryPolicy(options.retry),
    model: options.model,
  };
  const endpoint = await ChatEndpoint.open(endpointOptions);

  for (const handler of Object.values(handlers)) handler?.beginTurn?.(sessionId);
  const releaseSurface = options.approvalSurface === undefined ? undefined : await useApprovalSurface(options.approvalSurface, sessionId);

  const conversation: AgentMessage[] = [...history];
  const newMessages: AgentMessage[] = [];
  const usage = emptyUsage();
  const toolCalls: AgentToolCallRecord[] = [];
  const promptOptions = typeof options.systemPrompt === "object" ? options.systemPrompt : undefined;
  const compactor =
    compaction === undefined
      ? undefined
      : new Compactor({ settings: compaction, endpoint: endpointOptions, fixedTokens: estimateFixedTokens(systemPrompt, tools.definitions), session, handlers, memory: promptOptions?.memory, signal, emit, usage });
  const record = async (messages: AgentMessage[], requestUsage?: AgentUsage): Promise<void> => {
    const now = Date.now();
    for (const message of messages) message.timestamp ??= now;
    conversation.push(...messages);
    newMessages.push(...messages);
    if (session !== undefined) await session.append(messages, requestUsage);
  };

  let status: RunAgentStatus = "completed";
  let finalText = "";
  let turns = 0;
  try {
    await record(incoming);
    for (;;) {
      if (signal?.aborted) {
        status = "interrupted";
        break;
      }
      const summary = turns >= maxTurns;
      if (summary) {
        emit({ type: "budget_exhausted", turns });
        await record([{ role: "user", content: BUDGET_EXHAUSTED_MESSAGE }]);
      }
      const turn = turns + 1;
      if (compactor !== undefined) sessionId = await compactor.beforeRequest(conversation, sessionId, turn);
      const sentMessages = conversation.length;
      emit({ type: "turn_start", turn, summary });
      const params: Record<string, unknown> = {
        ...options.modelSettings,
        model: options.model,
        messages: [...(systemMessage === undefined ? [] : [systemMessage]), ...answerDanglingToolCalls(conversation).map(toApiMessage)],
      };
      if (tools.definitions.length > 0) {
        // Tools stay in the request for the summary turn (the cached prefix includes them); tool_choice refuses them.
        params.tools = tools.definitions;
        if (summary) params.tool_choice = "none";
      }
      let completion;
      try {
        completion = await endpoint.complete(params, {
          stream: options.stream === true,
          signal,
          turn,
          onDelta: (delta) => emit({ type: "text_delta", turn, delta }),
          onEvent: emit,
        });
      } catch (thrown) {
        if (!(thrown instanceof RequestAborted)) throw thrown;
        if (thrown.partialText !== "") await record([{ role: "assistant", content: thrown.partialText, finish_reason: "interrupted" }]);
        finalText = thrown.partialText;
        status = "interrupted";
        break;
      }
      turns = turn;
      addUsage(usage, completion.usage);
      compactor?.noteResponse(completion.usage.inputTokens, sentMessages);
      const message: AgentAssistantMessage = completion.message;

      if (summary) {
        // No more tools: calls the endpoint made anyway are dropped (an unanswered call would break the history).
        delete message.tool_calls;
        if (message.content === null || message.content.trim() === "") message.content = BUDGET_FALLBACK_TEXT;
        await record([message], completion.usage);
        emit({ type: "assistant_message", turn, message });
        finalText = message.content;
        status = "max_turns";
        break;
      }
      await record([message], completion.usage);
      emit({ type: "assistant_message", turn, message });
      const calls = message.tool_calls ?? [];
      if (calls.length === 0) {
        finalText = message.content ?? "";
        break;
      }

      const emojiOf = (name: string): string => registry.get(name)?.emoji ?? "🔧";
      // With tool search, a `tool_call` is unwrapped before it runs: the activity line names the real tool.
      const ranAs: string[] = calls.map((call) => call.function.name);
      const batch = calls.map((call) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments }));
      const batchOptions: ExecuteToolCallsOptions = {
        registry,
        agentLoop: handlers,
        signal,
        sessionId,
        taskId,
        allowedTools: tools.allowedTools,
        maxConcurrency: options.maxConcurrency,
        onCallStart: (index, started) => {
          const call = calls[index]!;
          ranAs[index] = started.name;
          emit({ type: "tool_start", turn, callId: call.id, name: started.name, emoji: emojiOf(started.name), arguments: call.function.arguments });
        },
        onCallEnd: (index, outcome, elapsedMs) => {
          const call = calls[index]!;
          const name = ranAs[index]!;
          const callStatus = statusOf(outcome);
          const elapsed = Math.round(elapsedMs);
          toolCalls.push({ turn, id: call.id, name, status: callStatus, elapsedMs: elapsed, argsChars: call.function.arguments.length, resultChars: outcome.content.length });
          emit({ type: "tool_end", turn, callId: call.id, name, emoji: emojiOf(name), elapsedMs: elapsed, status: callStatus, content: outcome.content });
        },
      };
      const outcomes = tools.bridge === undefined ? await executeToolCalls(batch, batchOptions) : await executeToolCallsWithToolSearch(tools.bridge, batch, batchOptions);
      const results: AgentToolMessage[] = outcomes.map((outcome, index) => ({
        role: "tool",
        tool_call_id: calls[index]!.id,
        content: outcome.content,
        tool_name: calls[index]!.function.name,
      }));
      await record(results);
    }
  } catch (thrown) {
    await endRun(session, "error", usage);
    throw thrown;
  } finally {
    // Under the id the session has now: a compaction moved the surface with it (gate.continueSession).
    releaseSurface?.(sessionId);
  }

  await endRun(session, status, usage);
  emit({ type: "done", status, finalText, usage: { ...usage }, turns });
  return { status, finalText, messages: conversation, newMessages, systemPrompt, usage, turns, toolCalls, sessionId };
}

async function endRun(session: RunAgentOptions["session"], status: RunAgentStatus | "error", usage: AgentUsage): Promise<void> {
  if (session?.runEnded === undefined) return;
  try {
    await session.runEnded({ status, usage: { ...usage } });
  } catch {
    // The run's outcome stands; a recorder that cannot note the end has already stored the messages.
  }
}
