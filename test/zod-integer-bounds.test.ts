/**
 * zod's `.int()` writes the safe-integer range as bounds into its JSON Schema;
 * the model never sees them, in any export format. Bounds the user wrote stay.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";

import { EXPORT_FORMATS, ToolRegistry, createMemoryLogger, defineTool, getToolDefinitions } from "../src/index.js";

const SAFE = String(Number.MAX_SAFE_INTEGER);

function setup(): ToolRegistry {
  const registry = new ToolRegistry({ logger: createMemoryLogger() });
  registry.register(
    defineTool({
      name: "paged",
      description: "pages through rows",
      parameters: z.object({
        page: z.number().int(),
        size: z.number().int().min(0),
        limit: z.int().positive().max(10).nullable(),
        ids: z.array(z.int()),
        filter: z.object({ after: z.int().optional(), small: z.int32() }).optional(),
        ratio: z.number(),
      }),
      handler: () => "ok",
    }),
  );
  return registry;
}

describe("zod integer bounds in exported definitions", () => {
  it.each(EXPORT_FORMATS)("%s: no bound restates the safe-integer range", (format) => {
    const registry = setup();
    const text = JSON.stringify(getToolDefinitions({ registry, format }));
    expect(text).toContain('"paged"');
    expect(text).not.toContain(SAFE);
  });

  it("keeps the user's bounds: .min(0), .positive(), .max(10), z.int32()", () => {
    const registry = setup();
    const parameters = registry.get("paged")!.schema.parameters as { properties: Record<string, Record<string, unknown>> };
    const { page, size, limit, ids, filter } = parameters.properties;
    expect(page).toEqual({ type: "integer" });
    expect(size).toEqual({ type: "integer", minimum: 0 });
    expect(limit).toEqual({ anyOf: [{ type: "integer", exclusiveMinimum: 0, maximum: 10 }, { type: "null" }] });
    expect(ids).toEqual({ type: "array", items: { type: "integer" } });
    const nested = (filter as { properties: Record<string, unknown> }).properties;
    expect(nested.after).toEqual({ type: "integer" });
    expect(nested.small).toEqual({ type: "integer", minimum: -2147483648, maximum: 2147483647 });
    expect(JSON.stringify(registry.exportSchemas())).not.toContain(SAFE);
  });

  it("still validates as zod does: the dropped bounds were never the check", async () => {
    const registry = setup();
    const args = { page: 2, size: 0, limit: null, ids: [1], ratio: 0.5 };
    expect(await registry.dispatch("paged", args)).toBe("ok");
    expect((await registry.run("paged", { ...args, page: 2 ** 60 })).result.error?.kind).toBe("invalid_args");
    expect((await registry.run("paged", { ...args, size: -1 })).result.error?.kind).toBe("invalid_args");
  });

  it("a schema value named like a keyword is not touched: defaults and properties called minimum", () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    registry.register(
      defineTool({
        name: "odd",
        description: "odd names",
        parameters: z.object({ minimum: z.int(), range: z.object({ minimum: z.number() }).default({ minimum: -Number.MAX_SAFE_INTEGER }) }),
        handler: () => "ok",
      }),
    );
    const parameters = registry.get("odd")!.schema.parameters as { properties: Record<string, Record<string, unknown>> };
    expect(parameters.properties.minimum).toEqual({ type: "integer" });
    expect(parameters.properties.range!.default).toEqual({ minimum: -Number.MAX_SAFE_INTEGER });
  });
});
