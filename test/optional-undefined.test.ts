/**
 * Under `exactOptionalPropertyTypes` (a common strict setting), a consumer must be able to pass
 * `T | undefined` to the optional fields of the public options, and the runtime must treat an
 * explicit `undefined` exactly like an absent field (never letting it override a default).
 */
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

import { ToolRegistry, createMemoryLogger, executeToolCalls, getToolDefinitions, handleFunctionCallDetailed } from "../src/index.js";

const root = path.resolve(import.meta.dirname, "..");

describe("optional fields accept undefined", () => {
  it("the public option types take T | undefined with exactOptionalPropertyTypes: true", () => {
    const parsed = ts.getParsedCommandLineOfConfigFile(path.join(root, "tsconfig.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!;
    const file = path.join(root, "test/fixtures/optional-undefined/consumer.ts");
    const program = ts.createProgram([file], { ...parsed.options, exactOptionalPropertyTypes: true, noEmit: true });
    const diagnostics = ts.getPreEmitDiagnostics(program, program.getSourceFile(file));
    const text = diagnostics.map((d) => `${d.start === undefined ? "" : `${(d.file?.getLineAndCharacterOfPosition(d.start).line ?? -1) + 1}: `}${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
    expect(text).toEqual([]);
  }, 120_000);

  it("explicit undefined behaves like an absent field at run time", async () => {
    const logger = createMemoryLogger();
    const registry = new ToolRegistry({ logger, maxResultChars: undefined, maxErrorChars: undefined, defaultTimeoutMs: undefined, availability: { ttlMs: undefined, graceMs: undefined, now: undefined }, agentLoopTools: undefined, allowPluginOverride: undefined });
    expect(registry.maxResultChars).toBe(100_000);
    expect(registry.maxErrorChars).toBe(2_000);
    expect(registry.defaultTimeoutMs).toBe(0);
    expect(registry.isAgentLoopTool("todo")).toBe(true);
    const entry = registry.register({
      name: "echo",
      description: "echo",
      parameters: { type: "object", properties: { q: { type: "string" } } },
      handler: (_session, args) => `got ${String(args.q)}`,
      schema: undefined,
      toolset: undefined,
      category: undefined,
      checkFn: undefined,
      requiresEnv: undefined,
      emoji: undefined,
      override: undefined,
      maxResultChars: undefined,
      timeoutMs: undefined,
      parallelSafe: undefined,
      patchSchema: undefined,
      source: undefined,
    });
    expect(entry).toMatchObject({ toolset: "echo", category: "echo", emoji: "🔧", parallelSafe: false, requiresEnv: [], source: { kind: "user" } });
    const mibyan = registry.register({ name: "m", schema: { name: undefined, description: "m", parameters: undefined }, parameters: undefined, description: undefined, handler: () => "m ran" });
    expect(mibyan?.description).toBe("m");

    const options = { registry, signal: undefined, sessionId: undefined, taskId: undefined, toolCallId: undefined, session: undefined, allowedTools: undefined, timeoutMs: undefined, agentLoop: undefined };
    expect((await handleFunctionCallDetailed("echo", '{"q":"x"}', options)).content).toBe("got x");
    const outcomes = await executeToolCalls([{ id: undefined, name: "m", arguments: undefined }], { ...options, maxConcurrency: undefined });
    expect(outcomes[0]).toMatchObject({ content: "m ran", isError: false });
    const definitions = getToolDefinitions({ registry, enabledToolsets: undefined, disabledToolsets: undefined, format: undefined, quiet: undefined, unknownToolsets: undefined });
    expect(definitions.map((d) => d.function.name)).toEqual(["echo", "m"]);
    expect(logger.messages.filter((m) => m.level !== "debug")).toEqual([]);
  });

  it("an explicit type: undefined in parameters does not erase the implied object type", async () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    const entry = registry.register({ name: "t", description: "t", parameters: { type: undefined, properties: { q: { type: "string" } } }, handler: () => "ran" });
    expect(entry?.schema.parameters).toEqual({ type: "object", properties: { q: { type: "string" } } });
    expect(Object.keys(entry!.schema.parameters)[0]).toBe("type");
    expect(await registry.dispatch("t", { q: "x" })).toBe("ran");
  });
});
