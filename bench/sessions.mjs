/**
 * Session store benchmarks for bench/run.mjs, each next to a baseline measured in the same run:
 *
 *   1. sessions.persist  100,000 messages appended through `SqliteSessionStore.appendMessages` as the
 *                        agent loop appends them: one call per turn (the user message; then the
 *                        assistant message with its tool call and the tool result, with the turn's
 *                        token usage), each call one transaction. Messages per second. Baseline: a
 *                        bare better-sqlite3 loop inserting the same rows with the same transaction
 *                        grouping into a table with one FTS5 index fed by a trigger (the least a
 *                        searchable store does); the plain insert without FTS5 is reported beside it.
 *   2. sessions.search   `session_search` discovery (the handler the loop calls; default limit 3, so
 *                        three results with their windows, bookends and snippets) over those 100,000
 *                        messages. Median and p95 over 100 queries, each the median of 3 runs.
 *                        Baseline: a bare FTS5 MATCH of the same term(s) returning 300 rowids
 *                        (no ranking, no join, no hydration) on the same file.
 *
 * The queries are generated here, from the corpus, by code that knows nothing of the store's
 * indexing or sanitiser, with a seed of their own: 60 single words and 20 word pairs drawn from
 * random stored messages (so frequent words are drawn often, as users do), and 20 words from an
 * alphabet the corpus never uses (absent). They were not used to tune the store.
 *
 * Imports the build (`npm run bench` builds first). `node bench/sessions.mjs [--quick]` runs it alone.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { median, round, prng } from "./common.mjs";

const PERSIST_TARGET = 5000; // messages per second
const SEARCH_TARGET_MS = 20;

const SYLLABLES = ["ka", "lo", "mi", "ren", "to", "sa", "vi", "del", "or", "pa", "nu", "tek", "bri", "ge", "sho", "an", "qui", "fe", "zu", "mar"];

/** 8,000 made-up words, drawn Zipf-like (rank r with weight 1/r), like words of real text. */
function corpusWords(random) {
  const words = new Set();
  while (words.size < 8000) {
    const n = 1 + Math.floor(random() * 3);
    let word = "";
    for (let i = 0; i < n; i++) word += SYLLABLES[Math.floor(random() * SYLLABLES.length)];
    words.add(word);
  }
  const list = [...words];
  const harmonic = list.reduce((sum, _w, i) => sum + 1 / (i + 1), 0);
  return () => {
    let x = random() * harmonic;
    for (let i = 0; i < list.length; i++) {
      x -= 1 / (i + 1);
      if (x <= 0) return list[i];
    }
    return list[list.length - 1];
  };
}

/** The corpus: sessions of turns (user; assistant with a tool call; tool result), 3 messages a turn. */
export function buildCorpus(messages) {
  const random = prng(20261204);
  const word = corpusWords(random);
  const text = (n) => Array.from({ length: n }, word).join(" ");
  const sessions = [];
  const turnsPerSession = 33;
  const sessionCount = Math.ceil(messages / (turnsPerSession * 3));
  for (let s = 0; s < sessionCount; s++) {
    const source = s % 10 === 0 ? "cron" : s % 50 === 1 ? "subagent" : "cli";
    const turns = [];
    for (let t = 0; t < turnsPerSession; t++) {
      const id = `call_${s}_${t}`;
      turns.push([
        [{ role: "user", content: text(15 + Math.floor(random() * 15)) }],
        [
          { role: "assistant", content: text(20 + Math.floor(random() * 40)), tool_calls: [{ id, type: "function", function: { name: "terminal", arguments: JSON.stringify({ command: `grep ${word()} ${word()}.txt` }) } }] },
          { role: "tool", tool_call_id: id, tool_name: "terminal", content: text(30 + Math.floor(random() * 60)) },
        ],
      ]);
    }
    sessions.push({ source, turns });
  }
  return sessions;
}

/** Queries made from the stored text, with their own seed; absent words use letters the corpus never has. */
export function buildQueries(sessions) {
  const random = prng(777);
  const messages = sessions.flatMap((s) => s.turns.flatMap((turn) => turn.flat())).map((m) => m.content);
  const wordsOf = () => messages[Math.floor(random() * messages.length)].split(" ");
  const pick = (words) => words[Math.floor(random() * words.length)];
  const queries = [];
  for (let i = 0; i < 60; i++) queries.push(pick(wordsOf()));
  for (let i = 0; i < 20; i++) {
    const words = wordsOf();
    queries.push(`${pick(words)} ${pick(words)}`);
  }
  const absent = "wxyjhc";
  for (let i = 0; i < 20; i++) queries.push(Array.from({ length: 6 }, () => absent[Math.floor(random() * absent.length)]).join(""));
  return queries;
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/**
 * CPU time (user + system) of this process since `start`, in ms. On a shared machine the wall time
 * of a single-threaded loop depends on how much of a CPU it got; the CPU time much less so.
 */
function cpuMsSince(start) {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

function bareSchema(db, withFts) {
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec(`CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT, tool_calls TEXT, tool_call_id TEXT, tool_name TEXT, timestamp INTEGER NOT NULL)`);
  if (withFts) {
    db.exec(`CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', content_rowid='id');
      CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content); END;`);
  }
}

/** The bare loop: the same rows, one transaction per turn half, as the store gets them. */
function bareInsert(Database, file, sessions, withFts) {
  const db = new Database(file);
  bareSchema(db, withFts);
  const insert = db.prepare("INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, tool_name, timestamp) VALUES (?, ?, ?, ?, ?, ?, ?)");
  const append = db.transaction((sessionId, batch) => {
    for (const m of batch) insert.run(sessionId, m.role, m.content, m.tool_calls ? JSON.stringify(m.tool_calls) : null, m.tool_call_id ?? null, m.tool_name ?? null, Date.now());
  });
  const started = performance.now();
  const cpu = process.cpuUsage();
  let count = 0;
  for (const [s, session] of sessions.entries()) {
    for (const turn of session.turns) {
      for (const batch of turn) {
        append.immediate(`s${s}`, batch);
        count += batch.length;
      }
    }
  }
  const ms = performance.now() - started;
  const cpuMs = cpuMsSince(cpu);
  db.close();
  return { perSec: (count / ms) * 1000, cpuPerSec: (count / cpuMs) * 1000, count };
}

export async function benchSessions({ quick, note }) {
  const total = quick ? 20_000 : 100_000;
  note(`sessions: persisting ${total.toLocaleString("en-US")} messages and searching them ...`);
  const { openSessionStore } = await import("../dist/agent/stores/sessions/sqlite-store.js");
  const { createSessionSearchHandler } = await import("../dist/agent/tools/session-search.js");
  const Database = createRequire(import.meta.url)("better-sqlite3");
  const dir = mkdtempSync(path.join(tmpdir(), "mibyan-bench-sessions-"));
  try {
    const sessions = buildCorpus(total);
    const queries = buildQueries(sessions);

    // 1. persistence: the bare loops first and last around the store, so machine drift hits both.
    const bareFts = [bareInsert(Database, path.join(dir, "bare-fts-1.db"), sessions, true)];
    const plain = bareInsert(Database, path.join(dir, "bare-plain.db"), sessions, false);
    const store = openSessionStore({ home: path.join(dir, "home") });
    let count = 0;
    const started = performance.now();
    const cpu = process.cpuUsage();
    for (const session of sessions) {
      const { id } = store.createSession({ source: session.source, model: "bench-model" });
      for (const [user, reply] of session.turns) {
        store.appendMessages(id, user);
        store.appendMessages(id, reply, { usage: { input_tokens: 1200, output_tokens: 80 } });
        count += user.length + reply.length;
      }
    }
    const persistMs = performance.now() - started;
    const persistCpuMs = cpuMsSince(cpu);
    bareFts.push(bareInsert(Database, path.join(dir, "bare-fts-2.db"), sessions, true));
    const persistPerSec = (count / persistMs) * 1000;
    const basePerSec = (bareFts[0].perSec + bareFts[1].perSec) / 2;

    // 2. search: discovery through the loop's handler, and the bare MATCH on the same file.
    const handler = createSessionSearchHandler(store);
    const bare = new Database(store.path, { readonly: true });
    const bareMatch = bare.prepare("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? LIMIT 300");
    const quoted = (q) => q.split(" ").map((w) => `"${w}"`).join(" ");
    let found = 0;
    const searchMs = [];
    const searchCpuMs = [];
    const bareMs = [];
    for (const query of queries) {
      const runs = [];
      const cpuRuns = [];
      const bareRuns = [];
      for (let r = 0; r < 3; r++) {
        let t = performance.now();
        const cpu = process.cpuUsage();
        const result = JSON.parse(await handler({ query }, {}));
        runs.push(performance.now() - t);
        cpuRuns.push(cpuMsSince(cpu));
        if (!result.success) throw new Error(`sessions bench: session_search failed for ${query}: ${result.error}`);
        if (r === 0 && result.count > 0) found++;
        t = performance.now();
        bareMatch.all(quoted(query));
        bareRuns.push(performance.now() - t);
      }
      searchMs.push(median(runs));
      searchCpuMs.push(median(cpuRuns));
      bareMs.push(median(bareRuns));
    }
    bare.close();
    store.close();
    if (found < 60) throw new Error(`sessions bench: only ${found} of ${queries.length} queries found a session (expected the 80 drawn from the corpus)`);

    const searchMedian = median(searchMs);
    const searchP95 = percentile(searchMs, 95);
    const bareMedian = median(bareMs);
    return [
      {
        name: "sessions.persist",
        label: `session store: ${count.toLocaleString("en-US")} messages appended a turn at a time`,
        value: round(persistPerSec, 0),
        unit: "msg/s",
        baseline: round(basePerSec, 0),
        baselineLabel: "bare better-sqlite3 inserts, same transactions, one FTS5 index",
        ratio: round(basePerSec / persistPerSec, 2),
        plainInsertPerSec: round(plain.perSec, 0),
        // Messages per CPU-second (this process's user + system time): what the loop sustains when it has a CPU to itself.
        cpuPerSec: round((count / persistCpuMs) * 1000, 0),
        baselineCpuPerSec: round((bareFts[0].cpuPerSec + bareFts[1].cpuPerSec) / 2, 0),
        samples: count,
        target: PERSIST_TARGET,
        targetOn: "value",
        targetText: `≥ ${PERSIST_TARGET.toLocaleString("en-US")} msg/s`,
        met: persistPerSec >= PERSIST_TARGET,
      },
      {
        name: "sessions.search",
        label: `session_search discovery over ${count.toLocaleString("en-US")} messages (median; p95 ${round(searchP95, 1)} ms)`,
        value: round(searchMedian, 2),
        unit: "ms",
        baseline: round(bareMedian, 3),
        baselineLabel: "bare FTS5 MATCH, 300 rowids",
        ratio: round(searchMedian / bareMedian, 2),
        p95: round(searchP95, 2),
        // CPU time per query (this process's user + system time), median and p95.
        cpuMedian: round(median(searchCpuMs), 2),
        cpuP95: round(percentile(searchCpuMs, 95), 2),
        baselineP95: round(percentile(bareMs, 95), 3),
        queries: queries.length,
        queriesWithResults: found,
        samples: queries.length * 3,
        target: SEARCH_TARGET_MS,
        targetOn: "value",
        targetText: `≤ ${SEARCH_TARGET_MS} ms per query (median and p95)`,
        met: searchMedian <= SEARCH_TARGET_MS && searchP95 <= SEARCH_TARGET_MS,
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const rows = await benchSessions({ quick: process.argv.includes("--quick"), note: (m) => process.stderr.write(`${m}\n`) });
  for (const row of rows) process.stdout.write(`${JSON.stringify(row)}\n`);
}
