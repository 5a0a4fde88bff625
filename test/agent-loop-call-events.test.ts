/**
 * executeToolCalls' per-call callbacks (onCallStart / onCallEnd), which the agent loop turns into
 * its activity events: every call reported once at its start and once when it settles, with its
 * index, its outcome and a real elapsed time; parallel-safe calls start before either ends; a
 * throwing callback changes nothing.
 */
import { setTimeout as sleep } from "node:timers/promises";

import { describe, expect, it } from "vitest";

import { ToolRegistry, createMemoryLogger, executeToolCalls } from "../src/index.js";

function registryWith(): ToolRegistry {
  const registry = new ToolRegistry({ logger: createMemoryLogger() });
  for (const [name, parallelSafe] of [["slow_read", true], ["slow_write", false]] as const) {
    registry.register({
      name,
      toolset: "t",
      parallelSafe,
      schema: { description: name, parameters: { type: "object", properties: { ms: { type: "integer" } } } },
      handler: async ({ ms }) => {
        await sleep(Number(ms));
        return `${name} done`;
      },
    });
  }
  return registry;
}

describe("executeToolCalls onCallStart / onCallEnd", () => {
  it("reports each call's start and end with its index, outcome and elapsed time; parallel calls overlap", async () => {
    const registry = registryWith();
    const log: string[] = [];
    const elapsed: number[] = [];
    const outcomes = await executeToolCalls(
      [
        { id: "a", name: "slow_read", arguments: { ms: 80 } },
        { id: "b", name: "slow_read", arguments: { ms: 80 } },
        { id: "c", name: "slow_write", arguments: { ms: 10 } },
        { id: "d", name: "nope", arguments: {} },
      ],
      {
        registry,
        onCallStart: (index, call) => log.push(`start ${index} ${call.name}`),
        onCallEnd: (index, outcome, ms) => {
          log.push(`end ${index} ${outcome.isError ? "error" : "ok"}`);
          elapsed[index] = ms;
        },
      },
    );
    expect(outcomes.map((o) => o.id)).toEqual(["a", "b", "c", "d"]);
    // Both reads start before either ends; the write starts after both ended.
    expect(log.slice(0, 2)).toEqual(["start 0 slow_read", "start 1 slow_read"]);
    expect(log.indexOf("start 2 slow_write")).toBeGreaterThan(log.indexOf("end 1 ok"));
    expect(log.indexOf("start 2 slow_write")).toBeGreaterThan(log.indexOf("end 0 ok"));
    expect(log).toContain("end 3 error");
    expect(log.filter((l) => l.startsWith("start"))).toHaveLength(4);
    expect(log.filter((l) => l.startsWith("end"))).toHaveLength(4);
    expect(elapsed[0]).toBeGreaterThanOrEqual(70);
    expect(elapsed[2]).toBeLessThan(elapsed[0]!);
  });

  it("a throwing callback changes nothing", async () => {
    const registry = registryWith();
    const outcomes = await executeToolCalls([{ id: "a", name: "slow_read", arguments: { ms: 1 } }], {
      registry,
      onCallStart: () => {
        throw new Error("ui broke");
      },
      onCallEnd: () => {
        throw new Error("ui broke again");
      },
    });
    expect(outcomes[0]).toMatchObject({ id: "a", content: "slow_read done", isError: false });
  });
});
