/**
 * A model turn's tool calls are whatever the model (or a provider SDK's
 * parse of its output) produced. Any shape must come back as an error result
 * in its place, never as a thrown TypeError that loses the other calls.
 */
import { describe, expect, it } from "vitest";
import { ToolRegistry, createMemoryLogger, executeToolCalls, handleFunctionCall } from "../src/index.js";
import { MAX_ARGUMENT_CHARS } from "../src/dispatch/arguments.js";

function makeRegistry() {
  const registry = new ToolRegistry({ logger: createMemoryLogger() });
  const seen: unknown[] = [];
  registry.register({
    name: "echo",
    toolset: "t",
    description: "echo q",
    parameters: [{ name: "q", type: "string" }],
    parallelSafe: true,
    handler: (_session, args) => {
      seen.push(args.q);
      return `echo:${String(args.q).length}`;
    },
  });
  return { registry, seen };
}

const good = { id: "ok", name: "echo", arguments: '{"q":"hi"}' };

describe("executeToolCalls with malformed calls", () => {
  it("answers each malformed call with an error result in its place and runs the good ones", async () => {
    const { registry, seen } = makeRegistry();
    const malformed: unknown[] = [null, 5, "echo", [good], {}, { name: 5 }, { name: "" }, { id: 7, name: "x".repeat(1_000_000) }, undefined];
    const calls = [good, ...malformed.flatMap((call) => [call, good])];
    const outcomes = await executeToolCalls(calls as never, { registry });
    expect(outcomes).toHaveLength(calls.length);
    for (const [index, outcome] of outcomes.entries()) {
      if (index % 2 === 0) {
        expect(outcome).toMatchObject({ id: "ok", name: "echo", content: "echo:2", isError: false });
        continue;
      }
      expect(outcome.isError, `call #${index + 1}`).toBe(true);
      expect(outcome.result.error?.kind).toBe("invalid_args");
      expect(JSON.parse(outcome.content).error).toMatch(new RegExp(`^Malformed tool call #${index + 1}: `));
      expect(outcome.content.length).toBeLessThan(300);
      expect(outcome.name.length).toBeLessThanOrEqual(256);
    }
    expect(outcomes[1]!.content).toContain("expected an object with a name, got null");
    expect(outcomes[11]!.content).toContain("its name must be a non-empty string, got number");
    expect(outcomes[15]!.content).toContain("its name is 1000000 characters long");
    expect(outcomes[15]!.id).toBeUndefined();
    expect(seen).toEqual(Array(10).fill("hi"));
  });

  it("reports arguments that are neither a string nor an object as invalid arguments", async () => {
    const { registry, seen } = makeRegistry();
    const outcomes = await executeToolCalls(
      [7, true, [1, 2], "[1]", '"text"', "{not json"].map((args) => ({ name: "echo", arguments: args })) as never,
      { registry },
    );
    expect(outcomes.map((o) => o.result.error?.kind)).toEqual(Array(6).fill("invalid_args"));
    expect(outcomes.map((o) => JSON.parse(o.content).error as string)).toEqual([
      "Arguments for echo must be a JSON object, got a number",
      "Arguments for echo must be a JSON object, got a boolean",
      "Arguments for echo must be a JSON object, got an array",
      "Arguments for echo must be a JSON object, got an array",
      "Arguments for echo must be a JSON object, got a string",
      expect.stringContaining("Invalid JSON arguments for echo"),
    ]);
    expect(seen).toEqual([]);
  });

  it("refuses an arguments string over the limit without parsing it", async () => {
    const { registry, seen } = makeRegistry();
    const huge = JSON.stringify({ q: "y".repeat(MAX_ARGUMENT_CHARS) });
    const [outcome] = await executeToolCalls([{ name: "echo", arguments: huge }], { registry });
    expect(outcome!.result.error?.kind).toBe("invalid_args");
    expect(JSON.parse(outcome!.content).error).toBe(`Arguments for echo are ${huge.length} characters of JSON; the limit is ${MAX_ARGUMENT_CHARS}`);
    // The same limit holds on the other entry points.
    expect(JSON.parse(await handleFunctionCall("echo", huge, { registry })).error).toContain("characters of JSON; the limit is");
    expect(seen).toEqual([]);
    // Right at the limit it still runs.
    const fits = JSON.stringify({ q: "y".repeat(MAX_ARGUMENT_CHARS - 10) });
    expect((await executeToolCalls([{ name: "echo", arguments: fits }], { registry }))[0]!.isError).toBe(false);
  });

  it("rejects a list that is not an array with a TypeError saying so", async () => {
    const { registry } = makeRegistry();
    await expect(executeToolCalls(null as never, { registry })).rejects.toThrow(new TypeError("executeToolCalls takes an array of tool calls, got null"));
  });
});
