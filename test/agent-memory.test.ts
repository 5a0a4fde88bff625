import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { loadConfig } from "../src/config/load-config.js";
import { handleFunctionCall } from "../src/dispatch/handle-function-call.js";
import { ToolRegistry } from "../src/registry/tool-registry.js";
import { createMemoryLogger } from "../src/util/logger.js";
import { ENTRY_DELIMITER, FileMemoryStore, MEMORY_BLOCK_RULE, memoryStoreOptionsFromConfig, parseEntries, serializeEntries } from "../src/agent/stores/memory/index.js";
import { createMemoryHandler, MEMORY_TOOL } from "../src/agent/tools/memory.js";

let home: string;
beforeEach(() => {
  home = mkdtempSync(path.join(os.tmpdir(), "mibyan-memory-"));
});
afterEach(() => {
  rmSync(home, { recursive: true, force: true });
});

const memoryFile = () => path.join(home, "memories", "MEMORY.md");
const userFile = () => path.join(home, "memories", "USER.md");
const ctx = (sessionId = "s1") => ({ sessionId });
type Body = { success: boolean; error?: string; usage?: string; current_entries?: string[]; matches?: string[]; message?: string; done?: boolean; entry_count?: number; drift_backup?: string };
const parse = (s: string) => JSON.parse(s) as Body;

describe("memory files and format", () => {
  it("writes memories/MEMORY.md and USER.md with the § delimiter and round-trips multi-line entries", async () => {
    const store = new FileMemoryStore({ home });
    expect((await store.add("memory", "line one\nline two")).body.success).toBe(true);
    expect((await store.add("memory", "  second entry  ")).body.success).toBe(true);
    expect((await store.add("user", "Prefers British spelling")).body.success).toBe(true);
    expect(readFileSync(memoryFile(), "utf8")).toBe("line one\nline two\n§\nsecond entry");
    expect(readFileSync(userFile(), "utf8")).toBe("Prefers British spelling");
    expect(await store.entries("memory")).toEqual(["line one\nline two", "second entry"]);
    expect(parseEntries(serializeEntries(["a\nb", "c"]))).toEqual(["a\nb", "c"]);
  });

  it("usage is the length of the joined entries, against limits from config.yaml", async () => {
    writeFileSync(path.join(home, "config.yaml"), "memory:\n  memory_char_limit: 120\n  user_char_limit: 200\n");
    const { config } = loadConfig({ home });
    expect(config.memory).toMatchObject({ memoryCharLimit: 120, userCharLimit: 200, memoryEnabled: true });
    const store = new FileMemoryStore(memoryStoreOptionsFromConfig(config.memory, home));
    expect(store.limits).toEqual({ memory: 120, user: 200 });
    await store.add("memory", "a".repeat(50));
    const body = (await store.add("memory", "b".repeat(40))).body;
    const used = 50 + ENTRY_DELIMITER.length + 40;
    expect(body).toMatchObject({ success: true, done: true, target: "memory", entry_count: 2, usage: `${Math.floor((used / 120) * 100)}% — ${used}/120 chars` });
    expect(body).not.toHaveProperty("current_entries");
  });

  it("defaults are 2200 and 1375 characters", () => {
    expect(new FileMemoryStore({ home }).limits).toEqual({ memory: 2200, user: 1375 });
    expect(loadConfig({ home }).config.memory).toEqual({ memoryEnabled: true, userProfileEnabled: true, memoryCharLimit: 2200, userCharLimit: 1375, writeApproval: false });
  });

  it("config: a wrong type and a misspelt key are located errors", () => {
    writeFileSync(path.join(home, "config.yaml"), "memory:\n  memory_char_limit: lots\n");
    expect(() => loadConfig({ home })).toThrow(/config\.yaml:2:22: memory\.memory_char_limit must be a whole number from 100 to 60000 \(got "lots"\)/);
    writeFileSync(path.join(home, "config.yaml"), "memory:\n  user_profle_enabled: false\n");
    expect(() => loadConfig({ home })).toThrow(/config\.yaml:2:3: unknown key memory\.user_profle_enabled; did you mean memory\.user_profile_enabled\?/);
    writeFileSync(path.join(home, "config.yaml"), "memory:\n  memory_char_limit: 10000000\n");
    expect(() => loadConfig({ home })).toThrow(/from 100 to 60000/);
  });
});

describe("memory add", () => {
  it("an add past the limit fails with current_entries and usage, and leaves the file unchanged", async () => {
    const store = new FileMemoryStore({ home, memoryCharLimit: 100 });
    await store.add("memory", "x".repeat(60));
    const before = readFileSync(memoryFile(), "utf8");
    const result = await store.add("memory", "y".repeat(45));
    expect(result.consolidationFailure).toBe(true);
    expect(result.body).toMatchObject({ success: false, usage: "60/100", current_entries: ["x".repeat(60)] });
    expect(result.body.error).toBe(
      "Memory at 60/100 chars. Adding this entry (45 chars) would exceed the limit. Consolidate now: use 'replace' to merge overlapping entries into shorter ones or 'remove' stale or less important entries (see current_entries below), then retry this add — all in this turn.",
    );
    expect(readFileSync(memoryFile(), "utf8")).toBe(before);
  });

  it("an exact duplicate succeeds without a second copy; an empty add is refused", async () => {
    const store = new FileMemoryStore({ home });
    await store.add("memory", "uses pnpm");
    expect((await store.add("memory", "  uses pnpm ")).body).toMatchObject({ success: true, message: "Entry already exists (no duplicate added).", entry_count: 1 });
    expect((await store.add("memory", "   ")).body).toEqual({ success: false, error: "Content cannot be empty." });
  });

  it("an entry holding a § line is refused (it would split in two when read back)", async () => {
    const store = new FileMemoryStore({ home });
    expect((await store.add("memory", "one\n§\ntwo")).body.error).toMatch(/cannot contain a line holding only '§'/);
    expect((await store.add("memory", "section § 4 of the lease")).body.success).toBe(true);
  });
});

describe("memory replace and remove", () => {
  it("no match, several distinct matches (80-char previews) and identical duplicates", async () => {
    const store = new FileMemoryStore({ home });
    const long = `deploys go through ${"the staging cluster ".repeat(6)}`.trim();
    await store.add("memory", long);
    await store.add("memory", "deploys need a ticket");
    const none = await store.replace("memory", "nothing like this", "x");
    expect(none.body.error).toBe("No entry matched 'nothing like this'. Check current_entries below and retry with the exact text of the entry you want to replace.");
    expect(none.body.current_entries).toHaveLength(2);
    const several = await store.remove("memory", "deploys");
    expect(several.body).toEqual({ success: false, error: "Multiple entries matched 'deploys'. Be more specific.", matches: [`${long.slice(0, 80)}...`, "deploys need a ticket"] });
    // Identical duplicates (written by hand) are one entry: the first is used.
    writeFileSync(memoryFile(), serializeEntries(["same", "other", "same"]));
    expect((await store.replace("memory", "sam", "changed")).body.success).toBe(true);
    expect(await store.entries("memory")).toEqual(["changed", "other", "same"]);
    expect((await store.remove("memory", "other")).body).toMatchObject({ success: true, message: "Entry removed.", entry_count: 2 });
  });

  it("a replace that overflows fails with usage and changes nothing", async () => {
    const store = new FileMemoryStore({ home, memoryCharLimit: 100 });
    await store.add("memory", "short");
    await store.add("memory", "x".repeat(80));
    const before = readFileSync(memoryFile(), "utf8");
    const result = await store.replace("memory", "short", "y".repeat(30));
    expect(result.body.error).toMatch(/^Replacement would put memory at 113\/100 chars/);
    expect(result.body.usage).toBe("88/100");
    expect(readFileSync(memoryFile(), "utf8")).toBe(before);
  });
});

describe("memory batch", () => {
  it("an add that fits only after its own remove succeeds in one call", async () => {
    const store = new FileMemoryStore({ home, memoryCharLimit: 100 });
    await store.add("memory", "old fact ".repeat(8).trim());
    const result = await store.applyBatch("memory", [
      { action: "remove", old_text: "old fact" },
      { action: "add", content: "n".repeat(90) },
      { action: "add", content: "n".repeat(90) },
    ]);
    expect(result.body).toMatchObject({ success: true, message: "Applied 3 operation(s).", entry_count: 1 });
    expect(await store.entries("memory")).toEqual(["n".repeat(90)]);
  });

  it("a batch with one bad op writes nothing and says so", async () => {
    const store = new FileMemoryStore({ home });
    await store.add("memory", "keep me");
    const before = readFileSync(memoryFile());
    for (const bad of [
      [{ action: "add", content: "fine" }, { action: "remove", old_text: "not there" }],
      [{ action: "add", content: "fine" }, { action: "explode" }],
      [{ action: "add", content: "fine" }, { action: "replace", old_text: "keep" }],
      [{ action: "add", content: "fine" }, "not an object"],
    ]) {
      const result = await store.applyBatch("memory", bad);
      expect(result.body.success).toBe(false);
      expect(String(result.body.error)).toMatch(/^Operation 2.*No operations were applied \(batch is all-or-nothing\)\.$/);
      expect(readFileSync(memoryFile())).toEqual(before);
    }
    expect((await store.applyBatch("memory", [{ action: "add", content: "fine" }, { action: "remove", old_text: "not there" }])).body.error).toBe(
      "Operation 2 (remove): no entry matched 'not there'. No operations were applied (batch is all-or-nothing).",
    );
  });

  it("a batch over the limit on its final state fails whole", async () => {
    const store = new FileMemoryStore({ home, memoryCharLimit: 100 });
    const result = await store.applyBatch("memory", [{ action: "add", content: "a".repeat(60) }, { action: "add", content: "b".repeat(60) }]);
    expect(result.body.error).toMatch(/^After applying all 2 operations, memory would be at 123\/100 chars -- over the limit\./);
    expect(await store.entries("memory")).toEqual([]);
  });
});

describe("memory snapshot", () => {
  it("a write mid-session changes the file but not the session's snapshot; a new session sees it", async () => {
    const store = new FileMemoryStore({ home });
    await store.add("memory", "first fact");
    await store.add("user", "Name: Ada");
    const first = await store.snapshot("s1");
    await store.add("memory", "learned mid-session");
    const again = await store.snapshot("s1");
    expect(again.text).toBe(first.text);
    expect(again.text).not.toContain("learned mid-session");
    expect(readFileSync(memoryFile(), "utf8")).toContain("learned mid-session");
    const next = await new FileMemoryStore({ home }).snapshot("s2");
    expect(next.text).toContain("learned mid-session");
    expect((await store.snapshot("s2")).text).toContain("learned mid-session");
  });

  it("the block is the header between two 46×═ lines, then the entries", async () => {
    const store = new FileMemoryStore({ home });
    await store.add("memory", "a".repeat(100));
    await store.add("memory", "b");
    const { memory, user, text } = await store.snapshot("s");
    expect(MEMORY_BLOCK_RULE).toBe("═".repeat(46));
    expect(memory).toBe(`${MEMORY_BLOCK_RULE}\nMEMORY (your personal notes) [4% — 104/2,200 chars]\n${MEMORY_BLOCK_RULE}\n${"a".repeat(100)}\n§\nb`);
    expect(user).toBeNull();
    expect(text).toBe(memory);
    await store.add("user", "likes tea");
    expect((await store.snapshot("t")).user).toMatch(/^═{46}\nUSER PROFILE \(who the user is\) \[0% — 9\/1,375 chars\]\n═{46}\nlikes tea$/);
  });

  it("a turned-off target is neither written nor shown", async () => {
    const on = new FileMemoryStore({ home });
    await on.add("user", "secret-ish profile");
    const off = new FileMemoryStore({ home, userProfileEnabled: false });
    expect(off.enabledTargets).toEqual(["memory"]);
    expect((await off.snapshot("s")).user).toBeNull();
    expect((await off.add("user", "more")).body.error).toMatch(/turned off \(memory\.user_profile_enabled: false/);
  });

  it("two sessions asking at once share one read; a released session takes a new snapshot", async () => {
    const store = new FileMemoryStore({ home });
    await store.add("memory", "v1");
    const [a, b] = await Promise.all([store.snapshot("s"), store.snapshot("s")]);
    expect(a).toBe(b);
    await store.add("memory", "v2");
    store.releaseSession("s");
    expect((await store.snapshot("s")).text).toContain("v2");
  });
});

describe("the memory tool", () => {
  it("argument errors: target, missing content, missing old_text gives the inventory and a retry hint", async () => {
    const store = new FileMemoryStore({ home });
    await store.add("memory", "known entry");
    const handler = createMemoryHandler(store);
    expect(parse(await handler({ target: "diary", action: "add", content: "x" }, ctx())).error).toBe("Invalid target 'diary'. Use 'memory' or 'user'.");
    expect(parse(await handler({ target: "memory", action: "add" }, ctx())).error).toBe("Content is required for 'add' action.");
    expect(parse(await handler({ target: "memory", action: "fly" }, ctx())).error).toBe("Unknown action 'fly'. Use: add, replace, remove");
    const missing = parse(await handler({ target: "memory", action: "remove" }, ctx()));
    expect(missing.error).toMatch(/^'remove' needs old_text -- a short unique substring/);
    expect(missing.current_entries).toEqual(["known entry"]);
    expect(missing.usage).toBe("11/2,200");
    expect(parse(await handler({ target: null, action: "add", content: "defaults to memory" }, ctx())).success).toBe(true);
    expect(parse(await createMemoryHandler(undefined)({ target: "memory" }, ctx())).error).toMatch(/Memory is not available/);
  });

  it("from the 4th consolidation failure in a turn the answer is done:true with the stop text; a new turn resets it", async () => {
    const handler = createMemoryHandler(new FileMemoryStore({ home }));
    const miss = { target: "memory", action: "remove", old_text: "nothing" };
    for (let i = 1; i <= 3; i++) expect(parse(await handler(miss, ctx())).error).toMatch(/^No entry matched/);
    const fourth = parse(await handler(miss, ctx()));
    expect(fourth).toEqual({
      success: false,
      done: true,
      error: "Memory consolidation failed 4 times this turn. Stop retrying memory calls — leave memory unchanged for now and continue with your reply to the user. The fact can be saved in a later turn.",
    });
    // Another session is counted apart; a new turn starts from zero.
    expect(parse(await handler(miss, ctx("other"))).error).toMatch(/^No entry matched/);
    handler.beginTurn("s1");
    expect(parse(await handler(miss, ctx())).error).toMatch(/^No entry matched/);
  });

  it("write_approval: no approver refuses, a no refuses, a yes writes", async () => {
    const store = new FileMemoryStore({ home });
    const asked: string[] = [];
    expect(parse(await createMemoryHandler(store, { writeApproval: true })({ target: "memory", action: "add", content: "x" }, ctx())).error).toMatch(/need approval/);
    const deny = createMemoryHandler(store, { writeApproval: true, approveWrite: (r) => (asked.push(`${r.summary}: ${r.detail}`), false) });
    expect(parse(await deny({ target: "user", action: "add", content: "likes tea" }, ctx())).error).toMatch(/not approved/);
    const allow = createMemoryHandler(store, { writeApproval: true, approveWrite: () => true });
    expect(parse(await allow({ target: "user", operations: [{ action: "add", content: "likes tea" }] }, ctx())).success).toBe(true);
    expect(asked).toEqual(["add to user profile: likes tea"]);
    expect(await store.entries("user")).toEqual(["likes tea"]);
  });

  it("runs through handleFunctionCall as an agent-loop tool; dispatch refuses it", async () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    registry.register(MEMORY_TOOL);
    expect((await registry.invoke({ name: "memory", arguments: { target: "memory" } })).error?.kind).toBe("agent_loop");
    const store = new FileMemoryStore({ home });
    const out = await handleFunctionCall("memory", JSON.stringify({ target: "user", action: "add", content: "Name: Ada" }), { registry, sessionId: "s", agentLoop: { memory: createMemoryHandler(store) } });
    expect(parse(out)).toMatchObject({ success: true, note: "Write saved. This update is complete — do not repeat it." });
  });
});

describe("memory home", () => {
  it("creates the memory folder 0700 and files 0600", async () => {
    const nested = path.join(home, "fresh");
    mkdirSync(nested);
    await new FileMemoryStore({ home: nested }).add("memory", "x");
    const { statSync } = await import("node:fs");
    expect(statSync(path.join(nested, "memories")).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(nested, "memories", "MEMORY.md")).mode & 0o777).toBe(0o600);
  });
});
