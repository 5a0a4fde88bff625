/**
 * What interactive chat shows of a turn, with recording streams in place of the terminal: the answer
 * once (streamed or, when it was not, printed), the activity line's pauses, width, colours and
 * timer, and plain lines without escape codes when stderr is not a terminal.
 */
import { describe, expect, it } from "vitest";

import type { AgentEvent, RunAgentResult } from "../src/agent/types.js";
import { ActivityLine, fitWidth } from "../src/cli/chat/activity-line.js";
import { ChatRenderer, colorAllowed } from "../src/cli/chat/chat-renderer.js";

function recorder(isTTY: boolean, columns = 80) {
  const chunks: string[] = [];
  return { isTTY, columns, chunks, write: (text: string) => chunks.push(text), text: () => chunks.join("") };
}

const result = (finalText: string, status: RunAgentResult["status"] = "completed"): RunAgentResult => ({
  status,
  finalText,
  messages: [],
  newMessages: [],
  systemPrompt: null,
  usage: { requests: 1, inputTokens: 0, outputTokens: 0, totalTokens: 0, cachedTokens: 0, reasoningTokens: 0 },
  turns: 1,
  toolCalls: [],
  sessionId: "s",
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("ChatRenderer", () => {
  it("a subagent's tool calls are shown marked with its task; its text is not", () => {
    const out = recorder(false);
    const plain = recorder(false);
    const renderer = new ChatRenderer({ out, err: plain, env: {} });
    renderer.onChildEvent(1, { type: "text_delta", turn: 1, delta: "child text" });
    renderer.onChildEvent(1, { type: "tool_start", turn: 1, callId: "c1", name: "terminal", emoji: "💻", arguments: "{}" });
    renderer.onChildEvent(1, { type: "tool_end", turn: 1, callId: "c1", name: "terminal", emoji: "💻", elapsedMs: 12, status: "ok", content: "{}" });
    expect(plain.text()).toBe("💻 ↳#1 terminal (ok, 12 ms)\n");
    expect(out.text()).toBe("");

    const tty = recorder(true);
    const live = new ChatRenderer({ out, err: tty, env: { NO_COLOR: "1" } });
    live.onEvent({ type: "tool_start", turn: 1, callId: "d1", name: "delegate_task", emoji: "🔀", arguments: "{}" });
    live.onChildEvent(0, { type: "tool_start", turn: 1, callId: "c1", name: "read_file", emoji: "📖", arguments: "{}" });
    expect(tty.chunks.at(-1)).toMatch(/🔀 delegate_task {2}0\.0s {2}· {2}📖 ↳#0 read_file {2}0\.0s$/);
    live.onChildEvent(0, { type: "tool_end", turn: 1, callId: "c1", name: "read_file", emoji: "📖", elapsedMs: 3, status: "ok", content: "{}" });
    expect(tty.text()).toContain("📖 ↳#0 read_file ok 0.0s\n");
    live.stop();
  });


  it("a streamed answer is written as it arrives and not again at the end; a text that was not streamed is printed", () => {
    const out = recorder(false);
    const renderer = new ChatRenderer({ out, err: recorder(true), env: {} });
    renderer.onEvent({ type: "turn_start", turn: 1, summary: false });
    renderer.onEvent({ type: "text_delta", turn: 1, delta: "Hel" });
    expect(out.text()).toBe("Hel");
    renderer.onEvent({ type: "text_delta", turn: 1, delta: "lo" });
    renderer.finish(result("Hello"));
    expect(out.text()).toBe("Hello\n");
    // The budget's fallback: nothing streamed in that request, the text is printed whole.
    renderer.onEvent({ type: "turn_start", turn: 2, summary: true });
    renderer.finish(result("I ran out of steps.", "max_turns"));
    expect(out.text()).toBe("Hello\nI ran out of steps.\n");
    renderer.stop();
  });

  it("text before tool calls gets its line ended before the calls' lines; the live line never draws mid-text", () => {
    const out = recorder(false);
    const err = recorder(true);
    const renderer = new ChatRenderer({ out, err, env: {} });
    renderer.onEvent({ type: "turn_start", turn: 1, summary: false });
    const drawnBefore = err.chunks.length;
    renderer.onEvent({ type: "text_delta", turn: 1, delta: "Let me look." });
    // Held: erased once, nothing drawn while the text is mid-line.
    expect(err.chunks.slice(drawnBefore).join("")).toBe("\r\x1b[2K");
    renderer.onEvent({ type: "assistant_message", turn: 1, message: { role: "assistant", content: "Let me look.", tool_calls: [{ id: "c1", type: "function", function: { name: "terminal", arguments: "{}" } }] } });
    expect(out.text()).toBe("Let me look.\n");
    renderer.onEvent({ type: "tool_start", turn: 1, callId: "c1", name: "terminal", emoji: "💻", arguments: "{}" });
    expect(err.chunks.at(-1)).toMatch(/^\r\x1b\[2K⠙ 💻 terminal {2}0\.0s$/);
    renderer.onEvent({ type: "tool_end", turn: 1, callId: "c1", name: "terminal", emoji: "💻", elapsedMs: 1234, status: "ok", content: "" });
    expect(err.text()).toContain("💻 terminal \x1b[32mok\x1b[0m \x1b[2m1.2s\x1b[0m\n");
    renderer.stop();
  });

  it("stderr not a terminal: one plain line per finished call, retries and compaction on their own lines, no escape codes", () => {
    const out = recorder(false);
    const err = recorder(false);
    const renderer = new ChatRenderer({ out, err, env: {} });
    const events: AgentEvent[] = [
      { type: "turn_start", turn: 1, summary: false },
      { type: "retry", turn: 1, attempt: 1, delayMs: 500.4, status: 503, reason: "HTTP 503" },
      { type: "tool_start", turn: 1, callId: "c1", name: "terminal", emoji: "💻", arguments: "{}" },
      { type: "tool_end", turn: 1, callId: "c1", name: "terminal", emoji: "💻", elapsedMs: 41, status: "ok", content: "" },
      { type: "compaction", tokensBefore: 90_000, tokensAfter: 12_000, removedMessages: 40, keptMessages: 23, snapshotsInjected: 0, previousSessionId: "s1", sessionId: "s2" },
      { type: "text_delta", turn: 2, delta: "Done." },
    ];
    for (const event of events) renderer.onEvent(event);
    renderer.finish(result("Done."));
    expect(renderer.line).toBeUndefined();
    expect(err.text()).toBe("… HTTP 503; retrying in 500 ms\n💻 terminal (ok, 41 ms)\ncontext compacted (~90000 → ~12000 tokens); session s2\n");
    expect(out.text()).toBe("Done.\n");
  });

  it("a tool name the model made up and an endpoint's message reach the terminal inert", () => {
    for (const isTTY of [true, false]) {
      const err = recorder(isTTY);
      const renderer = new ChatRenderer({ out: recorder(false), err, env: {} });
      renderer.onEvent({ type: "retry", turn: 1, attempt: 1, delayMs: 10, status: 503, reason: "bad\x1b]0;title\x07gateway" });
      renderer.onEvent({ type: "tool_start", turn: 1, callId: "c1", name: "evil\x1b[2Jname", emoji: "🔧", arguments: "{}" });
      renderer.onEvent({ type: "tool_end", turn: 1, callId: "c1", name: "evil\x1b[2Jname", emoji: "🔧", elapsedMs: 1, status: "error", content: "" });
      renderer.stop();
      expect(err.text()).toContain("evil\\x1b[2Jname");
      expect(err.text()).toContain("bad\\x1b]0;title\\x07gateway");
      expect(err.text()).not.toContain("\x1b[2J");
      expect(err.text()).not.toContain("\x07");
    }
  });

  it("NO_COLOR turns the colours off (set and not empty)", () => {
    expect(colorAllowed({})).toBe(true);
    expect(colorAllowed({ NO_COLOR: "" })).toBe(true);
    expect(colorAllowed({ NO_COLOR: "1" })).toBe(false);
    const err = recorder(true);
    const renderer = new ChatRenderer({ out: recorder(false), err, env: { NO_COLOR: "1" } });
    renderer.onEvent({ type: "tool_start", turn: 1, callId: "c1", name: "terminal", emoji: "💻", arguments: "{}" });
    renderer.onEvent({ type: "tool_end", turn: 1, callId: "c1", name: "terminal", emoji: "💻", elapsedMs: 3400, status: "error", content: "" });
    renderer.stop();
    expect(err.text()).toContain("💻 terminal error 3.4s\n");
    expect(err.text()).not.toMatch(/\x1b\[(3\d|2|0)m/);
  });
});

describe("ActivityLine", () => {
  it("concurrent calls share one line, cut to the terminal's width", () => {
    const err = recorder(true, 40);
    const line = new ActivityLine(err, { color: false, intervalMs: 1_000 });
    line.callStarted("a", "💻", "terminal");
    line.callStarted("b", "📖", "read_file");
    line.callStarted("c", "🔎", "search_files_with_a_long_name");
    const drawn = err.chunks.at(-1)!;
    expect(drawn.startsWith("\r\x1b[2K")).toBe(true);
    expect(drawn).toContain("💻 terminal  0.0s  ·  📖 read_file");
    expect(drawn.endsWith("…")).toBe(true);
    line.stop();
    expect(fitWidth("💻 ab", 4)).toBe("💻 …");
    expect(fitWidth("short", 10)).toBe("short");
  });

  it("draws nothing while paused, redraws on resume, and stop() ends the timer for good", async () => {
    const err = recorder(true);
    const line = new ActivityLine(err, { color: false, intervalMs: 20 });
    line.thinking();
    await sleep(100);
    expect(err.chunks.filter((c) => c.includes("thinking")).length).toBeGreaterThanOrEqual(2);
    line.pause();
    const atPause = err.chunks.length;
    expect(err.chunks.at(-1)).toBe("\r\x1b[2K");
    await sleep(100);
    expect(err.chunks.length).toBe(atPause);
    line.resume();
    expect(err.chunks.at(-1)).toContain("thinking");
    line.stop();
    const atStop = err.chunks.length;
    line.thinking();
    line.callStarted("a", "💻", "terminal");
    await sleep(100);
    expect(err.chunks.length).toBe(atStop);
  });
});
