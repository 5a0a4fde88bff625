// A server's life: tools changing at run time, a crashed child, reconnect backoff, parking, and
// coming back with its tools re-registered (next-features §1.5 items 11, 12, 13; hermes #67187).
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

import { describe, expect, it } from "vitest";

import { discover, fixtureServer, ManualClock, pidAlive, tempDir, waitFor } from "./support/mcp.js";

const lines = (file: string): string[] => readFileSync(file, "utf8").split("\n").filter(Boolean);

describe("tools/list_changed", () => {
  it("a tool added at run time is callable within a second, a removed one is deregistered, generation bumps", async () => {
    const { registry } = await discover({ fx: fixtureServer(["--dynamic", "--names=t1"]) });
    expect(registry.has("mcp__fx__t1")).toBe(true);
    const generation = registry.generation;
    const started = Date.now();
    expect(await registry.dispatch("mcp__fx__add_tool", { name: "t2" })).toBe("added t2");
    await waitFor(() => registry.has("mcp__fx__t2"), 1000, "mcp__fx__t2");
    expect(Date.now() - started).toBeLessThan(1000);
    expect(registry.generation).toBeGreaterThan(generation);
    expect(await registry.dispatch("mcp__fx__t2", {})).toBe("t2 ok");
    expect([...registry.toolsets.resolve("fx").tools]).toContain("mcp__fx__t2");

    await registry.dispatch("mcp__fx__remove_tool", { name: "t1" });
    await waitFor(() => !registry.has("mcp__fx__t1"), 1000, "mcp__fx__t1 removed");
    expect(registry.has("mcp__fx__t2")).toBe(true);
  });

  it("a call in flight while the list is refreshed completes normally", async () => {
    const { registry } = await discover({ fx: fixtureServer(["--dynamic", "--tools=sleep"], { supportsParallelToolCalls: true }) });
    const slow = registry.dispatch("mcp__fx__sleep", { ms: 700 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await registry.dispatch("mcp__fx__add_tool", { name: "t3" });
    await waitFor(() => registry.has("mcp__fx__t3"), 1000, "mcp__fx__t3");
    expect(await slow).toBe("slept");
  });

  it("refresh(name) re-lists on demand", async () => {
    const { registry, handle } = await discover({ fx: fixtureServer(["--extra=2"]) });
    registry.deregister("mcp__fx__t1");
    await handle.refresh("fx");
    expect(registry.has("mcp__fx__t1")).toBe(true);
    await expect(handle.refresh("nope")).rejects.toThrow(/No started MCP server named "nope"/);
  });
});

describe("crash and reconnect", () => {
  it("a killed child is respawned; the next call succeeds on the new process", async () => {
    const { registry, handle } = await discover({ fx: fixtureServer(["--tools=pid"]) }, { timings: { backoffBaseMs: 100 } });
    const first = Number(await registry.dispatch("mcp__fx__pid", {}));
    expect(handle.servers[0]!.pid).toBe(first);
    process.kill(first, "SIGKILL");
    await waitFor(() => handle.servers[0]!.state !== "ready", 2000, "the loss to be seen");
    const second = Number(await registry.dispatch("mcp__fx__pid", {}));
    expect(second).toBeGreaterThan(0);
    expect(second).not.toBe(first);
    expect(handle.servers[0]!.state).toBe("ready");
  });

  it("a call during a reconnect that does not finish in time gets 'transport is down; reconnect requested'", async () => {
    const { registry } = await discover({ fx: fixtureServer(["--tools=pid"]) }, { timings: { backoffBaseMs: 2000, sessionWaitMs: 100 } });
    const pid = Number(await registry.dispatch("mcp__fx__pid", {}));
    process.kill(pid, "SIGKILL");
    await waitFor(() => !pidAlive(pid), 2000, "the child to die");
    await new Promise((resolve) => setTimeout(resolve, 50));
    const answer = JSON.parse(await registry.dispatch("mcp__fx__pid", {})) as { error: string };
    expect(answer.error).toBe("MCP server 'fx' transport is down; reconnect requested. Do NOT retry this tool immediately — give it a few seconds to come back.");
  });

  it("reconnects with backoff 1, 2, 4, 8, 16 s, parks after 5 failures with tools removed, and a probe re-registers them", async () => {
    const dir = tempDir();
    const up = path.join(dir, "up");
    const spawns = path.join(dir, "spawns");
    writeFileSync(up, "");
    const clock = new ManualClock();
    const { registry, handle } = await discover(
      { fx: fixtureServer(["--tools=echo,pid", `--require-file=${up}`, `--spawn-file=${spawns}`]) },
      { clock, timings: { keepaliveMs: 0 } },
    );
    expect(registry.has("mcp__fx__echo")).toBe(true);
    rmSync(up);
    process.kill(handle.servers[0]!.pid!, "SIGKILL");
    await waitFor(() => handle.servers[0]!.state === "reconnecting", 2000, "reconnecting");
    expect(registry.has("mcp__fx__echo")).toBe(true); // kept while it may come back
    for (const delay of [1000, 2000, 4000, 8000, 16000]) await clock.fire(delay);
    await waitFor(() => handle.servers[0]!.state === "parked", 3000, "parked");
    expect(registry.has("mcp__fx__echo")).toBe(false);
    expect(registry.toolsets.has("fx")).toBe(false);
    expect(handle.servers[0]!.lastError).toMatch(/endpoint down|closed/);
    expect(lines(spawns)).toHaveLength(1); // the require-file check exits before the spawn line

    writeFileSync(up, "");
    await clock.fire(300_000); // the parked probe
    await waitFor(() => handle.servers[0]!.state === "ready", 3000, "ready again");
    expect(registry.has("mcp__fx__echo")).toBe(true);
    expect([...registry.toolsets.resolve("fx").tools].sort()).toEqual(["mcp__fx__echo", "mcp__fx__pid"]);
    expect(await registry.dispatch("mcp__fx__echo", { text: "back" })).toBe("back");
  });
});

describe("initial connect", () => {
  it("an endpoint down at start: 3 retries after 1, 2, 4 s, parked; reconnect() brings the tools back", async () => {
    const dir = tempDir();
    const up = path.join(dir, "up");
    const clock = new ManualClock();
    const { registry, handle } = await discover({ fx: fixtureServer([`--require-file=${up}`]) }, { clock, connectWaitMs: 0, timings: { keepaliveMs: 0 } });
    for (const delay of [1000, 2000, 4000]) await clock.fire(delay);
    await handle.settled();
    expect(handle.servers[0]).toMatchObject({ state: "parked", toolCount: 0 });
    expect(handle.servers[0]!.lastError).toBeDefined();
    expect(registry.size).toBe(0);
    expect(clock.pending()).toEqual([300_000]);

    writeFileSync(up, "");
    await handle.reconnect("fx");
    expect(handle.servers[0]).toMatchObject({ state: "ready", toolCount: 1 });
    expect(await registry.dispatch("mcp__fx__echo", { text: "hi" })).toBe("hi");
    expect(clock.pending()).toEqual([]);
  });
});
