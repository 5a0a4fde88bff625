/**
 * Playing the attacker against the session store's query sanitiser: every input that would break
 * or bend FTS5's syntax if it reached MATCH as written (quotes, NEAR, column filters, `*`,
 * parentheses, `^`, unbalanced quotes, NUL, huge input) runs against a real store, never throws, and
 * searches for the words the user typed — not for what the syntax would have made of them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { MAX_QUERY_CHARS, MAX_QUERY_TERMS, planQuery } from "../src/agent/stores/sessions/fts-query.js";
import { openSessionStore, type SqliteSessionStore } from "../src/agent/stores/sessions/sqlite-store.js";

const require = createRequire(import.meta.url);
let dir: string;
let store: SqliteSessionStore;
const ids: Record<string, number> = {};

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "mibyan-sessions-query-"));
  store = openSessionStore({ home: dir });
  const session = store.createSession({ id: "s1" });
  const texts: Record<string, string> = {
    chat: "the chat-send handler drops messages in P2.2",
    todo: "TODO: fix the flaky retry loop",
    near: "near the harbour the ferry waits",
    column: "search_text is a column name and secret is a word",
    paren: "call foo(bar) then baz",
    caret: "the ^caret and the +plus and {braces}",
    quote: 'she said "hello world" twice',
    nul: "alpha beta gamma",
    deploy: "deployment of the deployer deploys",
    other: "nothing relevant here at all",
  };
  for (const [key, content] of Object.entries(texts)) ids[key] = store.appendMessages(session.id, [{ role: "user", content }])[0]!;
});

afterAll(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The message ids a query finds. */
function found(query: string): number[] {
  return store
    .search(query, { limit: 100 })
    .hits.map((h) => h.message_id)
    .sort((a, b) => a - b);
}

/** What raw FTS5 does with the same text: throws or not (to show each attack is a real one). */
function rawMatchThrows(query: string): boolean {
  const Database = require("better-sqlite3") as typeof import("better-sqlite3");
  const db = new Database(":memory:");
  db.exec("CREATE VIRTUAL TABLE t USING fts5(x)");
  try {
    db.prepare("SELECT * FROM t WHERE t MATCH ?").all(query);
    return false;
  } catch {
    return true;
  } finally {
    db.close();
  }
}

describe("query sanitiser: the acceptance list", () => {
  it("chat-send and P2.2 are phrases (raw FTS5 reads - as NOT-ish column syntax and . as an error)", () => {
    expect(rawMatchThrows("chat-send")).toBe(true);
    expect(rawMatchThrows("P2.2")).toBe(true);
    expect(found("chat-send")).toEqual([ids.chat]);
    expect(found("P2.2")).toEqual([ids.chat]);
    expect(planQuery("chat-send").expression).toBe('"chat-send"');
  });

  it("'TODO: fix' is not a column filter on a column named TODO", () => {
    expect(rawMatchThrows("TODO: fix")).toBe(true);
    expect(found("TODO: fix")).toEqual([ids.todo]);
  });

  it('an unbalanced quote is dropped, the words stay: "unbalanced', () => {
    expect(rawMatchThrows('"unbalanced')).toBe(true);
    expect(found('"retry')).toEqual([ids.todo]);
    expect(found('retry "loop')).toEqual([ids.todo]);
    expect(planQuery('"unbalanced').expression).toBe('"unbalanced"');
  });

  it("a bare operator (AND, OR, NOT) searches nothing instead of throwing", () => {
    for (const query of ["AND", "OR", "NOT", "AND OR NOT", "NOT NOT"]) {
      expect(rawMatchThrows(query)).toBe(true);
      expect(store.search(query)).toMatchObject({ hits: [], index: "none" });
    }
  });
});

describe("query sanitiser: attacks", () => {
  it("NEAR(...) is the words inside, not a proximity group", () => {
    expect(rawMatchThrows("NEAR(harbour ferry, 0)")).toBe(false); // valid syntax in FTS5: it would run a NEAR query
    expect(found("NEAR(harbour ferry)")).toEqual([ids.near]);
    // "NEAR" itself is a word: only the message that has the word near matches.
    expect(found("NEAR")).toEqual([ids.near]);
    expect(planQuery("NEAR(a b, 3)").expression).toBe('"NEAR" "a" "b," "3"');
  });

  it("a column filter names no column: search_text:secret is the two words as a phrase", () => {
    expect(rawMatchThrows("search_text:secret")).toBe(true); // raw: no such column in t; in the store it would filter the column
    expect(found("search_text:secret")).toEqual([]);
    expect(found("secret")).toEqual([ids.column]);
    expect(found("{search_text}: secret")).toEqual([ids.column]); // the braces form of a column filter
  });

  it("* only makes a prefix at the end of a word; a lone or leading * is dropped", () => {
    expect(rawMatchThrows("*")).toBe(true);
    expect(found("deploy*")).toEqual([ids.deploy]);
    expect(found("deploy")).toEqual([]);
    expect(found("*deploy*")).toEqual([ids.deploy]);
    expect(store.search("***").index).toBe("none");
    expect(planQuery("de*ploy").expression).toBe('"deploy"');
  });

  it("parentheses group nothing and cannot be unbalanced", () => {
    for (const query of ["(", ")", "((foo", "foo)) OR (", "(bar OR", "foo(bar)"]) {
      expect(() => store.search(query)).not.toThrow();
    }
    expect(rawMatchThrows("((foo")).toBe(true);
    expect(found("foo(bar)")).toEqual([ids.paren]);
    expect(found("(baz OR nothing) AND call")).toEqual([ids.paren]);
  });

  it("^, + and {} are text", () => {
    expect(rawMatchThrows("^caret +plus")).toBe(false);
    expect(found("^caret")).toEqual([ids.caret]);
    expect(found("+plus")).toEqual([ids.caret]);
    expect(found("{braces}")).toEqual([ids.caret]);
  });

  it("a quoted phrase stays a phrase; quotes inside cannot escape it", () => {
    expect(found('"hello world"')).toEqual([ids.quote]);
    expect(found('"world hello"')).toEqual([]);
    // Three quotes: the first two make a phrase, the third is unbalanced and dropped.
    expect(() => found('"hello" world" OR "x')).not.toThrow();
    expect(planQuery('a"b').expression).toBe('"a" "b"');
    // Every emitted term is one quoted string with no bare quote inside.
    for (const query of ['"', '""', '"""', '" OR "', 'x"" OR ""y']) {
      const plan = planQuery(query);
      expect(plan.expression.replace(/"[^"]*"/g, "")).toMatch(/^[\s*ANDORT]*$/);
    }
  });

  it("NUL and other control characters separate words instead of cutting the query", () => {
    expect(found("alpha\u0000gamma")).toEqual([ids.nul]);
    expect(found("\u0000\u0001\u001f\u007f")).toEqual([]);
    expect(store.search("\u0000").index).toBe("none");
  });

  it("huge input is cut (with a note) and answers quickly", () => {
    const huge = "retry ".repeat(200_000); // 1.2 MB
    const started = Date.now();
    const result = store.search(huge);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.notes.join(" ")).toContain(String(MAX_QUERY_CHARS));
    expect(result.notes.join(" ")).toContain(String(MAX_QUERY_TERMS));
    expect(result.hits.map((h) => h.message_id)).toEqual([ids.todo]);
    const terms = Array.from({ length: 100 }, (_, i) => `t${i}`).join(" OR ");
    expect(planQuery(terms).terms).toHaveLength(MAX_QUERY_TERMS);
  });

  it("operators keep their meaning between words: OR, NOT, AND", () => {
    expect(found("harbour OR retry")).toEqual([ids.todo, ids.near]);
    expect(found("the NOT retry")).toEqual([ids.chat, ids.near, ids.caret, ids.deploy]);
    expect(found("retry AND loop")).toEqual([ids.todo]);
    expect(found("retry AND OR loop")).toEqual([ids.todo]); // a run of operators keeps its first
    expect(found("OR retry NOT")).toEqual([ids.todo]);
    // lowercase operators are words
    expect(found("retry and")).toEqual([]);
  });

  it("no input from a fuzz of FTS5's special characters ever throws", () => {
    const alphabet = ['"', "*", "(", ")", ":", "^", "+", "-", "{", "}", "NEAR", "AND", "OR", "NOT", ",", "\u0000", " ", "a", "retry", "选品", "é", "\\", "'", "%", "_", "\ud800"];
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    for (let i = 0; i < 2000; i++) {
      const query = Array.from({ length: 1 + Math.floor(random() * 12) }, () => alphabet[Math.floor(random() * alphabet.length)]).join(random() < 0.5 ? "" : " ");
      expect(() => store.search(query), JSON.stringify(query)).not.toThrow();
      expect(() => store.snippets(query, [ids.todo!])).not.toThrow();
    }
  });
});

describe("query sanitiser: CJK", () => {
  it("a CJK phrase runs on the trigram index; a CJK term under 3 characters on a scan; LIKE wildcards are literal", () => {
    const session = store.createSession();
    const [zh] = store.appendMessages(session.id, [{ role: "user", content: "我们在做选品搜索的工作，明天继续" }]);
    const [pct] = store.appendMessages(session.id, [{ role: "user", content: "折扣 100% 选品" }]);
    expect(store.search("选品搜索")).toMatchObject({ index: "trigram", hits: [{ message_id: zh }] });
    expect(store.search("选品").index).toBe("scan");
    expect(found("选品")).toEqual([zh, pct]);
    expect(found("选品 100%")).toEqual([pct]);
    // % and _ are literal characters here: unescaped, "1%0" would match "100" and "折_" would match "折扣".
    expect(found("选品 1%0")).toEqual([]);
    expect(found("选品 折_")).toEqual([]);
    expect(found("选品 折扣")).toEqual([pct]);
    expect(store.snippets("选品搜索", [zh!]).get(zh!)).toContain(">>>选品搜索<<<");
    expect(store.snippets("选品", [pct!]).get(pct!)).toContain(">>>选品<<<");
  });
});
