/**
 * The `session_search` agent-loop tool: its schema (registered so the model sees it; dispatch
 * refuses to run it) and the handler the loop runs it with, over a `SessionStore`. One schema; the
 * mode follows from the arguments (session-search-modes.ts): query → discover, session_id +
 * around_message_id → scroll, session_id → read, nothing → browse.
 *
 * A handler reads only the store it was made with: there is no `profile` argument and no fallback
 * that looks through other profiles' stores for a session id (the Python original's read mode does).
 *
 * Every answer is a JSON object string, `{"success": true, "mode": …}` or `{"success": false,
 * "error": …}`; the handler never throws (a store failure is an error result).
 */

import type { AgentLoopContext, AgentLoopHandler } from "../../dispatch/agent-loop.js";
import type { FunctionSchema, MibyanToolOptions } from "../../registry/types.js";
import { MAX_QUERY_CHARS } from "../stores/sessions/fts-query.js";
import { SessionStoreError } from "../stores/sessions/errors.js";
import { MESSAGE_ROLES, type MessageRole, type SessionStore } from "../stores/sessions/types.js";
import { browse, currentConversation, discover, failure, read, scroll } from "./session-search-modes.js";

export const SESSION_SEARCH_DEFAULT_LIMIT = 3;
export const SESSION_SEARCH_MAX_LIMIT = 10;
export const SESSION_SEARCH_DEFAULT_WINDOW = 5;
export const SESSION_SEARCH_MAX_WINDOW = 20;

export const SESSION_SEARCH_SCHEMA: FunctionSchema = {
  name: "session_search",
  description: [
    "Search and read past conversations stored in this profile's session store (full-text search over every stored message; no model calls). It is history: what was said when, not the current state of files or systems.",
    "Four shapes, chosen by the arguments:",
    '1) DISCOVER — pass `query`: full-text search; returns up to `limit` sessions (default 3, max 10), one per conversation lineage. Each result has session_id, title, when, source, a snippet with the match between >>> and <<<, match_message_id, `messages` (5 before and after the match, the match marked "anchor": true), bookend_start / bookend_end (the first and last 3 user and assistant messages), messages_before and messages_after.',
    "2) SCROLL — pass `session_id` and `around_message_id`: the messages around that one (`window` each side, default 5, max 20). To go forward pass the last message's id, to go back the first's.",
    "3) READ — pass `session_id` only: the whole session, or its first 20 and last 10 messages when longer.",
    "4) BROWSE — no arguments: the most recently active sessions with a preview.",
    "Query syntax: words are ANDed (all must be in one message); OR between alternatives; NOT to exclude; \"quoted phrase\" for exact order; a trailing * for a prefix (deploy*). Other punctuation is treated as text, never as syntax. Chinese, Japanese, Korean and Thai text is matched as a substring.",
    "Discovery searches user and assistant messages by default (and tool output when nothing else matches); role_filter changes that. The current conversation is left out (you already have it), except parts of it that were compacted away. Sub-agent sessions are not searched.",
  ].join("\n\n"),
  parameters: {
    type: "object",
    properties: {
      query: { type: "string", description: "Discover: the words or phrases to find. Omit to browse recent sessions." },
      limit: { type: "integer", minimum: 1, maximum: SESSION_SEARCH_MAX_LIMIT, default: SESSION_SEARCH_DEFAULT_LIMIT, description: "Discover and browse: how many sessions (default 3, at most 10)." },
      sort: { type: "string", enum: ["newest", "oldest"], description: "Discover: order by time instead of relevance ('newest' for where something was left, 'oldest' for how it started)." },
      role_filter: { type: "string", description: "Discover: comma-separated roles to search (user, assistant, tool, system). Default 'user,assistant'; 'tool' searches tool output only." },
      session_id: { type: "string", description: "Scroll or read: a session_id from an earlier result." },
      around_message_id: { type: "integer", description: "Scroll: the message id to center on (a match_message_id, or any id seen in a window)." },
      window: { type: "integer", minimum: 1, maximum: SESSION_SEARCH_MAX_WINDOW, default: SESSION_SEARCH_DEFAULT_WINDOW, description: "Scroll: messages each side of the anchor (default 5, at most 20)." },
    },
    required: [],
  },
};

class ArgumentError extends Error {}

/** An integer from a number or a numeric string (models quote numbers); `fallback` when absent or unusable. */
function lenientInt(value: unknown, fallback: number): number {
  if (typeof value === "number" && Number.isFinite(value)) return Math.trunc(value);
  if (typeof value === "string" && /^\s*-?\d+\s*$/.test(value)) return Number.parseInt(value, 10);
  return fallback;
}

function clamp(value: number, min: number, max: number): number {
  return Math.max(min, Math.min(max, value));
}

function optionalString(value: unknown, name: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new ArgumentError(`${name} must be a string`);
  const trimmed = value.trim();
  return trimmed === "" ? undefined : trimmed;
}

function parseRoles(value: unknown): MessageRole[] | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  const items = Array.isArray(value) ? value : typeof value === "string" ? value.split(",") : undefined;
  if (items === undefined) throw new ArgumentError("role_filter must be a comma-separated string of roles");
  const roles: MessageRole[] = [];
  for (const item of items) {
    const role = String(item).trim().toLowerCase();
    if (role === "") continue;
    if (!(MESSAGE_ROLES as readonly string[]).includes(role)) throw new ArgumentError(`role_filter: unknown role ${JSON.stringify(role)} (use ${MESSAGE_ROLES.join(", ")})`);
    if (!roles.includes(role as MessageRole)) roles.push(role as MessageRole);
  }
  return roles.length === 0 ? undefined : roles;
}

function parseSessionId(value: unknown): string | undefined {
  let id = optionalString(value, "session_id");
  if (id === undefined) return undefined;
  if (id.startsWith("@session:")) id = id.slice("@session:".length);
  if (id.includes("/")) {
    throw new ArgumentError(`session_id ${JSON.stringify(id.slice(0, 80))} names a profile ("profile/id"); session_search reads only this profile's sessions: pass the id alone`);
  }
  return id;
}

async function run(store: SessionStore, args: Record<string, unknown>, ctx: AgentLoopContext): Promise<string> {
  if (args.profile !== undefined && args.profile !== null && args.profile !== "") {
    throw new ArgumentError("session_search reads only this profile's sessions; there is no profile argument");
  }
  const sessionId = parseSessionId(args.session_id);
  const current = await currentConversation(store, ctx.sessionId);
  if (sessionId !== undefined && args.around_message_id !== undefined && args.around_message_id !== null) {
    const around = lenientInt(args.around_message_id, Number.NaN);
    if (!Number.isSafeInteger(around)) return failure("scroll requires integer around_message_id");
    const window = clamp(lenientInt(args.window, SESSION_SEARCH_DEFAULT_WINDOW), 1, SESSION_SEARCH_MAX_WINDOW);
    return scroll(store, sessionId, around, window, current);
  }
  if (sessionId !== undefined) return read(store, sessionId);
  const limit = clamp(lenientInt(args.limit, SESSION_SEARCH_DEFAULT_LIMIT), 1, SESSION_SEARCH_MAX_LIMIT);
  const query = optionalString(args.query, "query");
  if (query === undefined) return browse(store, limit, current);
  const sort = args.sort === "newest" || args.sort === "oldest" ? args.sort : undefined;
  return discover(store, { query: query.slice(0, MAX_QUERY_CHARS * 2), limit, roles: parseRoles(args.role_filter), sort }, current);
}

/**
 * The loop's `session_search` handler over `store`; `ctx.sessionId` is the current session (left
 * out of discovery and browsing). `store` may be undefined: every call then gets an error result.
 */
export function createSessionSearchHandler(store: SessionStore | undefined): AgentLoopHandler {
  return async function session_search(args: Record<string, unknown>, ctx: AgentLoopContext): Promise<string> {
    if (store === undefined) return failure("session_search needs a session store, and the agent loop has none");
    try {
      return await run(store, args ?? {}, ctx ?? {});
    } catch (thrown) {
      if (thrown instanceof ArgumentError) return failure(thrown.message);
      if (thrown instanceof SessionStoreError) {
        return failure(thrown.kind === "invalid" || thrown.kind === "not_found" ? thrown.message : `the session store failed (${thrown.kind}): ${thrown.message}`);
      }
      return failure(`session_search failed: ${thrown instanceof Error ? thrown.message : String(thrown)}`);
    }
  };
}

/**
 * The registration that lists `session_search` among the model's tools (toolset `session_search`).
 * Dispatch refuses agent-loop tools before calling a handler, so the one here only explains that,
 * should a registry be configured without `session_search` among its agent-loop tools.
 */
export const SESSION_SEARCH_TOOL: MibyanToolOptions = {
  name: "session_search",
  toolset: "session_search",
  emoji: "🔎",
  parallelSafe: true,
  schema: SESSION_SEARCH_SCHEMA,
  handler: () => failure("session_search is an agent-loop tool: run it through the agent loop (createSessionSearchHandler)"),
};
