/**
 * The four modes of `session_search` over a `SessionStore`: discover (full-text search, one result
 * per lineage, each with its anchored window and bookends), scroll (a window around a message),
 * read (a whole session, head and tail when long), browse (recent sessions).
 *
 * The current conversation is left out where the model already has it: the current session, and
 * the sessions of its lineage that are still live (not ended by compaction). A compacted ancestor
 * is searchable: its transcript left the context when it was summarised.
 */

import {
  COMPACTION_END_REASON,
  DEMOTED_SESSION_SOURCES,
  HIDDEN_SESSION_SOURCES,
  type MessageRole,
  type SearchHit,
  type SessionRecord,
  type SessionStore,
} from "../stores/sessions/types.js";
import { discoverMessageCap, isoTime, READ_MESSAGE_CHARS, sessionMeta, shapeMessage } from "./session-search-shape.js";

/** FTS rows a discovery scans per pass before deduplicating by lineage (the original's 300). */
export const DISCOVER_SCAN_LIMIT = 300;
export const DISCOVER_WINDOW = 5;
export const BOOKEND_COUNT = 3;
export const READ_HEAD = 20;
export const READ_TAIL = 10;
const DEFAULT_ROLES: readonly MessageRole[] = ["user", "assistant"];

type Json = Record<string, unknown>;

export function failure(message: string): string {
  return JSON.stringify({ success: false, error: message });
}

/** What the handler knows about the conversation it runs in. */
export interface CurrentConversation {
  sessionId: string | undefined;
  /** The current session and the live sessions of its lineage: never searched. */
  live: Set<string>;
}

export async function currentConversation(store: SessionStore, sessionId: string | undefined): Promise<CurrentConversation> {
  const live = new Set<string>();
  if (sessionId === undefined) return { sessionId, live };
  live.add(sessionId);
  let lineage: string[] = [];
  try {
    lineage = await store.lineage(sessionId);
  } catch {
    // An id the store rejects has no lineage; the session itself stays excluded.
  }
  for (const id of lineage.slice(1)) {
    const record = await store.getSession(id);
    if (record !== undefined && record.end_reason !== COMPACTION_END_REASON) live.add(id);
  }
  return { sessionId, live };
}

async function lineageRoot(store: SessionStore, sessionId: string, cache: Map<string, string>): Promise<string> {
  let root = cache.get(sessionId);
  if (root === undefined) {
    const chain = await store.lineage(sessionId);
    root = chain[chain.length - 1] ?? sessionId;
    cache.set(sessionId, root);
  }
  return root;
}

export interface DiscoverArgs {
  query: string;
  limit: number;
  roles: readonly MessageRole[] | undefined;
  sort: "newest" | "oldest" | undefined;
}

export async function discover(store: SessionStore, args: DiscoverArgs, current: CurrentConversation): Promise<string> {
  const roots = new Map<string, string>();
  const chosen = new Map<string, SearchHit>(); // lineage root → first hit
  const excludeSessions = [...current.live];
  const notes: string[] = [];
  let usedRoles = args.roles ?? DEFAULT_ROLES;

  // A session whose title is the query comes first (the model often remembers a title).
  const title = args.query.trim().replace(/^[`'"]+|[`'"]+$/g, "");
  const titled = title === "" ? undefined : await store.findSessionByTitle(title);
  let titleEntry: Json | undefined;
  if (titled !== undefined && !current.live.has(titled.id) && !HIDDEN_SESSION_SOURCES.includes(titled.source)) {
    const root = await lineageRoot(store, titled.id, roots);
    const first = (await store.getMessages(titled.id, { limit: 1 }))[0];
    titleEntry = { _root: root, _session: titled, _anchor: first?.id, matched_role: "session_title", snippet: `Session title matched: ${titled.title}` };
  }

  const scan = async (roles: readonly MessageRole[], sources: { sources?: readonly string[]; excludeSources?: readonly string[] }) => {
    const result = await store.search(args.query, { roles, excludeSessions, limit: DISCOVER_SCAN_LIMIT, sort: args.sort ?? "relevance", ...sources });
    for (const note of result.notes) if (!notes.includes(note)) notes.push(note);
    for (const hit of result.hits) {
      if (chosen.size + (titleEntry ? 1 : 0) >= args.limit) break;
      const root = await lineageRoot(store, hit.session_id, roots);
      if (titleEntry?._root === root || chosen.has(root)) continue;
      chosen.set(root, hit);
    }
    return result;
  };
  const passes = async (roles: readonly MessageRole[]) => {
    // Interactive sessions first, scheduled ones (cron) only for what is left: a wall of cron hits
    // must not crowd the user's own sessions out of the scanned rows (#19434).
    const first = await scan(roles, { excludeSources: [...HIDDEN_SESSION_SOURCES, ...DEMOTED_SESSION_SOURCES] });
    if (chosen.size + (titleEntry ? 1 : 0) < args.limit) await scan(roles, { sources: DEMOTED_SESSION_SOURCES });
    return first;
  };
  const first = await passes(usedRoles);
  if (first.index === "none") {
    return JSON.stringify({ success: true, mode: "discover", query: args.query, results: [], count: 0, message: "The query has no searchable terms (words or numbers).", ...(notes.length ? { notes } : {}) });
  }
  if (chosen.size === 0 && titleEntry === undefined && args.roles === undefined) {
    // Matches only in tool output used to read as "nothing found" (#83170): look there too, and say so.
    usedRoles = ["tool"];
    await passes(usedRoles);
    if (chosen.size > 0) notes.push("No match in user or assistant messages; these matches are in tool output (role_filter \"tool\").");
  }

  const entries: Json[] = titleEntry ? [titleEntry] : [];
  for (const [root, hit] of chosen) entries.push({ _root: root, _hit: hit });
  if (entries.length === 0) {
    const hidden = current.live.size === 0 ? 0 : (await store.search(args.query, { roles: args.roles, sessions: excludeSessions, limit: DISCOVER_SCAN_LIMIT })).hits.length;
    const message =
      hidden > 0
        ? `${hidden}${hidden >= DISCOVER_SCAN_LIMIT ? "+" : ""} match(es) found, but all are in the current conversation (already in your context) and were left out. That is not evidence the topic is absent from past sessions; all terms must be in one message, so fewer or broader terms (or OR) may reach them.`
        : "No matching sessions found. All terms must appear in one message: try fewer or broader terms, OR between alternatives, or a prefix like deploy*.";
    return JSON.stringify({ success: true, mode: "discover", query: args.query, results: [], count: 0, message, ...(hidden > 0 ? { excluded_current_matches: hidden } : {}), ...(notes.length ? { notes } : {}) });
  }

  const snippets = await store.snippets(args.query, [...chosen.values()].map((hit) => hit.message_id));
  const cap = discoverMessageCap(entries.length, 2 * DISCOVER_WINDOW + 1 + 2 * BOOKEND_COUNT);
  const results: Json[] = [];
  for (const entry of entries) {
    const hit = entry._hit as SearchHit | undefined;
    const session = (entry._session as SessionRecord | undefined) ?? (await store.getSession(hit!.session_id));
    const anchor = hit?.message_id ?? (entry._anchor as number | undefined);
    if (session === undefined) continue;
    const view = anchor === undefined ? undefined : await store.messageWindow(session.id, anchor, DISCOVER_WINDOW, DISCOVER_WINDOW);
    const ends = await store.bookends(session.id, BOOKEND_COUNT, DEFAULT_ROLES);
    const root = entry._root as string;
    // Metadata of the matching session itself (#103184), the title inherited from the lineage when it has none.
    const title = session.title ?? (root !== session.id ? ((await store.getSession(root))?.title ?? null) : null);
    results.push({
      session_id: session.id,
      ...sessionMeta(session, title),
      matched_role: hit?.role ?? entry.matched_role,
      match_message_id: anchor ?? null,
      snippet: hit ? (snippets.get(hit.message_id) ?? "") : entry.snippet,
      bookend_start: ends.start.map((m) => shapeMessage(m, Math.floor(cap / 2))),
      messages: (view?.messages ?? []).map((m) => shapeMessage(m, cap, anchor)),
      bookend_end: ends.end.map((m) => shapeMessage(m, Math.floor(cap / 2))),
      messages_before: view?.messages_before ?? 0,
      messages_after: view?.messages_after ?? 0,
      ...(session.parent_session_id !== null ? { parent_session_id: session.parent_session_id } : {}),
      ...(root !== session.id ? { lineage_root: root } : {}),
      ...(current.sessionId !== undefined && root === (await lineageRoot(store, current.sessionId, roots)) ? { from_current_lineage: "compacted earlier part of this conversation" } : {}),
    });
  }
  return JSON.stringify({ success: true, mode: "discover", query: args.query, results, count: results.length, sessions_searched: chosen.size, ...(notes.length ? { notes } : {}) });
}

export async function scroll(store: SessionStore, sessionId: string, aroundId: number, window: number, current: CurrentConversation): Promise<string> {
  let session = await store.getSession(sessionId);
  if (session === undefined) return failure(`session_id not found: ${sessionId}`);
  const owner = await store.messageSession(aroundId);
  if (owner === undefined) return failure(`around_message_id ${aroundId} not in session_id ${sessionId}`);
  let warning: string | undefined;
  if (owner !== session.id) {
    // A parent's id with a message of its continuation (or the reverse): same lineage, so follow it.
    const roots = new Map<string, string>();
    if ((await lineageRoot(store, owner, roots)) !== (await lineageRoot(store, session.id, roots))) {
      return failure(`around_message_id ${aroundId} not in session_id ${sessionId}`);
    }
    warning = `around_message_id ${aroundId} lives in ${owner}, of the same lineage as ${sessionId}; shown from there`;
    session = (await store.getSession(owner))!;
  }
  if (current.live.has(session.id)) {
    return failure("scroll rejected: the anchor is in the current conversation (already in your active context)");
  }
  const view = await store.messageWindow(session.id, aroundId, window, window);
  if (view === undefined) return failure(`around_message_id ${aroundId} not in session_id ${sessionId}`);
  return JSON.stringify({
    success: true,
    mode: "scroll",
    session_id: session.id,
    around_message_id: aroundId,
    session_meta: sessionMeta(session),
    window,
    messages: view.messages.map((m) => shapeMessage(m, READ_MESSAGE_CHARS, aroundId)),
    messages_before: view.messages_before,
    messages_after: view.messages_after,
    ...(warning ? { warning } : {}),
  });
}

export async function read(store: SessionStore, sessionId: string): Promise<string> {
  const session = await store.getSession(sessionId);
  if (session === undefined) return failure(`session_id not found: ${sessionId}`);
  const total = session.message_count;
  const truncated = total > READ_HEAD + READ_TAIL;
  const messages = truncated
    ? [...(await store.getMessages(session.id, { limit: READ_HEAD })), ...(await store.getMessages(session.id, { limit: READ_TAIL, fromEnd: true }))]
    : await store.getMessages(session.id);
  return JSON.stringify({
    success: true,
    mode: "read",
    session_id: session.id,
    session_meta: sessionMeta(session),
    ...(session.parent_session_id !== null ? { parent_session_id: session.parent_session_id } : {}),
    message_count: total,
    truncated,
    messages: messages.map((m) => shapeMessage(m, READ_MESSAGE_CHARS)),
    ...(truncated ? { message: `Session has ${total} messages; showing the first ${READ_HEAD} and the last ${READ_TAIL}. Pass around_message_id (any id above) to scroll the middle.` } : {}),
  });
}

export async function browse(store: SessionStore, limit: number, current: CurrentConversation): Promise<string> {
  const rows = await store.listSessions({ limit: limit + current.live.size, excludeSources: HIDDEN_SESSION_SOURCES, tipsOnly: true });
  const results = rows
    .filter((row) => !current.live.has(row.id))
    .slice(0, limit)
    .map((row) => ({
      session_id: row.id,
      title: row.title,
      source: row.source,
      model: row.model,
      started_at: isoTime(row.started_at),
      last_active: isoTime(row.updated_at),
      message_count: row.message_count,
      preview: row.preview,
      ...(row.parent_session_id !== null ? { parent_session_id: row.parent_session_id } : {}),
    }));
  return JSON.stringify({
    success: true,
    mode: "browse",
    results,
    count: results.length,
    message: `Showing the ${results.length} most recently active sessions. Pass query to search, or session_id to read one.`,
  });
}
