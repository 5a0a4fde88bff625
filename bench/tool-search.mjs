/**
 * Tool search benchmarks for bench/run.mjs, each next to a baseline measured in the same run:
 *
 *   1. tool_search.query     `tool_search` over 2,000 deferred MCP-like tools (40 servers × 50 tools),
 *                            the whole answer the model gets (BM25 over the catalog, scope filter, top 5,
 *                            JSON). Median and p95 over 100 queries, each the median of 5 runs.
 *                            Baseline: a plain substring scan of all the same names and descriptions
 *                            for the query's words (every tool looked at, the first 5 containing them all
 *                            kept), per query: the cheapest search that looks at every tool.
 *   2. tool_search.assembly  `planToolDefinitions` over the same 2,000 tools plus the built-in-like
 *                            visible ones (decide, estimate tokens, assemble). Baseline: `getToolDefinitions`
 *                            alone, which the plan calls first.
 *
 * The queries are generated here by code that knows nothing of the index, with their own seed: 60
 * word pairs and 20 single words drawn from random tools' descriptions, and 20 made-up words no tool
 * uses (absent, which make the index fall back to its name scan). They were not used to tune the index.
 * The index rebuild after a registry change is reported beside row 1 (`rebuildMs`).
 *
 * Imports the build (`npm run bench` builds first). `node bench/tool-search.mjs [--quick]` runs it alone.
 */
import { pathToFileURL } from "node:url";
import { median, round, prng } from "./common.mjs";

const QUERY_TARGET_MS = 5;
const ASSEMBLY_TARGET_MS = 10;
const SERVERS = 40;
const PER_SERVER = 50;

const VERBS = ["create", "list", "get", "update", "delete", "search", "close", "merge", "export", "import", "sync", "archive"];
const NOUNS = ["issue", "ticket", "page", "file", "record", "invoice", "contact", "event", "channel", "message", "report", "build", "deployment", "dataset", "table", "query", "user", "team", "label", "comment"];
const FILLER = ["with", "the", "given", "filters", "optional", "fields", "returns", "paginated", "results", "workspace", "project", "account", "permission", "scope", "status", "owner", "date", "range", "limit", "cursor", "sorted", "by", "priority", "metadata", "attachments", "linked", "items"];

/** 2,000 tools: `mcp__s<k>__<verb>_<noun>_<n>`, a description of 12-30 words, 2-6 parameters. */
function buildTools(random) {
  const pick = (list) => list[Math.floor(random() * list.length)];
  const tools = [];
  for (let s = 0; s < SERVERS; s++) {
    for (let t = 0; t < PER_SERVER; t++) {
      const verb = pick(VERBS);
      const noun = pick(NOUNS);
      const name = `mcp__s${s}__${verb}_${noun}_${t}`;
      const words = [`${verb[0].toUpperCase()}${verb.slice(1)}`, "a", noun, "in", `service${s}`];
      const extra = 7 + Math.floor(random() * 19);
      for (let i = 0; i < extra; i++) words.push(random() < 0.3 ? pick(NOUNS) : pick(FILLER));
      const properties = {};
      const params = 2 + Math.floor(random() * 5);
      for (let i = 0; i < params; i++) properties[`${pick(FILLER)}_${pick(NOUNS)}`] = { type: "string", description: `The ${pick(FILLER)} ${pick(NOUNS)}.` };
      tools.push({ server: `s${s}`, name, description: `${words.join(" ")}.`, properties });
    }
  }
  return tools;
}

/** Queries from the tools' own text, by a generator that knows nothing of the index. */
function buildQueries(tools, random) {
  const queries = [];
  const wordsOf = (tool) => tool.description.toLowerCase().replace(/[^a-z0-9 ]/g, "").split(" ").filter((w) => w.length > 2);
  for (let i = 0; i < 60; i++) {
    const words = wordsOf(tools[Math.floor(random() * tools.length)]);
    const a = words[Math.floor(random() * words.length)];
    const b = words[Math.floor(random() * words.length)];
    queries.push(`${a} ${b}`);
  }
  for (let i = 0; i < 20; i++) {
    const words = wordsOf(tools[Math.floor(random() * tools.length)]);
    queries.push(words[Math.floor(random() * words.length)]);
  }
  const letters = "qxzjvw";
  for (let i = 0; i < 20; i++) {
    let word = "";
    for (let j = 0; j < 7; j++) word += letters[Math.floor(random() * letters.length)];
    queries.push(word);
  }
  return queries;
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function timeEach(queries, run, repeats) {
  return queries.map((query) => {
    const times = [];
    for (let r = 0; r < repeats; r++) {
      const t0 = performance.now();
      run(query);
      times.push(performance.now() - t0);
    }
    return median(times);
  });
}

export async function benchToolSearch({ quick, note }) {
  note("tool search: 2,000 deferred tools, tool_search per query and assembly ...");
  const { ToolRegistry, createMemoryLogger, planToolDefinitions, getToolDefinitions } = await import("../dist/index.js");
  const registry = new ToolRegistry({ logger: createMemoryLogger() });
  const tools = buildTools(prng(77));
  for (const tool of tools) {
    registry.register({
      name: tool.name,
      toolset: `mcp-${tool.server}`,
      source: { kind: "mcp", server: tool.server },
      schema: { name: tool.name, description: tool.description, parameters: { type: "object", properties: tool.properties } },
      handler: () => "ok",
    });
  }
  for (const name of ["read_file", "write_file", "terminal", "search_files", "patch"]) {
    registry.register({ name, toolset: "core", schema: { name, description: `${name} (visible)`, parameters: { type: "object", properties: {} } }, handler: () => "ok" });
  }
  const queries = buildQueries(tools, prng(4242));
  const repeats = quick ? 3 : 5;

  // Assembly first (the plan the queries then run against).
  const rounds = quick ? 10 : 40;
  for (let i = 0; i < 3; i++) planToolDefinitions({ registry, toolSearch: { enabled: "on" } });
  const planMs = [];
  const listMs = [];
  for (let i = 0; i < rounds; i++) {
    let t0 = performance.now();
    getToolDefinitions({ registry });
    listMs.push(performance.now() - t0);
    t0 = performance.now();
    planToolDefinitions({ registry, toolSearch: { enabled: "on" } });
    planMs.push(performance.now() - t0);
  }
  const plan = planToolDefinitions({ registry, toolSearch: { enabled: "on" } });
  if (plan.deferred.length !== SERVERS * PER_SERVER) throw new Error(`expected ${SERVERS * PER_SERVER} deferred tools, got ${plan.deferred.length}`);
  const bridge = plan.bridge;

  // The index is built on the first search after a change; measure that apart.
  const rebuilds = [];
  for (let i = 0; i < (quick ? 3 : 7); i++) {
    registry.register({ name: "mcp__s0__bump", toolset: "mcp-s0", source: { kind: "mcp", server: "s0" }, schema: { name: "mcp__s0__bump", description: "bump", parameters: { type: "object", properties: {} } }, handler: () => "ok" });
    registry.deregister("mcp__s0__bump");
    const t0 = performance.now();
    bridge.search({ query: "warm" });
    rebuilds.push(performance.now() - t0);
  }

  const search = (query) => bridge.search({ query }).content;
  const haystack = tools.map((tool) => `${tool.name} ${tool.description}`.toLowerCase());
  const scan = (query) => {
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    const out = [];
    // Every tool is looked at (a search must count what it could return), the first 5 kept.
    let total = 0;
    for (let i = 0; i < haystack.length; i++) {
      if (!words.every((w) => haystack[i].includes(w))) continue;
      total++;
      if (out.length < 5) out.push(tools[i].name);
    }
    return JSON.stringify({ total, out });
  };
  for (let i = 0; i < 3; i++) for (const q of queries) (search(q), scan(q));
  let found = 0;
  for (const q of queries) if (JSON.parse(search(q)).matches.length > 0) found++;
  const searchMs = timeEach(queries, search, repeats);
  const scanMs = timeEach(queries, scan, repeats);
  const searchMedian = median(searchMs);
  const searchP95 = percentile(searchMs, 95);
  const scanMedian = median(scanMs);
  const planMedian = median(planMs);
  const listMedian = median(listMs);
  return [
    {
      name: "tool_search.query",
      label: `tool_search over ${plan.deferred.length.toLocaleString("en-US")} deferred tools (median; p95 ${round(searchP95, 2)} ms)`,
      value: round(searchMedian, 3),
      unit: "ms",
      baseline: round(scanMedian, 3),
      baselineLabel: "substring scan of names and descriptions",
      ratio: round(searchMedian / scanMedian, 2),
      p95: round(searchP95, 3),
      baselineP95: round(percentile(scanMs, 95), 3),
      rebuildMs: round(median(rebuilds), 2),
      queries: queries.length,
      queriesWithResults: found,
      samples: queries.length * repeats,
      target: QUERY_TARGET_MS,
      targetOn: "value",
      targetText: `≤ ${QUERY_TARGET_MS} ms per query (median and p95)`,
      met: searchMedian <= QUERY_TARGET_MS && searchP95 <= QUERY_TARGET_MS,
    },
    {
      name: "tool_search.assembly",
      label: `planToolDefinitions over ${(registry.size).toLocaleString("en-US")} tools (p95 ${round(percentile(planMs, 95), 2)} ms)`,
      value: round(planMedian, 2),
      unit: "ms",
      baseline: round(listMedian, 2),
      baselineLabel: "getToolDefinitions alone",
      ratio: round(planMedian / listMedian, 2),
      p95: round(percentile(planMs, 95), 2),
      samples: rounds,
      target: ASSEMBLY_TARGET_MS,
      targetOn: "value",
      targetText: `≤ ${ASSEMBLY_TARGET_MS} ms per assembly`,
      met: planMedian <= ASSEMBLY_TARGET_MS,
    },
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const rows = await benchToolSearch({ quick: process.argv.includes("--quick"), note: (m) => process.stderr.write(`${m}\n`) });
  for (const row of rows) process.stdout.write(`${JSON.stringify(row)}\n`);
}
