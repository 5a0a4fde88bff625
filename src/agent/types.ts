/**
 * What the agent loop (`runAgent`) takes and gives: the conversation's messages (OpenAI chat
 * shape), the interfaces through which it reaches agent state — agent-loop tool handlers, a
 * session recorder, a memory snapshot — and the events a UI follows.
 *
 * The loop knows the stores only through these interfaces (docs/agent-loop.md), so a test or an
 * embedding application can swap them: `SqliteSessionStore`, the todo and memory stores and the
 * delegation runner implement them elsewhere (src/agent/stores/), and nothing here imports them.
 */

import type { ApprovalSurface } from "../approval/flow/types.js";
import type { AgentLoopHandler } from "../dispatch/agent-loop.js";
import type { ToolRegistry } from "../registry/tool-registry.js";

type Awaitable<T> = T | Promise<T>;

// ---- messages ----------------------------------------------------------------

/** One tool call of an assistant message, as the Chat Completions API writes it. */
export interface AgentToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/**
 * A message of the conversation: the Chat Completions shape plus fields the loop keeps beside it
 * for stores and UIs (`tool_name`, `reasoning`, `finish_reason`, `timestamp`). Those, and any key
 * starting with `_`, are never sent to the endpoint: requests are built from an allowlist of each
 * role's API fields (messages.ts).
 */
export type AgentMessage = AgentSystemMessage | AgentUserMessage | AgentAssistantMessage | AgentToolMessage;

interface MessageExtras {
  /** Milliseconds since the epoch, when the loop made the message. */
  timestamp?: number | undefined;
  /**
   * Set on messages the loop made up rather than the user or the model wrote: a compaction's summary
   * (`compaction_summary`) and re-injected snapshot (`compaction_snapshot`). Never sent as a field;
   * a session store keeps it (stored for resuming, not indexed for search).
   */
  synthetic?: string | undefined;
  [internal: `_${string}`]: unknown;
}

export interface AgentSystemMessage extends MessageExtras {
  role: "system";
  content: string;
  name?: string | undefined;
}

/** `content` may be an array of content parts (text, image_url, ...), passed to the endpoint as given. */
export interface AgentUserMessage extends MessageExtras {
  role: "user";
  content: string | readonly unknown[];
  name?: string | undefined;
}

export interface AgentAssistantMessage extends MessageExtras {
  role: "assistant";
  content: string | null;
  tool_calls?: AgentToolCall[] | undefined;
  name?: string | undefined;
  refusal?: string | null | undefined;
  /** Reasoning text some endpoints return beside the answer (`reasoning_content`); kept, never sent back. */
  reasoning?: string | undefined;
  finish_reason?: string | undefined;
}

export interface AgentToolMessage extends MessageExtras {
  role: "tool";
  tool_call_id: string;
  content: string;
  /** The tool the message answers (the API does not carry it; stores and search do). */
  tool_name?: string | undefined;
}

// ---- agent-loop tools and stores ----------------------------------------------

/** The tools only the loop can run (`AGENT_LOOP_TOOLS`). */
export type AgentLoopToolName = "todo" | "memory" | "session_search" | "delegate_task";

/**
 * A handler for an agent-loop tool. When it has `beginTurn` (the memory tool's per-turn failure
 * count does), the loop calls it once at the start of each `runAgent` call, which is one user turn.
 */
export type AgentLoopToolHandler = AgentLoopHandler & {
  beginTurn?: ((sessionId?: string) => void) | undefined;
  /**
   * The block to re-inject after a compaction (the todo list's active items), or null for none.
   * Asked once per compaction; the loop puts it right after the summary.
   */
  snapshotForCompaction?: ((sessionId: string) => Awaitable<string | null>) | undefined;
} & SessionContinuationAware;

/**
 * Per-session state that follows a conversation into the session a compaction continues it in
 * (the todo list, the frozen memory snapshot): `from` ended, `to` continues it.
 */
export interface SessionContinuationAware {
  continueSession?: ((fromSessionId: string, toSessionId: string) => Awaitable<void>) | undefined;
}

export type AgentLoopHandlers = Partial<Record<AgentLoopToolName, AgentLoopToolHandler>>;

/** Tokens counted by the endpoint, summed over a run's requests. */
export interface AgentUsage {
  /** Requests that returned a completion (retried attempts are not counted). */
  requests: number;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  /** Input tokens the provider served from its prompt cache (`prompt_tokens_details.cached_tokens`). */
  cachedTokens: number;
  reasoningTokens: number;
}

/**
 * Where a run's messages are persisted. The loop calls `append` as each message is complete (the
 * new user message(s) before the first request, each assistant message, each tool result), so an
 * interrupted or failed run leaves everything up to that point saved. `SqliteSessionStore` fits
 * behind it in a few lines (`appendMessages(id, messages, { usage })`).
 */
export interface SessionRecorder {
  /** The session's id: tools receive it as `sessionId` (process ownership, todo lists, memory snapshots). */
  readonly id: string;
  /**
   * The messages already in the session, oldest first (a resumed session). The loop puts them
   * before the run's new messages and does not append them again. System messages in it are dropped:
   * the loop assembles the system prompt itself.
   */
  history?(): Awaitable<readonly AgentMessage[]>;
  /** Persists messages in order. `usage` is the tokens of the request that produced an assistant message. */
  append(messages: readonly AgentMessage[], usage?: AgentUsage): Awaitable<void>;
  /** The run is over (any status). Not the session's end: a chat runs the loop once per user turn. */
  runEnded?(info: { status: RunAgentStatus | "error"; usage: AgentUsage }): Awaitable<void>;
  /**
   * The loop compacted the conversation: end this session (end_reason `compaction`) and start its
   * continuation (parent = this session) holding `conversation`, the compacted messages. Returns the
   * continuation's id; from then on `id`, `history()` and `append` are the continuation's. Without
   * it, a compaction only changes what is sent: the session keeps everything and its id.
   */
  continueCompacted?(conversation: readonly AgentMessage[]): Awaitable<string>;
}

/** What the volatile prompt tier shows of memory: the session's frozen snapshot (`MemoryStore.snapshot` fits). */
export interface MemorySnapshotSource extends SessionContinuationAware {
  snapshot(sessionId: string): Awaitable<{ readonly text: string | null }>;
}

// ---- events ---------------------------------------------------------------------

export type AgentToolStatus = "ok" | "error" | "cancelled" | "timeout";

/** What the loop reports while it runs, for a UI (an activity line per tool call, a streamed answer). */
export type AgentEvent =
  /** A request to the endpoint is about to be made (`turn` counts from 1; the summary turn has `summary: true`). */
  | { type: "turn_start"; turn: number; summary: boolean }
  /** A request failed in a way worth retrying; the loop waits `delayMs` and sends it again. */
  | { type: "retry"; turn: number; attempt: number; delayMs: number; status: number | undefined; reason: string }
  /** A piece of the answer, as it streams (only with `stream: true`). */
  | { type: "text_delta"; turn: number; delta: string }
  /** The model's complete message of this turn. */
  | { type: "assistant_message"; turn: number; message: AgentAssistantMessage }
  | { type: "tool_start"; turn: number; callId: string; name: string; emoji: string; arguments: string }
  | {
      type: "tool_end";
      turn: number;
      callId: string;
      name: string;
      emoji: string;
      elapsedMs: number;
      status: AgentToolStatus;
      /** The text the model receives (already capped and redacted by dispatch). */
      content: string;
    }
  /** The iteration budget ran out: the summary request follows. */
  | { type: "budget_exhausted"; turns: number }
  /** The conversation was compacted before the next request (docs/compaction.md). Token counts are estimates. */
  | {
      type: "compaction";
      tokensBefore: number;
      tokensAfter: number;
      /** Messages the summary replaced. */
      removedMessages: number;
      /** Messages kept verbatim (the first and the last ones). */
      keptMessages: number;
      /** Snapshots re-injected after the summary (the todo list's active items). */
      snapshotsInjected: number;
      previousSessionId: string | undefined;
      /** The session the conversation continues in (the previous one when the recorder cannot fork). */
      sessionId: string | undefined;
      /** Session state that could not follow (background processes, a todo list); the compaction stands. */
      warnings?: string[];
    }
  /** A compaction was due but did not happen; the conversation is sent whole and the run does not try again. */
  | { type: "compaction_failed"; reason: string; tokens: number }
  | { type: "done"; status: RunAgentStatus; finalText: string; usage: AgentUsage; turns: number };

// ---- options and result ------------------------------------------------------

export interface PromptOptions {
  /** Replaces the built-in identity paragraph (tier 1). */
  identity?: string | undefined;
  /** Where project context files (AGENTS.md, CLAUDE.md, .cursorrules) are looked for (default: `process.cwd()`). */
  cwd?: string | undefined;
  /** `false`: load no project context files. */
  contextFiles?: boolean | undefined;
  /** The memory snapshot shown in the volatile tier. */
  memory?: MemorySnapshotSource | undefined;
  /** The date shown in the volatile tier (day precision; default: today, UTC). */
  now?: Date | undefined;
}

/** `RunAgentOptions.compaction` (config.yaml's `compaction:` section, camelCased). Defaults in compaction/settings.ts. */
export interface CompactionOptions {
  /** Default true. */
  enabled?: boolean | undefined;
  /** Share of the context window (more than 0, at most 1) the prompt may take before the loop compacts. Default 0.5. */
  threshold?: number | undefined;
  /** Messages kept verbatim at the start (the first request). Default 3. */
  keepFirst?: number | undefined;
  /** Messages kept verbatim at the end (the work in progress). Default 20. */
  keepLast?: number | undefined;
  /** The model of the summary request (same endpoint). Default: the run's. */
  model?: string | undefined;
  /** The context window for compaction; default `RunAgentOptions.contextTokens`, else 128,000. */
  contextTokens?: number | undefined;
}

export interface RetryOptions {
  /** Retries after the first attempt, for 408/409/429/5xx and connection failures (default 3). */
  maxRetries?: number | undefined;
  /** First backoff delay when the endpoint gives no Retry-After (default 500 ms; doubles, with jitter, up to 8 s). */
  initialDelayMs?: number | undefined;
  /** Longest Retry-After honoured; an endpoint asking for more fails at once (default 60,000 ms). */
  maxDelayMs?: number | undefined;
}

export type RunAgentStatus =
  /** The model answered without calling tools. */
  | "completed"
  /** The budget ran out; the answer is the summary turn's. */
  | "max_turns"
  /** The signal fired; the answer is whatever text the model had produced. */
  | "interrupted";

export interface RunAgentOptions {
  /** The model name the endpoint knows. */
  model: string;
  /** The endpoint's base URL, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8000/v1`. */
  baseURL: string;
  /** Sent as `Authorization: Bearer …`. Default: the `OPENAI_API_KEY` environment variable, else none. */
  apiKey?: string | undefined;
  /** Extra request headers (an OpenRouter referer, a proxy's key). */
  headers?: Readonly<Record<string, string>> | undefined;
  /** The conversation so far (after any `session.history()`); `prompt`, when given too, is appended as a user message. */
  messages?: readonly AgentMessage[] | undefined;
  /** The user's message. */
  prompt?: string | undefined;
  /** The toolsets the model is offered (`getToolDefinitions`' `enabledToolsets`; default: every registered tool). */
  toolsets?: readonly string[] | undefined;
  disabledToolsets?: readonly string[] | undefined;
  /** Default: the shared `registry`. */
  registry?: ToolRegistry | undefined;
  /** Handlers of agent-loop tools. A registered agent-loop tool without a handler here is not offered. */
  handlers?: AgentLoopHandlers | undefined;
  /** Where messages are persisted, and the id tools see as `sessionId`. */
  session?: SessionRecorder | undefined;
  /** The task tools run under (terminal working directory and shell state). Default: the session's id. */
  taskId?: string | undefined;
  /** Requests that may end in tool calls (default 90). When they are used up, one summary request follows. */
  maxTurns?: number | undefined;
  /**
   * Who the approval gate asks about the run's dangerous commands (for its session only, while the run
   * lasts): `gate.gatewaySurface({ notify })` for an application that asks its user in a chat or a
   * browser. Default: the gate's own surface (the terminal prompt on a terminal, else the
   * non-interactive answer). Hardline and deny rules, the allowlist and session approvals apply first.
   */
  approvalSurface?: ApprovalSurface | undefined;
  /** Cancels the run: the request in flight is aborted, running tools are cancelled, and the run returns `interrupted`. */
  signal?: AbortSignal | undefined;
  /** Progress for a UI. A throwing listener is ignored. */
  onEvent?: ((event: AgentEvent) => void) | undefined;
  /** Stream every response and report text as `text_delta` events. */
  stream?: boolean | undefined;
  /** `string`: the whole system prompt, verbatim. `false`: none. Otherwise the tiers are assembled (prompt/system-prompt.ts). */
  systemPrompt?: string | false | PromptOptions | undefined;
  /** More request fields (`temperature`, `max_tokens`, `reasoning_effort`, ...). `model`, `messages`, `tools`, `tool_choice` and `stream` cannot be set here. */
  modelSettings?: Readonly<Record<string, unknown>> | undefined;
  retry?: RetryOptions | undefined;
  /** Time limit of one request (default 600,000 ms). */
  requestTimeoutMs?: number | undefined;
  /** Most parallel-safe tool calls running at once (default: the registry's). */
  maxConcurrency?: number | undefined;
  /**
   * Tool search (docs/tool-search.md): whether MCP and plugin tools are sent directly or deferred behind
   * `tool_search` / `tool_describe` / `tool_call`. config.yaml's `tool_search` section as loaded, a
   * `{ enabled: "auto" | "on" | "off", threshold_pct? }` mapping, `true` (auto) or `false` (off). Default:
   * auto, which defers them when their definitions would take more than the configured share of the context.
   */
  toolSearch?: unknown;
  /** The model's context window in tokens, for tool search's share (default: the settings' own, else a fixed cutoff) and compaction's threshold (default 128,000). */
  contextTokens?: number | undefined;
  /** Context compaction (docs/compaction.md); `false` turns it off. Default: on, at half the context window. */
  compaction?: CompactionOptions | false | undefined;
}

export interface AgentToolCallRecord {
  turn: number;
  id: string;
  name: string;
  status: AgentToolStatus;
  elapsedMs: number;
  /** Length in characters of the arguments the model sent and of the result it got back. */
  argsChars: number;
  resultChars: number;
}

export interface RunAgentResult {
  status: RunAgentStatus;
  /** The last assistant text (for `interrupted`, what had been produced; may be empty). */
  finalText: string;
  /** The conversation without the system prompt: pass it back as `messages` to continue. */
  messages: AgentMessage[];
  /** The messages this run added (what was appended to the session). */
  newMessages: AgentMessage[];
  /** The system prompt that was sent (the same bytes on every request of the run), or null. */
  systemPrompt: string | null;
  usage: AgentUsage;
  /** Requests that returned a completion, the summary request included. */
  turns: number;
  toolCalls: AgentToolCallRecord[];
  sessionId: string | undefined;
}
