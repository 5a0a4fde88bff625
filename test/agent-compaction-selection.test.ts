/**
 * What a compaction keeps (src/agent/compaction/selection.ts): the first and last messages, never a
 * tool message without its call or a call without its results, earlier compaction messages sent to
 * the middle; and the size estimate and settings it decides with.
 */

import { describe, expect, it } from "vitest";

import { splitForCompaction } from "../src/agent/compaction/selection.js";
import { SNAPSHOT_SYNTHETIC, SUMMARY_SYNTHETIC } from "../src/agent/compaction/result.js";
import { compactionSettings, DEFAULT_CONTEXT_TOKENS } from "../src/agent/compaction/settings.js";
import { PromptSize, estimateMessageTokens } from "../src/agent/compaction/token-estimate.js";
import { AgentConfigError } from "../src/agent/loop/errors.js";
import type { AgentMessage } from "../src/agent/types.js";

const user = (content: string): AgentMessage => ({ role: "user", content });
const text = (content: string): AgentMessage => ({ role: "assistant", content });
const calls = (...ids: string[]): AgentMessage => ({ role: "assistant", content: null, tool_calls: ids.map((id) => ({ id, type: "function", function: { name: "t", arguments: "{}" } })) });
const result = (id: string): AgentMessage => ({ role: "tool", tool_call_id: id, content: `result ${id}` });

/** Tool messages answer a call of the assistant message right before their block, and every call is answered. */
function pairingProblems(messages: readonly AgentMessage[]): string[] {
  const problems: string[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === "tool") {
      let j = i - 1;
      while (j >= 0 && messages[j]!.role === "tool") j--;
      const owner = messages[j];
      if (owner?.role !== "assistant" || !(owner.tool_calls ?? []).some((c) => c.id === m.tool_call_id)) problems.push(`orphan tool message ${m.tool_call_id} at ${i}`);
    }
    if (m.role === "assistant" && m.tool_calls !== undefined) {
      const answered = new Set<string>();
      for (let j = i + 1; j < messages.length && messages[j]!.role === "tool"; j++) answered.add((messages[j] as { tool_call_id: string }).tool_call_id);
      for (const c of m.tool_calls) if (!answered.has(c.id)) problems.push(`unanswered call ${c.id} at ${i}`);
    }
  }
  return problems;
}

const long: AgentMessage[] = [
  user("u0"),
  calls("c1", "c2"),
  result("c1"),
  result("c2"),
  calls("c3"),
  result("c3"),
  text("a"),
  user("u1"),
  calls("c4", "c5", "c6"),
  result("c4"),
  result("c5"),
  result("c6"),
  calls("c7"),
  result("c7"),
  user("u2"),
  text("b"),
];

describe("splitForCompaction", () => {
  it("a head that ends inside a tool round takes the rest of it; a tail that starts inside one takes its assistant message", () => {
    const split = splitForCompaction(long, 2, 6)!;
    expect(split.head).toEqual(long.slice(0, 4)); // u0, the two calls and both results
    expect(split.tail).toEqual(long.slice(8)); // starts at the assistant of c4-c6, not at result c5
    expect(split.middle).toEqual(long.slice(4, 8));
  });

  it("never leaves a tool message without its call or a call without its result, for every keepFirst and keepLast", () => {
    expect(pairingProblems(long)).toEqual([]);
    let splits = 0;
    for (let first = 0; first <= long.length; first++) {
      for (let last = 1; last <= long.length; last++) {
        const split = splitForCompaction(long, first, last);
        if (split === undefined) continue;
        splits++;
        expect(split.head.length + split.middle.length + split.tail.length).toBe(long.length);
        // What the request carries: head, a summary (a user message), tail.
        expect(pairingProblems([...split.head, user("summary"), ...split.tail]), `keepFirst ${first}, keepLast ${last}`).toEqual([]);
      }
    }
    expect(splits).toBeGreaterThan(50);
  });

  it("an earlier compaction's summary and snapshot go to the middle, wherever they are, so the next one does not keep a second copy", () => {
    const summary: AgentMessage = { role: "user", content: "earlier summary", synthetic: SUMMARY_SYNTHETIC };
    const snapshot: AgentMessage = { role: "user", content: "[todo]", synthetic: SNAPSHOT_SYNTHETIC };
    const conversation = [user("u0"), summary, snapshot, calls("c1"), result("c1"), text("a"), user("u1"), text("b")];
    // keepFirst 3 would reach the summary; keepLast 20 would keep everything.
    const split = splitForCompaction(conversation, 3, 20);
    // The tail starts after the snapshot: the summary and snapshot are summarised, the rest kept.
    expect(split).toBeUndefined(); // only the two made-up messages would be summarised: not worth a request
    const grown = [...conversation, calls("c2"), result("c2"), text("c")];
    const again = splitForCompaction(grown, 3, 3)!;
    expect(again.head).toEqual([user("u0")]);
    expect(again.middle).toContain(summary);
    expect(again.middle).toContain(snapshot);
    expect(again.tail.some((m) => m.synthetic !== undefined)).toBe(false);
  });

  it("nothing to summarise: the kept messages cover the conversation", () => {
    expect(splitForCompaction(long, 10, 10)).toBeUndefined();
    expect(splitForCompaction([user("u"), text("a")], 0, 1)).toBeUndefined();
  });
});

describe("the prompt size and the settings", () => {
  it("prefers the endpoint's reported prompt_tokens plus the estimate of what was added since", () => {
    const size = new PromptSize(100);
    const conversation = [user("x".repeat(400)), text("y".repeat(400))];
    expect(size.estimate(conversation)).toBe(100 + estimateMessageTokens(conversation));
    size.noteReported(5000, 1);
    expect(size.estimate(conversation)).toBe(5000 + estimateMessageTokens(conversation.slice(1)));
    size.noteReported(0, 2); // not reported: back to the estimate
    expect(size.estimate(conversation)).toBe(100 + estimateMessageTokens(conversation));
  });

  it("defaults 0.5 of 128,000 tokens, keep 3 and 20; off with false or enabled: false; bad values refused before anything is sent", () => {
    expect(compactionSettings({})).toEqual({ threshold: 0.5, keepFirst: 3, keepLast: 20, model: undefined, contextTokens: DEFAULT_CONTEXT_TOKENS });
    expect(compactionSettings({ contextTokens: 8000 })?.contextTokens).toBe(8000);
    expect(compactionSettings({ contextTokens: 8000, compaction: { contextTokens: 4000 } })?.contextTokens).toBe(4000);
    // The run's contextTokens is shared with tool search, which reads a bad value as unknown: so does compaction.
    expect(compactionSettings({ contextTokens: -5 })?.contextTokens).toBe(DEFAULT_CONTEXT_TOKENS);
    expect(compactionSettings({ contextTokens: 9000.7 })?.contextTokens).toBe(9000);
    expect(() => compactionSettings({ compaction: { contextTokens: 0 } })).toThrow(/compaction.contextTokens/);
    expect(compactionSettings({ compaction: false })).toBeUndefined();
    expect(compactionSettings({ compaction: { enabled: false } })).toBeUndefined();
    for (const bad of [{ threshold: 0 }, { threshold: 1.5 }, { threshold: "half" }, { keepLast: 0 }, { keepFirst: -1 }, { keepFirst: 2.5 }, { model: "" }, { enabled: "yes" }]) {
      expect(() => compactionSettings({ compaction: bad as never }), JSON.stringify(bad)).toThrow(AgentConfigError);
    }
    expect(() => compactionSettings({ compaction: "on" as never })).toThrow(/must be an object/);
  });
});
