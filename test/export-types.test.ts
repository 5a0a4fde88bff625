/**
 * docs/providers.md: the per-format converters and isExportFormat are exported, and
 * getToolDefinitions/exportTools are typed by `format`, so each SDK takes the result without a cast.
 * The type side is checked by compiling a consumer file with the TypeScript compiler
 * (test/fixtures/export-types/consumer.ts) against the package's source and openai's own types.
 */
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import * as pkg from "../src/index.js";

const root = path.resolve(import.meta.dirname, "..");

describe("provider export: public converters and typed formats", () => {
  it("exports each format's converter and isExportFormat", () => {
    const schema = { name: "search", description: "Search", parameters: { type: "object", properties: { q: { type: "string" } } } };
    expect(pkg.toOpenAI(schema)).toEqual({ type: "function", function: schema });
    expect(pkg.toResponses(schema)).toMatchObject({ type: "function", name: "search", strict: false });
    expect(pkg.toAnthropic(schema)).toMatchObject({ name: "search", input_schema: { type: "object" } });
    expect(pkg.toGemini(schema)).toMatchObject({ name: "search" });
    expect(pkg.toOpenAIStrict(schema)).toMatchObject({ type: "function", function: { name: "search", strict: true } });
    expect(pkg.toRaw({ schema, category: "web", toolset: "web" })).toMatchObject({ name: "search", toolset: "web" });
    expect(pkg.isExportFormat("anthropic")).toBe(true);
    expect(pkg.isExportFormat("claude")).toBe(false);
  });

  it("types getToolDefinitions and exportTools by format, assignable to openai's ChatCompletionTool and Responses FunctionTool", () => {
    const parsed = ts.getParsedCommandLineOfConfigFile(path.join(root, "tsconfig.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!;
    const file = path.join(root, "test/fixtures/export-types/consumer.ts");
    const program = ts.createProgram([file], { ...parsed.options, noEmit: true });
    const diagnostics = ts.getPreEmitDiagnostics(program, program.getSourceFile(file));
    const text = diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    expect(text).toEqual([]);
  }, 120_000);
});
