// One server's calls: time limits, progress, cancellation, outputSchema, the circuit breaker,
// keepalive and per-server serialisation (next-features §1.5 items 7, 8, 9, 14, 17).
import { getEventListeners } from "node:events";
import { readFileSync } from "node:fs";
import path from "node:path";

import { describe, expect, it } from "vitest";

import { discover, fixtureServer, messages, tempDir, waitFor } from "./support/mcp.js";

const calls = (file: string): string[] => readFileSync(file, "utf8").split("\n").filter(Boolean);

describe("time limits and cancellation", () => {
  it("a call over its timeout fails with 'timed out' at about the limit, and the next call succeeds", async () => {
    const { registry } = await discover({ fx: fixtureServer(["--tools=echo,sleep"], { timeout: 1 }) });
    const started = Date.now();
    const outcome = await registry.run("mcp__fx__sleep", { ms: 3000 });
    const took = Date.now() - started;
    expect(outcome.result.success).toBe(false);
    expect(outcome.content).toContain("timed out");
    expect(took).toBeGreaterThanOrEqual(950);
    expect(took).toBeLessThanOrEqual(1300);
    expect(await registry.dispatch("mcp__fx__echo", { text: "after" })).toBe("after");
  });

  it("progress every 0.5 s keeps a 2 s call alive under a 1 s timeout", async () => {
    const { registry } = await discover({ fx: fixtureServer(["--tools=progress"], { timeout: 1 }) });
    const outcome = await registry.run("mcp__fx__progress", { ms: 2000, interval: 500 });
    expect(outcome.content).toBe("progress done");
  });

  it("the caller's AbortSignal cancels the MCP request", async () => {
    const { registry } = await discover({ fx: fixtureServer(["--tools=echo,sleep"]) });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const started = Date.now();
    const outcome = await registry.run("mcp__fx__sleep", { ms: 5000 }, { signal: controller.signal });
    expect(Date.now() - started).toBeLessThan(1500);
    expect(outcome.result.error?.kind).toBe("cancelled");
    // The session is intact: the cancelled request was withdrawn, not the connection.
    expect(await registry.dispatch("mcp__fx__echo", { text: "still here" })).toBe("still here");
  });
});

describe("a caller's long-lived signal", () => {
  it("keeps no listener per call: an agent loop's session signal is not filled by its MCP calls", async () => {
    const { registry } = await discover({ fx: fixtureServer(["--tools=echo,sleep"]) });
    const session = new AbortController();
    // With and without a time limit: each call gets a signal of its own, linked to the caller's.
    for (let i = 0; i < 25; i++) {
      expect(await registry.dispatch("mcp__fx__echo", { text: `n${i}` }, { signal: session.signal })).toBe(`n${i}`);
      expect(await registry.dispatch("mcp__fx__echo", { text: "t" }, { signal: session.signal, timeoutMs: 60_000 })).toBe("t");
    }
    expect(getEventListeners(session.signal, "abort")).toHaveLength(0);
    // And the link still works while a call runs.
    setTimeout(() => session.abort(), 200);
    const outcome = await registry.run("mcp__fx__sleep", { ms: 5000 }, { signal: session.signal });
    expect(outcome.result.error?.kind).toBe("cancelled");
  });
});

describe("results", () => {
  it("an outputSchema mismatch keeps the content, logs a warning and does not count as a failure", async () => {
    const { registry, logger, handle } = await discover({ fx: fixtureServer(["--tools=bad_output"]) });
    const outcome = await registry.run("mcp__fx__bad_output", {});
    expect(outcome.result.success).toBe(true);
    expect(JSON.parse(outcome.content)).toEqual({ result: "kept text", structuredContent: { n: "not a number" } });
    expect(messages(logger, "warn").some((m) => m.includes("bad_output") && m.includes("outputSchema"))).toBe(true);
    expect(handle.servers[0]!.state).toBe("ready");
  });

  it("an image arrives as a multimodal result; a resource link names the server's read_resource tool", async () => {
    const { registry } = await discover({ fx: fixtureServer(["--tools=image,link", "--resources"]) });
    const image = await registry.invoke({ name: "mcp__fx__image", arguments: {} });
    expect(image.success).toBe(true);
    expect(JSON.stringify(image.data)).toContain("image/png");
    expect(await registry.dispatch("mcp__fx__image", {})).toContain("image/png");
    const link = await registry.dispatch("mcp__fx__link", {});
    expect(link).toContain("file:///r.txt");
    expect(link).toContain("mcp__fx__read_resource");
  });

  it("text blocks join with a newline; isError text reaches the model redacted", async () => {
    const { registry } = await discover({ fx: fixtureServer(["--tools=two_texts,tool_error,structured"]) });
    expect(await registry.dispatch("mcp__fx__two_texts", {})).toBe("a\nb");
    expect(JSON.parse(await registry.dispatch("mcp__fx__structured", {}))).toEqual({ result: "summary", structuredContent: { n: 1 } });
    const error = await registry.run("mcp__fx__tool_error", {});
    expect(error.result.success).toBe(false);
    expect(error.content).not.toContain("abc123secret");
    expect(error.content).toContain("failed");
  });
});

describe("circuit breaker", () => {
  it("after 3 failures the 4th call is refused without an RPC; after the cooldown one probe, and success resets", async () => {
    const dir = tempDir();
    const count = path.join(dir, "calls");
    const { registry, handle } = await discover(
      { fx: fixtureServer(["--tools=echo,fail", `--count-file=${count}`]) },
      { timings: { breakerCooldownMs: 300 } },
    );
    for (let i = 0; i < 3; i++) expect(await registry.dispatch("mcp__fx__fail", {})).toContain("MCP call failed");
    expect(calls(count)).toHaveLength(3);
    const refused = JSON.parse(await registry.dispatch("mcp__fx__echo", { text: "x" })) as { error: string };
    expect(refused.error).toMatch(
      /^MCP server 'fx' is unreachable after 3 consecutive failures\. Auto-retry available in ~\d+s\. Do NOT retry this tool yet — use alternative approaches or ask the user to check the MCP server\.$/,
    );
    expect(calls(count)).toHaveLength(3); // no RPC
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect(await registry.dispatch("mcp__fx__echo", { text: "probe" })).toBe("probe");
    expect(calls(count)).toHaveLength(4);
    // Closed again: a single failure does not reopen it.
    await registry.dispatch("mcp__fx__fail", {});
    expect(await registry.dispatch("mcp__fx__echo", { text: "ok" })).toBe("ok");
    expect(handle.servers[0]!.state).toBe("ready");
  });

  it("a failed probe reopens the breaker for another cooldown", async () => {
    const dir = tempDir();
    const count = path.join(dir, "calls");
    const { registry } = await discover({ fx: fixtureServer(["--tools=echo,fail", `--count-file=${count}`]) }, { timings: { breakerCooldownMs: 200 } });
    for (let i = 0; i < 3; i++) await registry.dispatch("mcp__fx__fail", {});
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(await registry.dispatch("mcp__fx__fail", {})).toContain("MCP call failed"); // the probe
    expect(await registry.dispatch("mcp__fx__echo", { text: "x" })).toContain("Do NOT retry");
    expect(calls(count)).toHaveLength(4);
  });
});

describe("keepalive and parallelism", () => {
  it("a server answering ping with -32601 is kept alive with tools/list, without reconnecting", async () => {
    const dir = tempDir();
    const spawns = path.join(dir, "spawns");
    const { registry, handle, logger } = await discover({ fx: fixtureServer(["--no-ping", `--spawn-file=${spawns}`]) }, { timings: { keepaliveMs: 50 } });
    await waitFor(() => messages(logger, "info").some((m) => m.includes("does not answer ping")), 3000, "the ping fallback");
    await new Promise((resolve) => setTimeout(resolve, 300)); // several keepalive rounds on tools/list
    expect(handle.servers[0]!.state).toBe("ready");
    expect(calls(spawns)).toHaveLength(1);
    expect(await registry.dispatch("mcp__fx__echo", { text: "alive" })).toBe("alive");
  });

  it("a server answering ping keeps its session through keepalive rounds", async () => {
    const dir = tempDir();
    const spawns = path.join(dir, "spawns");
    const { handle, logger } = await discover({ fx: fixtureServer([`--spawn-file=${spawns}`]) }, { timings: { keepaliveMs: 50 } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(handle.servers[0]!.state).toBe("ready");
    expect(calls(spawns)).toHaveLength(1);
    expect(messages(logger, "info").some((m) => m.includes("does not answer ping"))).toBe(false);
  });

  it("a call waiting for its turn on a serial server leaves the queue when its signal aborts, without reaching the server", async () => {
    const dir = tempDir();
    const count = path.join(dir, "calls");
    const { registry } = await discover({ fx: fixtureServer(["--tools=sleep,echo", `--count-file=${count}`]) });
    const first = registry.dispatch("mcp__fx__sleep", { ms: 800 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    const queued = await registry.run("mcp__fx__echo", { text: "queued" }, { signal: controller.signal });
    expect(Date.now() - started).toBeLessThan(500);
    expect(queued.result.error?.kind).toBe("cancelled");
    expect(await first).toBe("slept");
    expect(await registry.dispatch("mcp__fx__echo", { text: "next" })).toBe("next");
    expect(calls(count)).toEqual(["sleep", "echo"]);
  });

  it("supports_parallel_tool_calls: true lets two calls overlap; false serialises them", async () => {
    const { registry } = await discover({
      par: fixtureServer(["--tools=sleep"], { supportsParallelToolCalls: true }),
      ser: fixtureServer(["--tools=sleep"]),
    });
    expect(registry.get("mcp__par__sleep")!.parallelSafe).toBe(true);
    expect(registry.get("mcp__ser__sleep")!.parallelSafe).toBe(false);
    const timed = async (name: string): Promise<number> => {
      const started = Date.now();
      await Promise.all([registry.dispatch(name, { ms: 400 }), registry.dispatch(name, { ms: 400 })]);
      return Date.now() - started;
    };
    expect(await timed("mcp__par__sleep")).toBeLessThan(750);
    expect(await timed("mcp__ser__sleep")).toBeGreaterThanOrEqual(790);
  });
});

describe("elicitation", () => {
  const ask = { fx: fixtureServer(["--tools=ask,ask_url"]) };

  it("a form request mid-call goes to the callback; accept sends the content back to the server", async () => {
    const seen: unknown[] = [];
    const { registry } = await discover(ask, {
      onElicitation: (request) => {
        seen.push(request);
        return { action: "accept", content: { name: "Ada" } };
      },
    });
    expect(JSON.parse(await registry.dispatch("mcp__fx__ask", {}))).toEqual({ action: "accept", content: { name: "Ada" } });
    expect(seen).toEqual([{ server: "fx", message: "Your name?", requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } }]);
  });

  it("no callback, a callback that throws or answers nonsense, a time-out, URL mode → decline", async () => {
    const answer = async (bed: Awaited<ReturnType<typeof discover>>, tool = "mcp__fx__ask"): Promise<unknown> =>
      JSON.parse(await bed.registry.dispatch(tool, {}));
    expect(await answer(await discover(ask))).toEqual({ action: "decline" });
    expect(await answer(await discover(ask, { onElicitation: () => { throw new Error("no surface"); } }))).toEqual({ action: "decline" });
    expect(await answer(await discover(ask, { onElicitation: () => ({ action: "accept" }) as never }))).toEqual({ action: "decline" });
    const slow = await discover(ask, { onElicitation: () => new Promise(() => undefined), timings: { elicitationTimeoutMs: 100 } });
    expect(await answer(slow)).toEqual({ action: "decline" });
    let called = false;
    const url = await discover(ask, { onElicitation: () => ((called = true), { action: "accept", content: {} }) });
    expect(await answer(url, "mcp__fx__ask_url")).toEqual({ action: "decline" });
    expect(called).toBe(false);
  });
});
