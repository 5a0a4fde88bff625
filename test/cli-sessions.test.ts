/**
 * End-to-end tests of `mibyan sessions [list|show|search]`, as real processes of the built CLI
 * (`npm run build` first), over stores written into temporary profile homes.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { sessionStorePath } from "../src/agent/stores/sessions/location.js";
import { openSessionStore } from "../src/agent/stores/sessions/sqlite-store.js";
import { BIN, cliEnv, spawnCollect, type CliRun } from "./support/cli-run.js";

const dirs: string[] = [];

function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function mibyan(home: string, ...args: string[]): Promise<CliRun> {
  return spawnCollect(process.execPath, [BIN, ...args], { env: cliEnv(home, tempDir("mibyan-sessions-user-")), cwd: home });
}

function json<T = Record<string, any>>(run: CliRun): T {
  try {
    return JSON.parse(run.stdout) as T;
  } catch {
    throw new Error(`stdout is not JSON (exit ${run.status}):\n${run.stdout}\n--- stderr ---\n${run.stderr}`);
  }
}

describe("mibyan sessions", () => {
  let home: string;
  let first: string;
  let second: string;
  beforeAll(() => {
    home = tempDir("mibyan-sessions-home-");
    const store = openSessionStore({ home });
    first = store.createSession({ title: "heron survey", model: "m1" }).id;
    store.appendMessages(first, [
      { role: "user", content: "count the herons at the lake \u001b]0;owned\u0007\u001b[2J" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "terminal", arguments: '{"command":"ls"}' } }] },
      { role: "tool", tool_call_id: "c1", tool_name: "terminal", content: "herons.csv" },
      { role: "assistant", content: "There are 12 herons." },
    ]);
    second = store.createSession({ source: "chat" }).id;
    store.appendMessages(second, [{ role: "user", content: "plan the 选品搜索 feature" }]);
    store.close();
  });

  it("list shows sessions newest first, as a table or as JSON", async () => {
    const text = await mibyan(home, "sessions");
    expect(text.status).toBe(0);
    const lines = text.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^ID\s+LAST ACTIVE\s+SOURCE\s+MSGS\s+TITLE/);
    expect(lines[1]).toContain(second);
    expect(lines[2]).toContain(first);
    expect(lines[2]).toContain("heron survey — count the herons at the lake");
    const listed = json(await mibyan(home, "sessions", "list", "--json"));
    expect(listed.sessions.map((s: { id: string }) => s.id)).toEqual([second, first]);
    expect(listed.sessions[1]).toMatchObject({ message_count: 4, tool_call_count: 1, model: "m1" });
    expect(json(await mibyan(home, "sessions", "list", "--limit", "1", "--json")).sessions).toHaveLength(1);
  });

  it("show prints the session and every message; stored escape sequences never reach the terminal", async () => {
    const run = await mibyan(home, "sessions", "show", first);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(`session ${first} (cli, model m1)`);
    expect(run.stdout).toContain("title: heron survey");
    expect(run.stdout).toContain('→ terminal({"command":"ls"})');
    expect(run.stdout).toContain("There are 12 herons.");
    expect(run.stdout).not.toContain("\u001b");
    expect(run.stdout).not.toContain("\u0007");
    const shown = json(await mibyan(home, "sessions", "show", first, "--json"));
    expect(shown.messages).toHaveLength(4);
    expect(shown.messages[2]).toMatchObject({ role: "tool", tool_name: "terminal", content: "herons.csv" });
  });

  it("show of an unknown id exits 1 with a message; a bad --limit is a usage error (2)", async () => {
    const run = await mibyan(home, "sessions", "show", "nope");
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('no session "nope"');
    expect((await mibyan(home, "sessions", "list", "--limit", "0")).status).toBe(2);
  });

  it("search finds messages with snippets (CJK too), as text or as session_search's JSON", async () => {
    const run = await mibyan(home, "sessions", "search", "herons");
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(`1. ${first} — heron survey`);
    expect(run.stdout).toContain(">>>herons<<<");
    expect(run.stdout).not.toContain("\u001b");
    const cjk = json(await mibyan(home, "sessions", "search", "选品搜索", "--json"));
    expect(cjk).toMatchObject({ success: true, mode: "discover", count: 1 });
    expect(cjk.results[0].session_id).toBe(second);
    const none = await mibyan(home, "sessions", "search", "AND");
    expect(none.status).toBe(0);
    expect(none.stdout).toContain("no searchable terms");
  });

  it("a profile with no store lists nothing and creates nothing", async () => {
    const empty = tempDir("mibyan-sessions-empty-");
    const run = await mibyan(empty, "sessions", "list");
    expect(run).toMatchObject({ status: 0, stdout: "No sessions stored yet.\n" });
    expect(json(await mibyan(empty, "sessions", "search", "x", "--json")).count).toBe(0);
    expect(existsSync(path.join(empty, "sessions"))).toBe(false);
  });

  it("a damaged store is a one-line error and exit 1, not a stack trace", async () => {
    const broken = tempDir("mibyan-sessions-broken-");
    mkdirSync(path.join(broken, "sessions"));
    writeFileSync(sessionStorePath(broken), "garbage ".repeat(2000));
    const run = await mibyan(broken, "sessions", "list");
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^mibyan sessions: session store .* is damaged or not a SQLite database/);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
  });
});
