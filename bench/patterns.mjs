/**
 * What running schema patterns on the linear-time engine (re2js) costs, next
 * to the built-in RegExp in the same run:
 *
 * - dispatch of a tool whose schema has two `pattern`s (validated by Ajv on
 *   re2js), against dispatch of the same tool without the patterns whose
 *   handler runs the two patterns on the built-in RegExp — what validation on
 *   the built-in engine used to cost, with the same number of tests;
 * - Ajv's compiled validator alone, with re2js and with the built-in RegExp.
 */
import { createRequire } from "node:module";
import { Bench } from "tinybench";
import { reportedNsRow } from "./common.mjs";

const BATCH = 1000;
const DAY = "^\\d{4}-\\d{2}-\\d{2}$";
const SLUG = "^[a-z0-9_-]{1,64}$";

function schema(patterns) {
  return {
    type: "object",
    properties: {
      slug: { type: "string", ...(patterns ? { pattern: SLUG } : {}) },
      day: { type: "string", ...(patterns ? { pattern: DAY } : {}) },
      count: { type: "integer" },
    },
    required: ["slug", "day"],
    additionalProperties: false,
  };
}

export async function benchPatterns({ quick, note }) {
  note("schema patterns: dispatch and validation on re2js vs the built-in RegExp ...");
  const { ToolRegistry, createMemoryLogger } = await import("../dist/index.js");
  const { linearRegExp } = await import("../dist/schema/linear-regexp.js");
  const settings = quick ? { time: 150, warmupTime: 50 } : { time: 1500, warmupTime: 300 };
  const args = { slug: "my_tool-name", day: "2026-12-03", count: 3 };

  const registry = new ToolRegistry({ logger: createMemoryLogger() });
  registry.register({ name: "patterned", toolset: "bench", description: "patterns validated by Ajv on re2js", parameters: schema(true), handler: () => "ok" });
  const slug = new RegExp(SLUG, "u");
  const day = new RegExp(DAY, "u");
  registry.register({
    name: "builtin",
    toolset: "bench",
    description: "the same checks on the built-in RegExp",
    parameters: schema(false),
    handler: (_session, a) => (slug.test(a.slug) && day.test(a.day) ? "ok" : "bad"),
  });
  for (const name of ["patterned", "builtin"]) {
    const content = await registry.dispatch(name, args);
    if (content !== "ok") throw new Error(`pattern bench sanity check failed for ${name}: ${content}`);
  }

  const require = createRequire(import.meta.url);
  const Ajv = require("ajv").default;
  const options = { allErrors: true, strict: false, validateFormats: false, addUsedSchema: false };
  const onLinear = new Ajv({ ...options, code: { regExp: linearRegExp } }).compile(schema(true));
  const onBuiltin = new Ajv(options).compile(schema(true));
  if (!onLinear(args) || !onBuiltin(args) || onLinear({ ...args, day: "3 Dec" }) || onBuiltin({ ...args, day: "3 Dec" })) {
    throw new Error("pattern bench sanity check failed: the validators disagree");
  }

  const bench = new Bench(settings);
  bench
    .add("dispatch-re2js", async () => {
      for (let i = 0; i < BATCH; i++) await registry.dispatch("patterned", args);
    })
    .add("dispatch-builtin", async () => {
      for (let i = 0; i < BATCH; i++) await registry.dispatch("builtin", args);
    })
    .add("validate-re2js", () => {
      for (let i = 0; i < BATCH; i++) onLinear(args);
    })
    .add("validate-builtin", () => {
      for (let i = 0; i < BATCH; i++) onBuiltin(args);
    });
  await bench.run();
  const ns = (name) => {
    const result = bench.getTask(name)?.result;
    if (result?.latency === undefined) throw new Error(`benchmark task "${name}" did not complete`);
    return { ns: (result.latency.p50 * 1e6) / BATCH, samples: result.latency.samples?.length ?? 0 };
  };
  const rows = [];
  for (const [key, label, baselineLabel] of [
    ["dispatch", "dispatch, schema with 2 patterns (re2js)", "same calls, patterns on built-in RegExp"],
    ["validate", "Ajv validate, 2 patterns (re2js)", "Ajv validate on built-in RegExp"],
  ]) {
    const value = ns(`${key}-re2js`);
    const baseline = ns(`${key}-builtin`);
    rows.push(reportedNsRow({ name: `patterns.${key}`, label, value, baseline, baselineLabel }));
  }
  return rows;
}
