/**
 * `session_search` through the handler the agent loop calls (createSessionSearchHandler), over real
 * SQLite stores in temporary profile homes: the four modes, their limits and shapes, the current
 * conversation left out, hidden and demoted sources, CJK, tool-only matches, and profile isolation.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { openSessionStore, type SqliteSessionStore } from "../src/agent/stores/sessions/sqlite-store.js";
import type { MessageInput } from "../src/agent/stores/sessions/types.js";
import { createSessionSearchHandler, SESSION_SEARCH_SCHEMA, SESSION_SEARCH_TOOL } from "../src/agent/tools/session-search.js";
import { handleFunctionCall } from "../src/dispatch/handle-function-call.js";
import { ToolRegistry } from "../src/registry/tool-registry.js";
import { createMemoryLogger } from "../src/index.js";

const dirs: string[] = [];
const stores: SqliteSessionStore[] = [];

function freshStore(): SqliteSessionStore {
  const dir = mkdtempSync(path.join(tmpdir(), "mibyan-session-search-"));
  dirs.push(dir);
  const store = openSessionStore({ home: dir });
  stores.push(store);
  return store;
}

afterAll(() => {
  for (const store of stores) store.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

type Result = Record<string, any>;

async function call(store: SqliteSessionStore | undefined, args: Record<string, unknown>, sessionId?: string): Promise<Result> {
  const text = await createSessionSearchHandler(store)(args, { sessionId });
  expect(typeof text).toBe("string");
  return JSON.parse(text) as Result;
}

/** A conversation of `turns` user/assistant pairs, the user line carrying `topic`. */
function conversation(topic: string, turns: number): MessageInput[] {
  const out: MessageInput[] = [];
  for (let i = 0; i < turns; i++) {
    out.push({ role: "user", content: `${topic} question ${i}` });
    out.push({ role: "assistant", content: `answer ${i}` });
  }
  return out;
}

describe("session_search: discover", () => {
  let store: SqliteSessionStore;
  const sessions: string[] = [];
  beforeAll(() => {
    store = freshStore();
    for (let i = 0; i < 12; i++) {
      const s = store.createSession({ title: `work ${i}`, model: "m" });
      store.appendMessages(s.id, conversation(`kestrel ${i}`, 10));
      sessions.push(s.id);
    }
  });

  it("returns 3 sessions by default, clamps limit to 1..10, and each result has the anchored window, bookends and a snippet", async () => {
    const result = await call(store, { query: "kestrel" });
    expect(result).toMatchObject({ success: true, mode: "discover", query: "kestrel", count: 3 });
    expect((await call(store, { query: "kestrel", limit: 50 })).count).toBe(10);
    expect((await call(store, { query: "kestrel", limit: 0 })).count).toBe(1);
    expect((await call(store, { query: "kestrel", limit: "7" })).count).toBe(7);
    const entry = result.results[0];
    expect(entry.snippet).toMatch(/>>>kestrel<<</);
    expect(entry.bookend_start.length).toBeLessThanOrEqual(3);
    expect(entry.bookend_end.length).toBeLessThanOrEqual(3);
    expect(entry.bookend_start).toHaveLength(3);
    const anchors = entry.messages.filter((m: Result) => m.anchor === true);
    expect(anchors).toHaveLength(1);
    expect(anchors[0].id).toBe(entry.match_message_id);
    const at = entry.messages.findIndex((m: Result) => m.anchor === true);
    expect(at).toBeLessThanOrEqual(5);
    expect(entry.messages.length - at - 1).toBeLessThanOrEqual(5);
    expect(entry.messages_before + entry.messages.length + entry.messages_after).toBe(20);
    expect(entry).toMatchObject({ title: expect.stringMatching(/^work /), model: "m", source: "cli", matched_role: "user" });
    expect(entry.when).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(result.sessions_searched).toBe(3);
  });

  it("leaves out the current session (and says so when every match is there)", async () => {
    const own = sessions[0]!;
    const result = await call(store, { query: "kestrel 0", limit: 10 }, own);
    expect(result.results.map((r: Result) => r.session_id)).not.toContain(own);
    const only = await call(store, { query: '"kestrel 0 question"' }, own);
    expect(only).toMatchObject({ success: true, count: 0, excluded_current_matches: 10 });
    expect(only.message).toContain("current conversation");
    const nothing = await call(store, { query: "zebrafish" }, own);
    expect(nothing).toMatchObject({ success: true, count: 0, message: expect.stringContaining("No matching sessions found") });
  });

  it("a title match comes first", async () => {
    const result = await call(store, { query: "work 7" });
    expect(result.results[0]).toMatchObject({ session_id: sessions[7], matched_role: "session_title" });
  });

  it("queries the acceptance list names answer without throwing", async () => {
    for (const query of ["chat-send", "P2.2", "TODO: fix", '"unbalanced', "AND", "NEAR(a b)", "*", "\u0000", "x".repeat(100_000)]) {
      const result = await call(store, { query });
      expect(result.success, query.slice(0, 20)).toBe(true);
    }
    expect((await call(store, { query: "AND" })).message).toContain("no searchable terms");
  });
});

describe("session_search: sources, lineage, roles", () => {
  it("hides subagent and tool sessions, ranks cron after interactive sessions even when cron matches outnumber them", async () => {
    const store = freshStore();
    // 400 cron rows that out-rank the user's one: more than the 300 rows a discovery scans.
    for (let i = 0; i < 80; i++) {
      const cron = store.createSession({ source: "cron" });
      store.appendMessages(cron.id, conversation("heron heron heron report", 5));
    }
    const sub = store.createSession({ source: "subagent" });
    store.appendMessages(sub.id, conversation("heron", 1));
    const tool = store.createSession({ source: "tool" });
    store.appendMessages(tool.id, conversation("heron", 1));
    const user = store.createSession({ source: "cli" });
    store.appendMessages(user.id, [{ role: "user", content: "a note about a heron I saw" }]);
    const result = await call(store, { query: "heron", limit: 3 });
    expect(result.results.map((r: Result) => r.source)).toEqual(["cli", "cron", "cron"]);
    expect(result.results[0].session_id).toBe(user.id);
    for (const r of result.results) expect([sub.id, tool.id]).not.toContain(r.session_id);
    const browse = await call(store, { limit: 10 });
    for (const r of browse.results) expect(["subagent", "tool"]).not.toContain(r.source);
  });

  it("one result per lineage; a compacted ancestor of the current session is searchable, the live session is not", async () => {
    const store = freshStore();
    const parent = store.createSession({ title: "migration" });
    store.appendMessages(parent.id, [{ role: "user", content: "the pelican schema has a bug in column order" }]);
    const child = store.forkForCompaction(parent.id, { messages: [{ role: "user", content: "summary: pelican work", synthetic: "compaction_summary" }] });
    store.appendMessages(child.id, [{ role: "assistant", content: "continuing the pelican fix" }]);
    const other = store.createSession();
    store.appendMessages(other.id, [{ role: "user", content: "pelican" }]);

    const fromElsewhere = await call(store, { query: "pelican", limit: 10 }, other.id);
    // parent and child are one lineage: one result, from whichever ranked first.
    expect(fromElsewhere.results).toHaveLength(1);
    expect([parent.id, child.id]).toContain(fromElsewhere.results[0].session_id);

    const fromChild = await call(store, { query: "pelican", limit: 10 }, child.id);
    const ids = fromChild.results.map((r: Result) => r.session_id);
    expect(ids).toContain(parent.id); // compacted away: no longer in the context
    expect(ids).not.toContain(child.id); // live
    const fromParent = fromChild.results.find((r: Result) => r.session_id === parent.id);
    expect(fromParent.from_current_lineage).toBeDefined();
    // The summary (synthetic) is no bookend and no match.
    expect(JSON.stringify(fromChild)).not.toContain("summary: pelican work");
  });

  it("a match only in tool output is found with role_filter tool, and by default with a note (#83170)", async () => {
    const store = freshStore();
    const s = store.createSession();
    store.appendMessages(s.id, [
      { role: "user", content: "run the build" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "terminal", arguments: '{"command":"make"}' } }] },
      { role: "tool", tool_call_id: "c1", tool_name: "terminal", content: "error: undefined symbol wombat_init" },
    ]);
    const explicit = await call(store, { query: "wombat_init", role_filter: "tool" });
    expect(explicit.results[0]).toMatchObject({ session_id: s.id, matched_role: "tool" });
    const userOnly = await call(store, { query: "wombat_init", role_filter: "user,assistant" });
    expect(userOnly.count).toBe(0);
    const byDefault = await call(store, { query: "wombat_init" });
    expect(byDefault.count).toBe(1);
    expect(byDefault.notes.join(" ")).toContain("tool output");
    // tool names and tool-call arguments are indexed too
    expect((await call(store, { query: "make", role_filter: "assistant" })).count).toBe(1);
    expect((await call(store, { query: "x", role_filter: "wizard" })).error).toContain("unknown role");
  });

  it("finds CJK text by a 4-character phrase (trigram) and by a 2-character word", async () => {
    const store = freshStore();
    const s = store.createSession();
    store.appendMessages(s.id, [{ role: "user", content: "今天我们讨论选品搜索的排序问题" }, { role: "assistant", content: "好的" }]);
    const long = await call(store, { query: "选品搜索" });
    expect(long.results[0].snippet).toContain(">>>选品搜索<<<");
    const short = await call(store, { query: "排序" });
    expect(short.results[0].session_id).toBe(s.id);
  });
});

describe("session_search: scroll, read, browse", () => {
  let store: SqliteSessionStore;
  let long: string;
  let ids: number[];
  beforeAll(() => {
    store = freshStore();
    const s = store.createSession({ title: "long one" });
    ids = store.appendMessages(s.id, conversation("osprey", 30)); // 60 messages
    long = s.id;
    for (let i = 0; i < 4; i++) {
      const other = store.createSession({ title: `other ${i}` });
      store.appendMessages(other.id, [{ role: "user", content: `first line of other ${i}\nwith a second line` }]);
    }
  });

  it("scroll clamps window 50 to 20 and counts what lies before and after", async () => {
    const result = await call(store, { session_id: long, around_message_id: ids[30], window: 50 });
    expect(result).toMatchObject({ success: true, mode: "scroll", window: 20, around_message_id: ids[30], messages_before: 10, messages_after: 9 });
    expect(result.messages).toHaveLength(41);
    expect(result.messages.find((m: Result) => m.anchor).id).toBe(ids[30]);
    expect((await call(store, { session_id: long, around_message_id: String(ids[0]), window: 0 })).messages).toHaveLength(2);
  });

  it("scroll errors: unknown session, a message of another session, a non-integer id, the current session", async () => {
    expect((await call(store, { session_id: "nope", around_message_id: 1 })).error).toBe("session_id not found: nope");
    const other = store.listSessions({ limit: 1 })[0]!.id;
    expect((await call(store, { session_id: other, around_message_id: ids[3] })).error).toBe(`around_message_id ${ids[3]} not in session_id ${other}`);
    expect((await call(store, { session_id: long, around_message_id: "abc" })).error).toBe("scroll requires integer around_message_id");
    expect((await call(store, { session_id: long, around_message_id: ids[3] }, long)).error).toContain("current conversation");
  });

  it("read returns the first 20 and the last 10 messages of a long session", async () => {
    const result = await call(store, { session_id: long });
    expect(result).toMatchObject({ success: true, mode: "read", message_count: 60, truncated: true });
    expect(result.messages.map((m: Result) => m.id)).toEqual([...ids.slice(0, 20), ...ids.slice(50)]);
    expect(result.message).toContain("around_message_id");
  });

  it("browse lists recent sessions with a one-line preview, leaving out the current one", async () => {
    const result = await call(store, { limit: 10 }, long);
    expect(result).toMatchObject({ success: true, mode: "browse", count: 4 });
    expect(result.results[0]).toMatchObject({ title: "other 3", message_count: 1, preview: "first line of other 3 with a second line" });
    expect(result.results[0].last_active).toMatch(/^\d{4}-/);
    expect((await call(store, {})).count).toBe(3);
  });
});

describe("session_search: one profile's store only", () => {
  it("a session never reads another profile's store: search, read by id, profile/id links and a profile argument", async () => {
    const mine = freshStore();
    const theirs = freshStore();
    const secret = theirs.createSession({ id: "their-session" });
    theirs.appendMessages(secret.id, [{ role: "user", content: "the platypus password is hunter2" }]);
    const own = mine.createSession();
    mine.appendMessages(own.id, [{ role: "user", content: "hello" }]);
    expect((await call(mine, { query: "platypus" })).count).toBe(0);
    expect((await call(mine, { session_id: "their-session" })).error).toBe("session_id not found: their-session");
    const link = await call(mine, { session_id: "other/their-session" });
    expect(link.error).toContain("reads only this profile's sessions");
    expect((await call(mine, { session_id: "@session:other/their-session" })).success).toBe(false);
    expect((await call(mine, { query: "platypus", profile: "other" })).error).toContain("reads only this profile's sessions");
    // Path-like ids are ids, nothing more.
    expect((await call(mine, { session_id: "../../etc/passwd" })).success).toBe(false);
  });
});

describe("session_search: the loop's wiring", () => {
  it("handleFunctionCall runs it through the agent-loop handler; the registry refuses it; no store is an error result", async () => {
    const store = freshStore();
    const s = store.createSession();
    store.appendMessages(s.id, [{ role: "user", content: "the ibis project" }]);
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    registry.register(SESSION_SEARCH_TOOL);
    expect(registry.getDefinitions(["session_search"])[0]!.function.name).toBe(SESSION_SEARCH_SCHEMA.name);
    const viaLoop = JSON.parse(await handleFunctionCall("session_search", { query: "ibis" }, { registry, agentLoop: { session_search: createSessionSearchHandler(store) } }));
    expect(viaLoop.count).toBe(1);
    const refused = JSON.parse(await registry.dispatch("session_search", { query: "ibis" }));
    expect(refused.error).toContain("agent-loop tool");
    expect(await call(undefined, { query: "ibis" })).toMatchObject({ success: false, error: expect.stringContaining("needs a session store") });
  });

  it("a closed store gives an error result, not a throw", async () => {
    const store = freshStore();
    store.close();
    const result = await call(store, { query: "anything" });
    expect(result).toMatchObject({ success: false, error: expect.stringContaining("closed") });
  });
});
