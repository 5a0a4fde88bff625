/**
 * `mibyan sessions [list|show ID|search QUERY] [--json]`: the session store of the profile home
 * (docs/sessions.md), read from the command line. The store and its native SQLite driver are
 * imported inside the actions, so other commands never load them.
 *
 * Exit status: 0, or 1 when the store fails (locked, damaged, newer schema) or `show` names no
 * stored session; usage errors are 2 as everywhere. A profile with no store yet lists nothing.
 */

import type { Command } from "commander";
import { InvalidArgumentError } from "commander";

import type { SessionStoreError } from "../../agent/stores/sessions/errors.js";
import type { SqliteSessionStore } from "../../agent/stores/sessions/sqlite-store.js";
import type { SessionRecord, StoredMessage } from "../../agent/stores/sessions/types.js";
import { cleanTerminalOutput } from "../../terminal/ansi.js";

interface Options {
  json?: boolean;
  limit?: number;
}

function limitOption(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new InvalidArgumentError(`--limit ${value}: expected a whole number from 1 to 1000`);
  return n;
}

/** Stored text is whatever users, models and tools wrote: no escape sequence or bidi control reaches the terminal. */
function forTerminal(text: string): string {
  return cleanTerminalOutput(text).replace(/[\r\u0080-\u009f\u202a-\u202e\u2066-\u2069]/g, "");
}

function oneLine(text: string, width: number): string {
  const flat = forTerminal(text).replace(/\s+/g, " ").trim();
  return flat.length > width ? `${flat.slice(0, width - 1)}…` : flat;
}

function time(ms: number | null): string {
  return ms === null ? "-" : new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
}

function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

/** Opens the profile's store if it exists (never creates one); undefined when there is none yet. */
async function openExisting(): Promise<SqliteSessionStore | undefined> {
  const { openSessionStore } = await import("../../agent/stores/sessions/sqlite-store.js");
  try {
    return openSessionStore({ create: false });
  } catch (thrown) {
    if ((thrown as SessionStoreError).kind === "not_found") return undefined;
    throw thrown;
  }
}

/** Runs `fn` on the store; a store failure is one line on stderr and exit 1. */
async function withStore(fn: (store: SqliteSessionStore | undefined) => Promise<number> | number): Promise<number> {
  let store: SqliteSessionStore | undefined;
  try {
    store = await openExisting();
    return await fn(store);
  } catch (thrown) {
    if ((thrown as Error)?.name === "SessionStoreError") {
      process.stderr.write(`mibyan sessions: ${(thrown as Error).message}\n`);
      return 1;
    }
    throw thrown;
  } finally {
    store?.close();
  }
}

async function listCommand(options: Options): Promise<number> {
  return withStore((store) => {
    const rows = store?.listSessions({ limit: options.limit ?? 20 }) ?? [];
    if (options.json) {
      print(JSON.stringify({ sessions: rows }));
      return 0;
    }
    if (rows.length === 0) {
      print("No sessions stored yet.");
      return 0;
    }
    const cells = rows.map((row) => [row.id, time(row.updated_at), oneLine(row.source, 12), String(row.message_count), oneLine([row.title, row.preview].filter(Boolean).join(" — "), 70)]);
    const header = ["ID", "LAST ACTIVE", "SOURCE", "MSGS", "TITLE / FIRST MESSAGE"];
    const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
    for (const line of [header, ...cells]) print(line.map((cell, i) => (i === line.length - 1 ? cell : i === 3 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join("  ").trimEnd());
    return 0;
  });
}

function describeSession(session: SessionRecord): string[] {
  const lines = [`session ${session.id} (${oneLine(session.source, 40)}${session.model ? `, model ${oneLine(session.model, 80)}` : ""})`];
  if (session.title) lines.push(`title: ${oneLine(session.title, 200)}`);
  lines.push(`started: ${time(session.started_at)}   last active: ${time(session.updated_at)}`);
  if (session.ended_at !== null) lines.push(`ended: ${time(session.ended_at)} (${oneLine(session.end_reason ?? "", 40)})`);
  if (session.parent_session_id) lines.push(`continues: ${session.parent_session_id}`);
  lines.push(`messages: ${session.message_count}   tool calls: ${session.tool_call_count}   tokens: ${session.input_tokens} in, ${session.output_tokens} out`);
  return lines;
}

function describeMessage(message: StoredMessage): string[] {
  const head = [`#${message.id}`, message.role];
  if (message.tool_name) head.push(oneLine(message.tool_name, 80));
  if (message.synthetic) head.push(`[${oneLine(message.synthetic, 40)}]`);
  head.push(time(message.timestamp));
  const lines = ["", head.join(" ")];
  if (message.content) lines.push(forTerminal(message.content));
  for (const call of message.tool_calls ?? []) lines.push(`→ ${oneLine(String(call.function?.name), 80)}(${oneLine(String(call.function?.arguments), 500)})`);
  return lines;
}

async function showCommand(id: string, options: Options): Promise<number> {
  return withStore((store) => {
    const session = store?.getSession(id);
    if (store === undefined || session === undefined) {
      process.stderr.write(`mibyan sessions: no session ${JSON.stringify(id)} (mibyan sessions list shows the stored ones)\n`);
      return 1;
    }
    const messages = store.getMessages(session.id);
    if (options.json) print(JSON.stringify({ session, messages }));
    else print([...describeSession(session), ...messages.flatMap(describeMessage)].join("\n"));
    return 0;
  });
}

async function searchCommand(query: string, options: Options): Promise<number> {
  return withStore(async (store) => {
    if (store === undefined) {
      print(options.json ? JSON.stringify({ success: true, mode: "discover", query, results: [], count: 0, message: "No sessions stored yet." }) : "No sessions stored yet.");
      return 0;
    }
    // The same discovery the model gets from session_search, with no current session to leave out.
    const { createSessionSearchHandler } = await import("../../agent/tools/session-search.js");
    const text = await createSessionSearchHandler(store)({ query, limit: options.limit ?? 5 }, {});
    const result = JSON.parse(text) as { success: boolean; error?: string; message?: string; notes?: string[]; results?: Record<string, unknown>[] };
    if (options.json) {
      print(text);
      return result.success ? 0 : 1;
    }
    if (!result.success) {
      process.stderr.write(`mibyan sessions: ${result.error}\n`);
      return 1;
    }
    const lines: string[] = [];
    for (const [i, entry] of (result.results ?? []).entries()) {
      const title = entry.title ? ` — ${oneLine(String(entry.title), 80)}` : "";
      lines.push(`${i + 1}. ${entry.session_id}${title} (${oneLine(String(entry.source), 20)}, ${String(entry.when ?? "-").replace(/\.\d+Z$/, "Z")})`);
      lines.push(`   ${entry.matched_role} #${entry.match_message_id}: ${oneLine(String(entry.snippet ?? ""), 200)}`);
    }
    if (lines.length === 0) lines.push(result.message ?? "No matching sessions found.");
    for (const note of result.notes ?? []) lines.push(`note: ${note}`);
    print(lines.join("\n"));
    return 0;
  });
}

/** Adds `mibyan sessions` (list, show, search) to the program. */
export function registerSessionsCommand(program: Command): void {
  const sessions = program.command("sessions").description("List, show or search the conversations stored in the profile's session store (docs/sessions.md).");
  sessions
    .command("list", { isDefault: true })
    .description("List sessions, most recently active first.")
    .option("--limit <n>", "how many (default 20)", limitOption)
    .option("--json", "print JSON: {sessions:[{id,source,model,title,parent_session_id,started_at,updated_at,ended_at,end_reason,message_count,tool_call_count,input_tokens,output_tokens,cache_read_tokens,reasoning_tokens,preview}]} (times in ms since the epoch)")
    .action(async (options: Options) => {
      process.exitCode = await listCommand(options);
    });
  sessions
    .command("show")
    .description("Show one session: its metadata and every message.")
    .argument("<id>", "the session id, as mibyan sessions list shows it")
    .option("--json", "print JSON: {session:{...}, messages:[{id,session_id,role,content,tool_calls?,tool_call_id?,tool_name?,timestamp,...}]}")
    .action(async (id: string, options: Options) => {
      process.exitCode = await showCommand(id, options);
    });
  sessions
    .command("search")
    .description("Full-text search of every stored message (the session_search tool's discovery: one result per conversation).")
    .argument("<query>", "words to find (AND by default; OR, NOT, \"phrases\" and prefix* work)")
    .option("--limit <n>", "how many sessions (default 5, at most 10)", limitOption)
    .option("--json", "print the session_search result as JSON: {success,mode,query,results:[{session_id,title,when,source,model,matched_role,match_message_id,snippet,messages,bookend_start,bookend_end,...}],count}")
    .action(async (query: string, options: Options) => {
      process.exitCode = await searchCommand(query, options);
    });
}
