/**
 * Full-text search over the store's two FTS5 indexes. The query is planned by fts-query.ts (user
 * text never reaches MATCH as written); filters are bound parameters. Snippets are made in a
 * second step for the few messages a caller keeps, not for every row scanned.
 */

import type { Database } from "./sqlite-open.js";
import { planQuery, snippetAround, type QueryPlan } from "./fts-query.js";
import type { SearchHit, SearchOptions, SearchResult } from "./types.js";

export const DEFAULT_SEARCH_LIMIT = 50;
/**
 * Relevance ranks the newest this-many matches (bm25 among themselves), or `limit` when larger.
 * Ranking every match of a word that is in half of 100,000 messages costs hundreds of milliseconds;
 * the newest matches are read in index order and the scan stops early. A query matching fewer
 * messages is ranked in full. Measured: 300 candidates cost a third of 1,000 (bench/sessions.mjs).
 */
export const RELEVANCE_CANDIDATES = 300;
export const MAX_SEARCH_LIMIT = 1000;
/** Tokens of context in an FTS5 snippet (the Python original's 40). */
const SNIPPET_TOKENS = 40;

function placeholders(n: number): string {
  return new Array(n).fill("?").join(", ");
}

function filters(options: SearchOptions): { sql: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  const add = (column: string, values: readonly unknown[] | undefined, negate: boolean) => {
    if (values === undefined || values.length === 0) return;
    parts.push(`${column} ${negate ? "NOT IN" : "IN"} (${placeholders(values.length)})`);
    params.push(...values);
  };
  add("m.role", options.roles, false);
  add("s.source", options.sources, false);
  add("s.source", options.excludeSources, true);
  add("m.session_id", options.sessions, false);
  add("m.session_id", options.excludeSessions, true);
  return { sql: parts.map((p) => ` AND ${p}`).join(""), params };
}

function table(plan: QueryPlan): string {
  return plan.kind === "trigram" ? "messages_trigram" : "messages_fts";
}

export function searchMessages(db: Database, query: string, options: SearchOptions = {}): SearchResult {
  const plan = planQuery(query, "m.search_text");
  const limit = Math.max(1, Math.min(MAX_SEARCH_LIMIT, Math.trunc(options.limit ?? DEFAULT_SEARCH_LIMIT)));
  const index = plan.kind === "none" ? "none" : plan.kind === "like" ? "scan" : plan.kind;
  if (plan.kind === "none") return { hits: [], expression: "", index, notes: plan.notes };
  const where = filters(options);
  const columns = "m.id AS message_id, m.session_id, m.role, m.timestamp, s.source";
  let sql: string;
  let params: unknown[];
  if (plan.kind === "like") {
    const direction = options.sort === "oldest" ? "ASC" : "DESC";
    sql =
      `SELECT ${columns} FROM messages m JOIN sessions s ON s.id = m.session_id ` +
      `WHERE m.synthetic IS NULL AND ${plan.likeSql}${where.sql} ORDER BY m.id ${direction} LIMIT ?`;
    params = [...plan.likeParams!, ...where.params, limit];
  } else {
    const fts = table(plan);
    const relevance = options.sort !== "newest" && options.sort !== "oldest";
    const direction = options.sort === "oldest" ? "ASC" : "DESC";
    sql =
      `SELECT ${columns}${relevance ? `, bm25(${fts}) AS score` : ""} FROM ${fts} JOIN messages m ON m.id = ${fts}.rowid JOIN sessions s ON s.id = m.session_id ` +
      `WHERE ${fts} MATCH ?${where.sql} ORDER BY ${fts}.rowid ${direction} LIMIT ?`;
    params = [plan.expression, ...where.params, relevance ? Math.max(limit, RELEVANCE_CANDIDATES) : limit];
    if (relevance) {
      const rows = db.prepare(sql).all(...params) as (SearchHit & { score: number })[];
      // Stable: equal scores keep the newest first.
      rows.sort((x, y) => x.score - y.score);
      const hits = rows.slice(0, limit).map(({ score: _score, ...hit }) => hit);
      return { hits, expression: plan.expression, index, notes: plan.notes };
    }
  }
  const hits = db.prepare(sql).all(...params) as SearchHit[];
  return { hits, expression: plan.expression, index, notes: plan.notes };
}

export function messageSnippets(db: Database, query: string, messageIds: readonly number[]): Map<number, string> {
  const plan = planQuery(query, "search_text");
  const out = new Map<number, string>();
  if (plan.kind === "none" || messageIds.length === 0) return out;
  if (plan.kind === "like") {
    const text = db.prepare("SELECT search_text FROM messages WHERE id = ?").pluck();
    for (const id of messageIds) {
      const value = text.get(id);
      if (typeof value === "string") out.set(id, snippetAround(value, plan.terms));
    }
    return out;
  }
  const fts = table(plan);
  // MATCH with rowid = ?: FTS5 seeks to the one row instead of walking every match. The id is bound
  // as a BigInt: a JS number binds as REAL, and FTS5 then ignores the rowid constraint altogether.
  const statement = db.prepare(`SELECT snippet(${fts}, 0, '>>>', '<<<', '...', ${SNIPPET_TOKENS}) FROM ${fts} WHERE ${fts} MATCH ? AND rowid = ?`).pluck();
  for (const id of messageIds) {
    const value = statement.get(plan.expression, BigInt(id));
    // search_text joins content, tool name and tool calls with spaces: no trailing blanks in a snippet.
    if (typeof value === "string") out.set(id, value.trim());
  }
  return out;
}
