/**
 * The SQLite session store on real files in temporary profile homes: persistence, lineage across
 * compaction, a second store (and a second process) seeing what the first wrote, concurrent writers,
 * and the typed errors of a locked, damaged, newer, linked or read-only file.
 */
import { spawn } from "node:child_process";
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

import { SessionStoreError } from "../src/agent/stores/sessions/errors.js";
import { SCHEMA_VERSION } from "../src/agent/stores/sessions/schema.js";
import { sessionStorePath } from "../src/agent/stores/sessions/location.js";
import { sessionRecorder } from "../src/agent/stores/sessions/recorder.js";
import { openSessionStore, SqliteSessionStore } from "../src/agent/stores/sessions/sqlite-store.js";

const require = createRequire(import.meta.url);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const homes: string[] = [];
const stores: SqliteSessionStore[] = [];

function home(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "mibyan-sessions-"));
  homes.push(dir);
  return dir;
}

function open(options: ConstructorParameters<typeof SqliteSessionStore>[0]): SqliteSessionStore {
  const store = openSessionStore(options);
  stores.push(store);
  return store;
}

afterAll(() => {
  for (const store of stores) store.close();
  for (const dir of homes) rmSync(dir, { recursive: true, force: true });
});

function storeError(fn: () => unknown): SessionStoreError {
  try {
    fn();
  } catch (thrown) {
    expect(thrown).toBeInstanceOf(SessionStoreError);
    return thrown as SessionStoreError;
  }
  throw new Error("expected a SessionStoreError");
}

describe("session store: persistence", () => {
  it("creates a private file under <home>/sessions, in WAL mode, at the current schema version", () => {
    const h = home();
    const store = open({ home: h });
    expect(store.path).toBe(path.join(h, "sessions", "sessions.db"));
    expect(statSync(store.path).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(store.path)).mode & 0o777).toBe(0o700);
    store.appendMessages(store.createSession().id, [{ role: "user", content: "hello" }]);
    // WAL's side files copy the database's mode.
    expect(statSync(`${store.path}-wal`).mode & 0o777).toBe(0o600);
  });

  it("stores every message with its fields, counts and token totals, and reads them back in order", () => {
    const store = open({ home: home(), now: () => 1_700_000_000_000 });
    const session = store.createSession({ model: "m1", title: "t", source: "chat" });
    expect(session.id).toMatch(/^\d{8}_\d{6}_[0-9a-f]{6}$/);
    const ids = store.appendMessages(
      session.id,
      [
        { role: "user", content: "read a.ts" },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "read_file", arguments: '{"path":"a.ts"}' } }], finish_reason: "tool_calls" },
        { role: "tool", tool_call_id: "c1", tool_name: "read_file", content: "export const a = 1" },
        { role: "assistant", content: [{ type: "text", text: "done" }], reasoning: "thought", token_count: 3 },
      ],
      { usage: { input_tokens: 100, output_tokens: 20 } },
    );
    expect(ids).toHaveLength(4);
    expect(ids[0]! < ids[3]!).toBe(true);
    const record = store.getSession(session.id)!;
    expect(record).toMatchObject({ message_count: 4, tool_call_count: 1, input_tokens: 100, output_tokens: 20, model: "m1", title: "t", source: "chat" });
    const messages = store.getMessages(session.id);
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(messages[1]!.tool_calls![0]!.function.name).toBe("read_file");
    expect(messages[2]).toMatchObject({ tool_call_id: "c1", tool_name: "read_file" });
    expect(messages[3]).toMatchObject({ content: "done", content_parts: [{ type: "text", text: "done" }], reasoning: "thought", token_count: 3 });
    expect(store.getMessages(session.id, { limit: 2, fromEnd: true }).map((m) => m.id)).toEqual(ids.slice(2));
  });

  it("a bad message writes nothing of its turn (one transaction) and is a typed invalid error", () => {
    const store = open({ home: home() });
    const session = store.createSession();
    const error = storeError(() => store.appendMessages(session.id, [{ role: "user", content: "ok" }, { role: "wizard" as never, content: "x" }]));
    expect(error.kind).toBe("invalid");
    expect(error.message).toContain("role");
    expect(store.getMessages(session.id)).toEqual([]);
    expect(storeError(() => store.appendMessages("no-such", [{ role: "user", content: "x" }])).kind).toBe("not_found");
    expect(storeError(() => store.createSession({ id: "has space" })).kind).toBe("invalid");
    expect(storeError(() => store.createSession({ id: session.id })).kind).toBe("invalid");
  });

  it("a second store on the same home finds what the first stored, and so does a second process", async () => {
    const h = home();
    const first = open({ home: h });
    const session = first.createSession({ title: "deploy notes" });
    first.appendMessages(session.id, [{ role: "user", content: "the quokka deployment failed on friday" }]);
    const second = open({ home: h });
    expect(second.search("quokka").hits.map((hit) => hit.session_id)).toEqual([session.id]);
    const out = await runChild(`
      const store = openSessionStore({ home: ${JSON.stringify(h)} });
      process.stdout.write(JSON.stringify(store.search("quokka").hits.map((h) => h.session_id)));
      store.close();`);
    expect(JSON.parse(out)).toEqual([session.id]);
  });
});

let childDir: string | undefined;

/**
 * Runs `body` as an ES module in a child Node process, with `openSessionStore` imported from the
 * store's sources (transpiled once with the TypeScript API into a temporary directory: the tests
 * do not depend on a build). Resolves with its stdout.
 */
async function runChild(body: string): Promise<string> {
  if (childDir === undefined) {
    const dir = mkdtempSync(path.join(tmpdir(), "mibyan-sessions-child-"));
    homes.push(dir);
    const ts = (await import("typescript")).default;
    const files = ["errors", "fts-query", "location", "schema", "sqlite-open", "sqlite-rows", "sqlite-search", "sqlite-store", "types"].map((n) => `src/agent/stores/sessions/${n}.ts`);
    for (const file of [...files, "src/config/home.ts"]) {
      const { outputText } = ts.transpileModule(readFileSync(path.join(ROOT, file), "utf8"), { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
      const target = path.join(dir, file.replace(/\.ts$/, ".js"));
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, outputText);
    }
    symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"));
    childDir = dir;
  }
  const main = path.join(childDir, `main-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(main, `import { openSessionStore } from ${JSON.stringify(path.join(childDir, "src/agent/stores/sessions/sqlite-store.js"))};\n${body}`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [main], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(stdout) : reject(new Error(`child exited ${code}: ${stderr}`))));
  });
}



describe("session store: lineage across compaction", () => {
  it("forkForCompaction ends the parent and starts a continuation that points to it, in one transaction", () => {
    const store = open({ home: home() });
    const parent = store.createSession({ model: "m", title: "long task", source: "chat" });
    store.appendMessages(parent.id, [{ role: "user", content: "step one" }]);
    const child = store.forkForCompaction(parent.id, { messages: [{ role: "user", content: "[summary of step one]", synthetic: "compaction_summary" }] });
    expect(child).toMatchObject({ parent_session_id: parent.id, model: "m", title: "long task", source: "chat", message_count: 1 });
    expect(store.getSession(parent.id)).toMatchObject({ end_reason: "compaction" });
    expect(store.getSession(parent.id)!.ended_at).not.toBeNull();
    const grandchild = store.forkForCompaction(child.id, { model: "m2" });
    expect(store.lineage(grandchild.id)).toEqual([grandchild.id, child.id, parent.id]);
    expect(grandchild.model).toBe("m2");
    // The summary is stored (for resuming) but not indexed: it must not echo its parent's matches.
    expect(store.search("summary").hits).toEqual([]);
    expect(store.listSessions({ tipsOnly: true }).map((s) => s.id)).toEqual([grandchild.id]);
    expect(storeError(() => store.forkForCompaction("missing")).kind).toBe("not_found");
  });

  it("lineage stops at a cycle written into the file by hand", () => {
    const store = open({ home: home() });
    const a = store.createSession({ id: "a" });
    const b = store.createSession({ id: "b", parent_session_id: a.id });
    // Close the loop with a raw connection (the API never makes one).
    const raw = new (require("better-sqlite3") as typeof import("better-sqlite3"))(store.path);
    raw.prepare("UPDATE sessions SET parent_session_id = 'b' WHERE id = 'a'").run();
    raw.close();
    expect(store.lineage(b.id)).toEqual(["b", "a"]);
  });
});


describe("session store: concurrency and typed errors", () => {
  it("two stores on one file interleaving writes lose nothing, and ids stay unique", () => {
    const h = home();
    const a = open({ home: h });
    const b = open({ home: h });
    const sa = a.createSession();
    const sb = b.createSession();
    const ids = new Set<number>();
    for (let i = 0; i < 200; i++) {
      for (const id of a.appendMessages(sa.id, [{ role: "user", content: `a ${i}` }, { role: "assistant", content: `alpha ${i}` }])) ids.add(id);
      for (const id of b.appendMessages(sb.id, [{ role: "user", content: `b ${i}` }])) ids.add(id);
    }
    expect(ids.size).toBe(600);
    expect(b.getSession(sa.id)!.message_count).toBe(400);
    expect(a.getSession(sb.id)!.message_count).toBe(200);
  });

  it("two processes appending at the same time lose nothing", async () => {
    const h = home();
    const store = open({ home: h });
    const sessions = [store.createSession({ id: "p1" }), store.createSession({ id: "p2" })];
    const script = (id: string) => `
      const store = openSessionStore({ home: ${JSON.stringify(h)} });
      for (let i = 0; i < 300; i++) store.appendMessages(${JSON.stringify(id)}, [{ role: "user", content: "concurrent " + i }, { role: "assistant", content: "reply " + i }]);
      store.close();`;
    await Promise.all(sessions.map((s) => runChild(script(s.id))));
    for (const s of sessions) expect(store.getSession(s.id)!.message_count).toBe(600);
    expect(store.search("concurrent", { limit: 1000 }).hits).toHaveLength(600);
  });

  it("four processes opening a store that does not exist yet all migrate it once and write to it", async () => {
    const h = home();
    // Every child waits for the same moment before opening, so the openings (and migrations) overlap.
    const at = Date.now() + 4000;
    const script = (n: number) => `
      await new Promise((resolve) => setTimeout(resolve, ${at} - Date.now()));
      const store = openSessionStore({ home: ${JSON.stringify(h)} });
      const s = store.createSession({ id: "race-${n}" });
      store.appendMessages(s.id, [{ role: "user", content: "racing opener ${n}" }]);
      store.close();`;
    await Promise.all([0, 1, 2, 3].map((n) => runChild(script(n))));
    const store = open({ home: h });
    expect(store.listSessions().map((s) => s.id).sort()).toEqual(["race-0", "race-1", "race-2", "race-3"]);
    expect(store.search("racing").hits).toHaveLength(4);
    const Database = require("better-sqlite3") as typeof import("better-sqlite3");
    const raw = new Database(store.path, { readonly: true });
    expect(raw.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
    expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
    raw.close();
  });

  it("a write lock held past the busy timeout is a typed locked error, and the store works once it is released", () => {
    const h = home();
    const store = open({ home: h, busyTimeoutMs: 50 });
    const session = store.createSession();
    const Database = require("better-sqlite3") as typeof import("better-sqlite3");
    const holder = new Database(store.path);
    holder.exec("BEGIN IMMEDIATE");
    const started = Date.now();
    const error = storeError(() => store.appendMessages(session.id, [{ role: "user", content: "x" }]));
    expect(error.kind).toBe("locked");
    expect(error.sqliteCode).toMatch(/^SQLITE_BUSY/);
    expect(Date.now() - started).toBeLessThan(2000);
    // Readers are not blocked by a writer in WAL mode.
    expect(store.getSession(session.id)).toBeDefined();
    holder.exec("ROLLBACK");
    holder.close();
    expect(store.appendMessages(session.id, [{ role: "user", content: "x" }])).toHaveLength(1);
  });

  it("a damaged file is a typed corrupt error, never a crash", () => {
    const h = home();
    const file = sessionStorePath(h);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, Buffer.concat([Buffer.from("this is not a database "), Buffer.alloc(8192, 0x5a)]));
    const error = storeError(() => open({ home: h }));
    expect(error.kind).toBe("corrupt");
    expect(error.message).toContain(file);
  });

  it("a database whose pages were overwritten is a typed corrupt error when read", () => {
    const h = home();
    const store = open({ home: h });
    const session = store.createSession();
    for (let i = 0; i < 50; i++) store.appendMessages(session.id, [{ role: "user", content: `message ${i} `.repeat(200) }]);
    store.close();
    const Database = require("better-sqlite3") as typeof import("better-sqlite3");
    const raw = new Database(store.path);
    raw.pragma("wal_checkpoint(TRUNCATE)");
    raw.close();
    // Keep the header (page 1), scribble over every later page.
    const fs = require("node:fs") as typeof import("node:fs");
    const size = fs.statSync(store.path).size;
    const fd = fs.openSync(store.path, "r+");
    fs.writeSync(fd, Buffer.alloc(size - 4096, 0xa5), 0, size - 4096, 4096);
    fs.closeSync(fd);
    const error = (() => {
      try {
        const again = open({ home: h });
        again.getMessages(session.id);
        again.search("message");
      } catch (thrown) {
        return thrown;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(SessionStoreError);
    expect((error as SessionStoreError).kind).toBe("corrupt");
  });

  it("a file from a newer schema is refused with kind schema; a symlinked file with kind invalid", () => {
    const h = home();
    const store = open({ home: h });
    store.close();
    const Database = require("better-sqlite3") as typeof import("better-sqlite3");
    const raw = new Database(store.path);
    raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    raw.close();
    expect(storeError(() => open({ home: h })).kind).toBe("schema");

    // Another profile's store linked into this home is not opened (a session never reads another profile's store).
    const other = open({ home: home() });
    other.appendMessages(other.createSession().id, [{ role: "user", content: "other profile secret" }]);
    const victim = home();
    mkdirSync(path.join(victim, "sessions"));
    symlinkSync(other.path, sessionStorePath(victim));
    const error = storeError(() => open({ home: victim }));
    expect(error.kind).toBe("invalid");
    expect(lstatSync(sessionStorePath(victim)).isSymbolicLink()).toBe(true);
  });

  it("a read-only store still searches (the original's read-only FTS gave 0 results)", () => {
    const h = home();
    const writer = open({ home: h });
    writer.appendMessages(writer.createSession().id, [{ role: "user", content: "the marmoset migration plan" }]);
    writer.close();
    chmodSync(sessionStorePath(h), 0o400);
    const reader = open({ home: h, readonly: true });
    expect(reader.search("marmoset").hits).toHaveLength(1);
    expect(storeError(() => reader.createSession()).kind).toBe("readonly");
    chmodSync(sessionStorePath(h), 0o600);
  });

  it("a read-only open of a missing store creates nothing; a closed store is a typed error", () => {
    const h = home();
    expect(storeError(() => open({ home: h, readonly: true })).kind).toBe("not_found");
    const store = open({ home: h });
    store.close();
    expect(storeError(() => store.listSessions()).kind).toBe("closed");
  });
});

describe("session store: as the loop's session recorder", () => {
  it("records messages with usage, gives a resumed session its history, refuses to resume an unknown id", async () => {
    const store = open({ home: home() });
    const recorder = await sessionRecorder(store, { source: "chat", model: "m" });
    await recorder.append([{ role: "user", content: [{ type: "text", text: "look" }, { type: "image_url", image_url: { url: "data:," } }] }]);
    const loopMessage = { role: "assistant" as const, content: "seen", finish_reason: "stop", name: "bot", _internal: 1 };
    await recorder.append([loopMessage], { inputTokens: 50, outputTokens: 5, cachedTokens: 10, reasoningTokens: 2 });
    expect(store.getSession(recorder.id)).toMatchObject({ message_count: 2, input_tokens: 50, output_tokens: 5, cache_read_tokens: 10, reasoning_tokens: 2, source: "chat" });
    const resumed = await sessionRecorder(store, { id: recorder.id, resume: true });
    const history = await resumed.history();
    expect(history.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(history[0]!.content).toEqual([{ type: "text", text: "look" }, { type: "image_url", image_url: { url: "data:," } }]);
    expect(history[1]).toMatchObject({ content: "seen", finish_reason: "stop" });
    expect(Object.keys(history[1]!)).not.toContain("_internal");
    await expect(sessionRecorder(store, { id: "typo", resume: true })).rejects.toMatchObject({ kind: "not_found" });
    expect(store.getSession("typo")).toBeUndefined();
    const created = await sessionRecorder(store, { id: "chosen-id" });
    expect(created.id).toBe("chosen-id");
    expect(await created.history()).toEqual([]);
  });
});
