/**
 * `SessionStore` on SQLite (better-sqlite3): one file per profile home, WAL, every write in one
 * `BEGIN IMMEDIATE` transaction (a turn's messages and its usage land together or not at all), and
 * several stores — in one process or in several — may share a file. Every failure is a
 * `SessionStoreError` with a kind. Synchronous: better-sqlite3 has no async API.
 */

import { SessionStoreError, toStoreError } from "./errors.js";
import { sessionStorePath, type OpenDatabaseOptions } from "./location.js";
import { openDatabase, type Database, type Statement, type Transaction } from "./sqlite-open.js";
import { checkSessionId, messageRow, newSessionId, previewText, toSessionRecord, toStoredMessage, usageCounts, type UsageCounts } from "./sqlite-rows.js";
import { messageSnippets, searchMessages } from "./sqlite-search.js";
import {
  COMPACTION_END_REASON,
  type ListSessionsOptions,
  type MessageInput,
  type MessageRole,
  type MessageWindow,
  type NewSession,
  type SearchOptions,
  type SearchResult,
  type SessionRecord,
  type SessionStore,
  type SessionSummary,
  type StoredMessage,
  type TokenUsage,
} from "./types.js";

/** Longest parent chain followed (a guard against cycles in a hand-edited file). */
const MAX_LINEAGE = 64;
const MAX_LIST = 1000;

export interface SqliteSessionStoreOptions extends OpenDatabaseOptions {
  /** The database file; default `<home>/sessions/sessions.db`. */
  path?: string;
  /** The profile home whose store to open (default: `MIBYAN_HOME`, else `~/.mibyan`). */
  home?: string;
  /** The clock, for tests. */
  now?: () => number;
}

type Row = Record<string, unknown>;

function placeholders(n: number): string {
  return new Array(n).fill("?").join(", ");
}

function clampInt(value: number | undefined, fallback: number, min: number, max: number): number {
  const n = value === undefined || !Number.isFinite(value) ? fallback : Math.trunc(value);
  return Math.max(min, Math.min(max, n));
}

export class SqliteSessionStore implements SessionStore {
  /** The database file this store reads and writes. */
  readonly path: string;
  readonly #now: () => number;
  #db: Database | undefined;
  readonly #statements = new Map<string, Statement>();
  #appendTransaction: Transaction<(id: string, batch: readonly MessageInput[], counts: UsageCounts) => number[]> | undefined;

  constructor(options: SqliteSessionStoreOptions = {}) {
    this.path = options.path ?? sessionStorePath(options.home);
    this.#now = options.now ?? Date.now;
    this.#db = openDatabase(this.path, options);
  }

  /** Runs `fn` with the open database; driver errors become SessionStoreErrors. */
  #run<T>(fn: (db: Database) => T): T {
    const db = this.#db;
    if (db === undefined) throw new SessionStoreError("closed", `session store ${this.path} is closed`);
    try {
      return fn(db);
    } catch (thrown) {
      throw toStoreError(thrown, this.path);
    }
  }

  #statement(db: Database, sql: string): Statement {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = db.prepare<unknown[], unknown>(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  #get(db: Database, sql: string, ...params: unknown[]): Row | undefined {
    return this.#statement(db, sql).get(...params) as Row | undefined;
  }

  #all(db: Database, sql: string, ...params: unknown[]): Row[] {
    return this.#statement(db, sql).all(...params) as Row[];
  }

  #requireSession(db: Database, sessionId: string): SessionRecord {
    const row = this.#get(db, "SELECT * FROM sessions WHERE id = ?", checkSessionId(sessionId));
    if (row === undefined) throw new SessionStoreError("not_found", `no session ${JSON.stringify(sessionId)} in ${this.path}`);
    return toSessionRecord(row);
  }

  #insertSession(db: Database, init: NewSession, now: number): SessionRecord {
    const source = init.source ?? "cli";
    if (typeof source !== "string" || source === "" || source.length > 100) throw new SessionStoreError("invalid", "source must be a non-empty string of at most 100 characters");
    const parent = init.parent_session_id ?? null;
    if (parent !== null) this.#requireSession(db, parent);
    const startedAt = init.started_at ?? now;
    const sql = "INSERT INTO sessions (id, source, model, title, parent_session_id, started_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)";
    for (let attempt = 0; ; attempt++) {
      const id = init.id === undefined ? newSessionId(startedAt) : checkSessionId(init.id);
      try {
        this.#statement(db, sql).run(id, source, init.model ?? null, init.title ?? null, parent, startedAt, now);
        return this.#requireSession(db, id);
      } catch (thrown) {
        const code = (thrown as { code?: string }).code;
        if (code !== "SQLITE_CONSTRAINT_PRIMARYKEY") throw thrown;
        if (init.id !== undefined) throw new SessionStoreError("invalid", `session ${JSON.stringify(init.id)} already exists`);
        if (attempt >= 5) throw thrown;
      }
    }
  }

  #append(db: Database, sessionId: string, messages: readonly MessageInput[], usage: UsageCounts, now: number): number[] {
    if (!Array.isArray(messages)) throw new SessionStoreError("invalid", "messages must be an array");
    const rows = messages.map((message, i) => messageRow(message, i, now));
    const id = checkSessionId(sessionId);
    let toolCalls = 0;
    for (const { toolCalls: calls } of rows) toolCalls += calls;
    // The session's counters first: no row changed means no such session (one statement instead of
    // a lookup and an update; the transaction rolls back on the throw).
    const updated = this.#statement(
      db,
      "UPDATE sessions SET message_count = message_count + ?, tool_call_count = tool_call_count + ?, input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, cache_read_tokens = cache_read_tokens + ?, reasoning_tokens = reasoning_tokens + ?, updated_at = max(updated_at, ?) WHERE id = ?",
    ).run(rows.length, toolCalls, usage.input, usage.output, usage.cacheRead, usage.reasoning, now, id);
    if (updated.changes === 0) throw new SessionStoreError("not_found", `no session ${JSON.stringify(sessionId)} in ${this.path}`);
    const insert = this.#statement(
      db,
      "INSERT INTO messages (session_id, role, content, content_parts, tool_calls, tool_call_id, tool_name, reasoning, finish_reason, token_count, synthetic, unspaced, timestamp) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    const ids: number[] = [];
    for (const { row } of rows) ids.push(Number(insert.run(id, ...row).lastInsertRowid));
    return ids;
  }

  createSession(init: NewSession = {}): SessionRecord {
    return this.#run((db) => db.transaction(() => this.#insertSession(db, init, this.#now())).immediate());
  }

  appendMessages(sessionId: string, messages: readonly MessageInput[], options: { usage?: TokenUsage } = {}): number[] {
    return this.#run((db) => {
      const usage = usageCounts(options.usage);
      // The hot path: one transaction function made once, not a new wrapper per turn.
      this.#appendTransaction ??= db.transaction((id: string, batch: readonly MessageInput[], counts: UsageCounts) => this.#append(db, id, batch, counts, this.#now()));
      return this.#appendTransaction.immediate(sessionId, messages, usage);
    });
  }

  updateSession(sessionId: string, patch: { title?: string | null; model?: string | null; usage?: TokenUsage }): SessionRecord {
    return this.#run((db) =>
      db
        .transaction(() => {
          const current = this.#requireSession(db, sessionId);
          const usage = usageCounts(patch.usage);
          for (const key of ["title", "model"] as const) {
            const value = patch[key];
            if (value !== undefined && value !== null && (typeof value !== "string" || value.length > 500)) {
              throw new SessionStoreError("invalid", `${key} must be a string of at most 500 characters or null`);
            }
          }
          this.#statement(
            db,
            "UPDATE sessions SET title = ?, model = ?, input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, cache_read_tokens = cache_read_tokens + ?, reasoning_tokens = reasoning_tokens + ?, updated_at = max(updated_at, ?) WHERE id = ?",
          ).run(
            patch.title === undefined ? current.title : patch.title,
            patch.model === undefined ? current.model : patch.model,
            usage.input,
            usage.output,
            usage.cacheRead,
            usage.reasoning,
            this.#now(),
            current.id,
          );
          return this.#requireSession(db, current.id);
        })
        .immediate(),
    );
  }

  #end(db: Database, sessionId: string, reason: string, now: number): SessionRecord {
    if (typeof reason !== "string" || reason === "" || reason.length > 100) throw new SessionStoreError("invalid", "end reason must be a non-empty string of at most 100 characters");
    const current = this.#requireSession(db, sessionId);
    this.#statement(db, "UPDATE sessions SET ended_at = ?, end_reason = ?, updated_at = max(updated_at, ?) WHERE id = ?").run(now, reason, now, current.id);
    return this.#requireSession(db, current.id);
  }

  endSession(sessionId: string, reason: string): SessionRecord {
    return this.#run((db) => db.transaction(() => this.#end(db, sessionId, reason, this.#now())).immediate());
  }

  forkForCompaction(sessionId: string, init: NewSession & { messages?: readonly MessageInput[] } = {}): SessionRecord {
    return this.#run((db) =>
      db
        .transaction(() => {
          const now = this.#now();
          const parent = this.#end(db, sessionId, COMPACTION_END_REASON, now);
          const child = this.#insertSession(
            db,
            {
              ...init,
              source: init.source ?? parent.source,
              model: init.model === undefined ? parent.model : init.model,
              title: init.title === undefined ? parent.title : init.title,
              parent_session_id: parent.id,
            },
            now,
          );
          if (init.messages !== undefined && init.messages.length > 0) this.#append(db, child.id, init.messages, usageCounts(undefined), now);
          return this.#requireSession(db, child.id);
        })
        .immediate(),
    );
  }

  getSession(sessionId: string): SessionRecord | undefined {
    return this.#run((db) => {
      const row = this.#get(db, "SELECT * FROM sessions WHERE id = ?", checkSessionId(sessionId));
      return row === undefined ? undefined : toSessionRecord(row);
    });
  }

  getMessages(sessionId: string, options: { limit?: number; fromEnd?: boolean } = {}): StoredMessage[] {
    return this.#run((db) => {
      const id = checkSessionId(sessionId);
      const limit = options.limit === undefined ? -1 : clampInt(options.limit, 0, 0, Number.MAX_SAFE_INTEGER);
      if (options.fromEnd === true) {
        return this.#all(db, "SELECT * FROM messages WHERE session_id = ? ORDER BY id DESC LIMIT ?", id, limit).reverse().map(toStoredMessage);
      }
      return this.#all(db, "SELECT * FROM messages WHERE session_id = ? ORDER BY id LIMIT ?", id, limit).map(toStoredMessage);
    });
  }

  listSessions(options: ListSessionsOptions = {}): SessionSummary[] {
    return this.#run((db) => {
      const exclude = options.excludeSources ?? [];
      const where: string[] = [];
      if (exclude.length > 0) where.push(`s.source NOT IN (${placeholders(exclude.length)})`);
      if (options.tipsOnly === true) where.push("(s.end_reason IS NULL OR s.end_reason <> ?)");
      const sql =
        "SELECT s.*, (SELECT substr(content, 1, 400) FROM messages WHERE session_id = s.id AND role = 'user' AND synthetic IS NULL ORDER BY id LIMIT 1) AS preview " +
        `FROM sessions s ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY s.updated_at DESC, s.rowid DESC LIMIT ? OFFSET ?`;
      const params: unknown[] = [...exclude];
      if (options.tipsOnly === true) params.push(COMPACTION_END_REASON);
      params.push(clampInt(options.limit, 20, 1, MAX_LIST), clampInt(options.offset, 0, 0, Number.MAX_SAFE_INTEGER));
      return this.#all(db, sql, ...params).map((row) => ({ ...toSessionRecord(row), preview: previewText(row.preview as string | null) }));
    });
  }

  lineage(sessionId: string): string[] {
    return this.#run((db) => {
      const chain: string[] = [];
      let current: string | null = checkSessionId(sessionId);
      while (current !== null && chain.length < MAX_LINEAGE && !chain.includes(current)) {
        const row = this.#get(db, "SELECT parent_session_id FROM sessions WHERE id = ?", current);
        if (row === undefined) break;
        chain.push(current);
        current = (row.parent_session_id as string | null) ?? null;
      }
      return chain;
    });
  }

  /**
   * The session that continues `sessionId` after its compaction, followed to the last one (the tip):
   * `sessionId` itself when it was not compacted. A compaction's continuation is the child started
   * when its parent ended (`forkForCompaction` does both in one transaction, at one time), which tells
   * it from the sessions it delegated to (started earlier).
   */
  compactionTip(sessionId: string): string {
    return this.#run((db) => {
      let current = checkSessionId(sessionId);
      for (let depth = 0; depth < MAX_LINEAGE; depth++) {
        const row = this.#get(
          db,
          "SELECT c.id FROM sessions p JOIN sessions c ON c.parent_session_id = p.id AND c.started_at >= p.ended_at " +
            "WHERE p.id = ? AND p.end_reason = ? ORDER BY c.started_at DESC, c.rowid DESC LIMIT 1",
          current,
          COMPACTION_END_REASON,
        );
        if (row === undefined || row.id === current) break;
        current = row.id as string;
      }
      return current;
    });
  }

  findSessionByTitle(title: string): SessionRecord | undefined {
    return this.#run((db) => {
      if (typeof title !== "string" || title === "") return undefined;
      const row = this.#get(db, "SELECT * FROM sessions WHERE title = ? ORDER BY updated_at DESC, rowid DESC LIMIT 1", title);
      return row === undefined ? undefined : toSessionRecord(row);
    });
  }

  messageSession(messageId: number): string | undefined {
    return this.#run((db) => {
      if (!Number.isSafeInteger(messageId)) return undefined;
      return this.#get(db, "SELECT session_id FROM messages WHERE id = ?", messageId)?.session_id as string | undefined;
    });
  }

  search(query: string, options: SearchOptions = {}): SearchResult {
    return this.#run((db) => searchMessages(db, query, options));
  }

  snippets(query: string, messageIds: readonly number[]): Map<number, string> {
    return this.#run((db) => messageSnippets(db, query, messageIds));
  }

  messageWindow(sessionId: string, messageId: number, before: number, after: number): MessageWindow | undefined {
    return this.#run((db) => {
      const id = checkSessionId(sessionId);
      if (!Number.isSafeInteger(messageId)) return undefined;
      if (this.#get(db, "SELECT 1 AS found FROM messages WHERE id = ? AND session_id = ?", messageId, id) === undefined) return undefined;
      const earlier = this.#all(db, "SELECT * FROM messages WHERE session_id = ? AND id < ? ORDER BY id DESC LIMIT ?", id, messageId, clampInt(before, 0, 0, 1000)).reverse();
      const later = this.#all(db, "SELECT * FROM messages WHERE session_id = ? AND id >= ? ORDER BY id LIMIT ?", id, messageId, clampInt(after, 0, 0, 1000) + 1);
      const rows = [...earlier, ...later];
      const first = rows[0]!.id as number;
      const last = rows[rows.length - 1]!.id as number;
      const countWhere = (op: string, bound: number) => this.#get(db, `SELECT count(*) AS n FROM messages WHERE session_id = ? AND id ${op} ?`, id, bound)!.n as number;
      return { messages: rows.map(toStoredMessage), messages_before: countWhere("<", first), messages_after: countWhere(">", last) };
    });
  }

  bookends(sessionId: string, count: number, roles: readonly MessageRole[]): { start: StoredMessage[]; end: StoredMessage[] } {
    return this.#run((db) => {
      const id = checkSessionId(sessionId);
      const n = clampInt(count, 3, 0, 100);
      const roleSql = roles.length > 0 ? ` AND role IN (${placeholders(roles.length)})` : "";
      const base = `SELECT * FROM messages WHERE session_id = ? AND synthetic IS NULL${roleSql} ORDER BY id`;
      const start = this.#all(db, `${base} LIMIT ?`, id, ...roles, n).map(toStoredMessage);
      const end = this.#all(db, `${base} DESC LIMIT ?`, id, ...roles, n).reverse().map(toStoredMessage);
      return { start, end };
    });
  }

  close(): void {
    const db = this.#db;
    this.#db = undefined;
    this.#statements.clear();
    this.#appendTransaction = undefined;
    db?.close();
  }
}

/** Opens the session store of a profile home (`MIBYAN_HOME` by default), creating it when missing. */
export function openSessionStore(options: SqliteSessionStoreOptions = {}): SqliteSessionStore {
  return new SqliteSessionStore(options);
}
