/**
 * The session store as the agent loop and `session_search` see it: sessions (metadata, lineage
 * across compaction) and every message of each, with full-text search. The loop reaches the store
 * only through `SessionStore`, so a test or an embedding application can keep sessions elsewhere;
 * `SqliteSessionStore` (sqlite-store.ts) is the implementation the product uses.
 *
 * Methods may answer synchronously or with a Promise (the SQLite store is synchronous: better-sqlite3
 * has no async API, and a Promise per appended message would only cost time).
 */

type Awaitable<T> = T | Promise<T>;

/** The roles a stored message may have (OpenAI chat roles). */
export const MESSAGE_ROLES = ["system", "user", "assistant", "tool"] as const;
export type MessageRole = (typeof MESSAGE_ROLES)[number];

/**
 * Sources `session_search` hides from discovery and browsing: delegated children (`subagent`) and
 * sessions third-party integrations create (`tool`). Read and scroll still reach them by id.
 */
export const HIDDEN_SESSION_SOURCES: readonly string[] = Object.freeze(["subagent", "tool"]);
/** Sources kept searchable but ranked after interactive sessions (scheduled runs repeat their vocabulary). */
export const DEMOTED_SESSION_SOURCES: readonly string[] = Object.freeze(["cron"]);

/** The `end_reason` of a session whose transcript was compacted into a continuation. */
export const COMPACTION_END_REASON = "compaction";

/** One tool call of an assistant message, as the OpenAI chat API writes it. */
export interface StoredToolCall {
  id: string;
  type?: string;
  function: { name: string; arguments: string };
}

/** A message to append: the OpenAI chat shape plus what the loop knows beside it. */
export interface MessageInput {
  role: MessageRole;
  /** Text; an array of content parts is stored as given and searched by its text parts. */
  content?: string | null | readonly unknown[];
  tool_calls?: readonly StoredToolCall[] | null;
  tool_call_id?: string | null;
  /** The tool a `tool` message answers (the chat API does not carry it; the loop does). */
  tool_name?: string | null;
  reasoning?: string | null;
  finish_reason?: string | null;
  token_count?: number | null;
  /** Milliseconds since the epoch; default: now. */
  timestamp?: number;
  /**
   * Set on messages the loop made up rather than the model or user wrote (a compaction summary,
   * a re-injected todo list): stored for resuming, never indexed for search and never shown as
   * bookends, so a summary does not echo its parent's matches.
   */
  synthetic?: string | null;
}

/** A stored message: its input plus the store's id (increasing in append order across all sessions). */
export interface StoredMessage {
  id: number;
  session_id: string;
  role: MessageRole;
  content: string | null;
  /** The content parts when the message was appended with an array. */
  content_parts?: unknown[];
  tool_calls?: StoredToolCall[];
  tool_call_id?: string;
  tool_name?: string;
  reasoning?: string;
  finish_reason?: string;
  token_count?: number;
  synthetic?: string;
  timestamp: number;
}

export interface TokenUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_tokens?: number;
  reasoning_tokens?: number;
}

export interface NewSession {
  /** The session's id (1 to 200 printable characters, no spaces); default: `YYYYMMDD_HHMMSS_<6 hex>`. */
  id?: string;
  /** Where it runs: `cli`, `chat`, `api`, `cron`, `subagent`, ... (default `cli`). */
  source?: string;
  model?: string | null;
  title?: string | null;
  /** The session this one continues (compaction) or was spawned by (delegation). */
  parent_session_id?: string | null;
  /** Milliseconds since the epoch; default: now. */
  started_at?: number;
}

export interface SessionRecord {
  id: string;
  source: string;
  model: string | null;
  title: string | null;
  parent_session_id: string | null;
  started_at: number;
  /** The last append or change. */
  updated_at: number;
  ended_at: number | null;
  end_reason: string | null;
  message_count: number;
  tool_call_count: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  reasoning_tokens: number;
}

/** A row of `listSessions`: the record plus the start of its first user message. */
export interface SessionSummary extends SessionRecord {
  preview: string;
}

export interface ListSessionsOptions {
  limit?: number;
  offset?: number;
  /** Leave out sessions of these sources. */
  excludeSources?: readonly string[];
  /** Leave out sessions ended by compaction (their continuation stands for them). Default false. */
  tipsOnly?: boolean;
}

export interface SearchOptions {
  /** Only messages of these roles (default: every role). */
  roles?: readonly MessageRole[];
  /** Only sessions of these sources. */
  sources?: readonly string[];
  excludeSources?: readonly string[];
  /** Only messages of these sessions. */
  sessions?: readonly string[];
  /** Never messages of these sessions. */
  excludeSessions?: readonly string[];
  /** Relevance (default: bm25 over the newest max(300, limit) matches), or append order (newest / oldest first). */
  sort?: "relevance" | "newest" | "oldest";
  /** Rows to return (default 50, at most 1000). */
  limit?: number;
}

export interface SearchHit {
  message_id: number;
  session_id: string;
  role: MessageRole;
  timestamp: number;
  source: string;
}

export interface SearchResult {
  hits: SearchHit[];
  /** What the query became once sanitised (empty when nothing searchable was left). */
  expression: string;
  /** Which index answered: word index, trigram index (CJK), a scan (CJK terms under 3 characters), or none. */
  index: "fts" | "trigram" | "scan" | "none";
  /** What the sanitiser dropped or cut, for the model. */
  notes: string[];
}

/** A window of a session around one message. */
export interface MessageWindow {
  messages: StoredMessage[];
  /** Messages of the session before the window's first one, and after its last one. */
  messages_before: number;
  messages_after: number;
}

export interface SessionStore {
  createSession(init?: NewSession): Awaitable<SessionRecord>;
  /** Appends messages in order in one transaction (and adds `usage` to the session's totals); returns their ids. */
  appendMessages(sessionId: string, messages: readonly MessageInput[], options?: { usage?: TokenUsage }): Awaitable<number[]>;
  updateSession(sessionId: string, patch: { title?: string | null; model?: string | null; usage?: TokenUsage }): Awaitable<SessionRecord>;
  endSession(sessionId: string, reason: string): Awaitable<SessionRecord>;
  /**
   * Ends `sessionId` with `end_reason: "compaction"` and starts its continuation (parent = it; same
   * source, model and title unless given), appending `init.messages` to the new session. One transaction.
   */
  forkForCompaction(sessionId: string, init?: NewSession & { messages?: readonly MessageInput[] }): Awaitable<SessionRecord>;
  getSession(sessionId: string): Awaitable<SessionRecord | undefined>;
  /** A session's messages in order: the first `limit` (default all), or with `fromEnd` the last `limit`. */
  getMessages(sessionId: string, options?: { limit?: number; fromEnd?: boolean }): Awaitable<StoredMessage[]>;
  /** Sessions by last activity, newest first. */
  listSessions(options?: ListSessionsOptions): Awaitable<SessionSummary[]>;
  /** The session and its ancestors, nearest first (`[id, parent, ..., root]`); empty when unknown. */
  lineage(sessionId: string): Awaitable<string[]>;
  /** The session that continues `sessionId` after its compaction(s), followed to the last one; `sessionId` when none. */
  compactionTip?(sessionId: string): Awaitable<string>;
  /** The most recently active session with exactly this title. */
  findSessionByTitle(title: string): Awaitable<SessionRecord | undefined>;
  /** The session a message belongs to. */
  messageSession(messageId: number): Awaitable<string | undefined>;
  /** Full-text search; `query` is user text, sanitised by the store (it never throws on syntax). */
  search(query: string, options?: SearchOptions): Awaitable<SearchResult>;
  /** Snippets (`>>>match<<<`) of the given messages for `query`, by message id. */
  snippets(query: string, messageIds: readonly number[]): Awaitable<Map<number, string>>;
  /** `before` messages before `messageId` and `after` after it, in `sessionId`; undefined when the message is not in it. */
  messageWindow(sessionId: string, messageId: number, before: number, after: number): Awaitable<MessageWindow | undefined>;
  /** The first and last `count` messages of these roles, synthetic ones left out. */
  bookends(sessionId: string, count: number, roles: readonly MessageRole[]): Awaitable<{ start: StoredMessage[]; end: StoredMessage[] }>;
  close(): Awaitable<void>;
}
