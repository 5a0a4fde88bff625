/**
 * Models quote scalars ({"timeout": "30"}). Dispatch converts a top-level
 * string to the number, integer or boolean its parameter declares, for every
 * tool, when the call fails validation as sent; anything else is rejected
 * with a message that says what arrived.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";

import { BIN, cliEnv, spawnCollect } from "./support/cli-run.js";

import { ToolRegistry, createMemoryLogger, defineTool, handleFunctionCallDetailed } from "../src/index.js";
import { TERMINAL_SCHEMA, terminalHandler } from "../src/tools/terminal.js";

function setup(): { registry: ToolRegistry; seen: Record<string, unknown>[] } {
  const registry = new ToolRegistry({ logger: createMemoryLogger() });
  const seen: Record<string, unknown>[] = [];
  registry.register({
    name: "probe",
    toolset: "t",
    schema: {
      description: "records its arguments",
      parameters: {
        type: "object",
        properties: {
          count: { type: "integer", minimum: 0 },
          ratio: { type: "number" },
          flag: { type: "boolean" },
          label: { type: "string" },
          either: { type: ["integer", "string"] },
          maybe: { anyOf: [{ type: "integer" }, { type: "null" }] },
          nested: { type: "object", properties: { depth: { type: "integer" } } },
        },
        additionalProperties: false,
      },
    },
    handler: (args) => {
      seen.push(args);
      return "ok";
    },
  });
  return { registry, seen };
}

async function accepted(args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const { registry, seen } = setup();
  const outcome = await registry.run("probe", args);
  expect(outcome.result.error, JSON.stringify(args)).toBeUndefined();
  return seen[0]!;
}

async function rejected(args: Record<string, unknown>): Promise<string> {
  const { registry, seen } = setup();
  const outcome = await registry.run("probe", args);
  expect(outcome.result.error?.kind, JSON.stringify(args)).toBe("invalid_args");
  expect(seen).toHaveLength(0);
  return outcome.result.error!.message;
}

describe("numeric and boolean strings for every tool", () => {
  it("converts integer strings, with surrounding spaces, a trailing .0 or an exponent", async () => {
    expect(await accepted({ count: "30" })).toEqual({ count: 30 });
    expect(await accepted({ count: " 30 " })).toEqual({ count: 30 });
    expect(await accepted({ count: "30.0" })).toEqual({ count: 30 });
    expect(await accepted({ count: "1e3" })).toEqual({ count: 1000 });
    expect(await accepted({ count: "+7" })).toEqual({ count: 7 });
  });

  it("converts number and boolean strings", async () => {
    expect(await accepted({ ratio: "30.5", flag: "true" })).toEqual({ ratio: 30.5, flag: true });
    expect(await accepted({ ratio: "-.5", flag: " FALSE " })).toEqual({ ratio: -0.5, flag: false });
    expect(await accepted({ maybe: "4" })).toEqual({ maybe: 4 });
  });

  it("rejects a decimal for an integer with a message that says so", async () => {
    expect(await rejected({ count: "30.5" })).toBe('Invalid arguments for probe: count: must be a whole number (type integer), got "30.5"');
    expect(await rejected({ count: 30.5 })).toBe("Invalid arguments for probe: count: must be of type integer, got the number 30.5");
  });

  it("rejects strings that do not spell a number, naming what arrived", async () => {
    expect(await rejected({ count: "abc" })).toBe('Invalid arguments for probe: count: must be of type integer, got the string "abc"');
    for (const text of ["", "  ", "0x10", "1_000", "Infinity", "NaN", "1e400", "30s", "9007199254740993"]) {
      expect(await rejected({ count: text }), text).toMatch(/count: must be of type integer, got the string/);
    }
    expect(await rejected({ flag: "yes" })).toBe('Invalid arguments for probe: flag: must be of type boolean, got the string "yes"');
    expect(await rejected({ ratio: "1".repeat(65) })).toMatch(/ratio: must be of type number, got the string "1{40}…"/);
  });

  it("the bound still applies after conversion", async () => {
    expect(await rejected({ count: "-3" })).toBe("Invalid arguments for probe: count: must be >= 0");
  });

  it("leaves alone parameters that accept a string, nested values, and calls that are valid as sent", async () => {
    expect(await accepted({ either: "30" })).toEqual({ either: "30" });
    expect(await accepted({ label: "30" })).toEqual({ label: "30" });
    expect(await rejected({ nested: { depth: "3" } })).toMatch(/nested\.depth: must be of type integer, got the string "3"/);
    const args = { count: 3, label: "x" };
    const { registry, seen } = setup();
    await registry.run("probe", args);
    expect(seen[0]).toBe(args);
  });

  it("works together with dropping OpenAI strict mode's nulls", async () => {
    expect(await accepted({ count: "2", label: null })).toEqual({ count: 2 });
  });

  it("applies to zod tools too: the converted value reaches zod", async () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    registry.register(
      defineTool({
        name: "zodded",
        description: "z",
        parameters: z.object({ n: z.number().int().min(1), on: z.boolean().optional() }),
        handler: (_session, { n, on }) => `${n * 2}:${String(on)}`,
      }),
    );
    expect(await registry.dispatch("zodded", { n: "21", on: "true" })).toBe("42:true");
    expect((await registry.run("zodded", { n: "2.5" })).result.error?.kind).toBe("invalid_args");
  });
});

describe("terminal's timeout as a string (real commands)", () => {
  function terminalRegistry(): ToolRegistry {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    registry.register({ name: "terminal", toolset: "terminal", schema: TERMINAL_SCHEMA, handler: terminalHandler });
    return registry;
  }

  it('runs with timeout "30" and " 30 "', async () => {
    const registry = terminalRegistry();
    for (const timeout of ["30", " 30 "]) {
      const outcome = await handleFunctionCallDetailed("terminal", { command: "echo ran", timeout }, { registry });
      expect(outcome.isError, timeout).toBe(false);
      expect(JSON.parse(outcome.content)).toMatchObject({ output: "ran\n", exit_code: 0, error: null });
    }
  });

  it('a string timeout is a real limit: timeout "1" kills sleep 5', async () => {
    const outcome = await handleFunctionCallDetailed("terminal", { command: "sleep 5", timeout: "1" }, { registry: terminalRegistry() });
    expect(JSON.parse(outcome.content)).toMatchObject({ status: "timeout" });
  });

  it('rejects "30.5" and "abc" with a clear error, and "1e3" (1000 s) with the foreground maximum advice', async () => {
    const registry = terminalRegistry();
    const half = await handleFunctionCallDetailed("terminal", { command: "echo no", timeout: "30.5" }, { registry });
    expect(half.isError).toBe(true);
    expect(JSON.parse(half.content).error).toBe('Invalid arguments for terminal: timeout: must be a whole number (type integer), got "30.5"');
    const abc = await handleFunctionCallDetailed("terminal", { command: "echo no", timeout: "abc" }, { registry });
    expect(JSON.parse(abc.content).error).toBe('Invalid arguments for terminal: timeout: must be of type integer, got the string "abc"');
    const big = JSON.parse((await handleFunctionCallDetailed("terminal", { command: "echo no", timeout: "1e3" }, { registry })).content);
    expect(big.error).toMatch(/timeout of 1000 seconds exceeds the maximum of 600 seconds for a foreground command/);
    expect(big.output).toBe("");
  });
});

describe("mibyan call with a quoted timeout (the built CLI)", () => {
  it('runs terminal with timeout "30" and refuses "30.5" with exit 1', async () => {
    const base = mkdtempSync(join(tmpdir(), "mibyan-coerce-cli-"));
    try {
      mkdirSync(join(base, "home"));
      mkdirSync(join(base, "user"));
      const env = cliEnv(join(base, "home"), join(base, "user"));
      const good = await spawnCollect(process.execPath, [BIN, "call", "terminal", '{"command":"echo quoted","timeout":"30"}'], { env, cwd: base });
      expect(good.status, good.stderr).toBe(0);
      expect(JSON.parse(good.stdout)).toMatchObject({ output: "quoted\n", exit_code: 0 });
      const bad = await spawnCollect(process.execPath, [BIN, "call", "terminal", '{"command":"echo no","timeout":"30.5"}'], { env, cwd: base });
      expect(bad.status).toBe(1);
      expect(JSON.parse(bad.stdout).error).toBe('Invalid arguments for terminal: timeout: must be a whole number (type integer), got "30.5"');
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});
