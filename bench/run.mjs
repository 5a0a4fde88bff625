#!/usr/bin/env node
/**
 * mibyan-tools benchmark harness.
 *
 *   npm run bench                 build, then run every benchmark (~2-3 min), print a table
 *   npm run bench -- --json       one JSON object per line instead of the table
 *   npm run bench -- --quick      short run (~25 s; for smoke tests, figures are rough)
 *
 * Every figure is a MEDIAN and is reported next to a baseline measured in the
 * same run (the machine is assumed noisy and shared), so the ratios are the
 * numbers to compare across machines. Targets are reported, never enforced:
 * the exit code is 0 whether or not a target is met; misses are marked.
 *
 * Imports the built package (`../dist/index.js`): `npm run bench` builds first.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Bench } from "tinybench";

let api;
try {
  api = await import("../dist/index.js");
} catch (thrown) {
  process.stderr.write(`bench: cannot import ../dist/index.js (run \`npm run build\` first, or use \`npm run bench\`): ${thrown?.message ?? thrown}\n`);
  process.exit(2);
}
const { ToolRegistry, createMemoryLogger, getToolDefinitions, detect, initShellParser } = api;
const { DANGEROUS_REGEXES, regexDetect } = await import("./regex-baseline.mjs");
const { benchTerminal } = await import("./terminal.mjs");
const { benchProcesses } = await import("./processes.mjs");
const { benchPatterns } = await import("./patterns.mjs");
const { benchResults } = await import("./results.mjs");
const { benchPlugins } = await import("./plugins.mjs");
const { benchMcp } = await import("./mcp.mjs");
const { benchIntegrations } = await import("./integrations.mjs");
const { benchMcpServer } = await import("./mcp-server.mjs");
const { benchCliStartup } = await import("./cli-startup.mjs");
const { benchSessions } = await import("./sessions.mjs");
const { benchToolSearch } = await import("./tool-search.mjs");
const { benchAgentLoop } = await import("./agent-loop.mjs");
const { median, round } = await import("./common.mjs");

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const CLI = path.join(ROOT, "bin", "mibyan.js");

const args = new Set(process.argv.slice(2));
for (const arg of args) {
  if (arg !== "--json" && arg !== "--quick") {
    process.stderr.write(`bench: unknown option ${arg} (known: --json, --quick)\n`);
    process.exit(2);
  }
}
const JSON_OUTPUT = args.has("--json");
const QUICK = args.has("--quick");

const SETTINGS = QUICK
  ? { time: 150, warmupTime: 50, spawnRuns: 3, spawnWarmups: 1 }
  : { time: 1500, warmupTime: 300, spawnRuns: 15, spawnWarmups: 2 };

/** Calls per benchmarked function in the dispatch benchmarks (tinybench's per-sample overhead is ~100 ns). */
const BATCH = 1000;

const TARGETS = {
  dispatchOverheadNs: 1000,
  definitionsMs: 0.2,
  coldStartRatio: 3,
  detectionUs: 40,
};

const results = [];

function note(message) {
  if (!JSON_OUTPUT) process.stderr.write(`${message}\n`);
}

/** Median latency of a tinybench task in ms; throws when the task errored. */
function medianMs(bench, name) {
  const task = bench.getTask(name);
  const result = task?.result;
  if (result === undefined || (result.state !== "completed" && result.state !== "aborted-with-statistics")) {
    const error = result?.error;
    throw new Error(`benchmark task "${name}" did not complete (${result?.state ?? "missing"})${error ? `: ${error.stack ?? error}` : ""}`);
  }
  return { p50: result.latency.p50, samples: result.latency.samples?.length ?? task.runs, rme: result.latency.rme };
}

// ---------------------------------------------------------------------------
// 1. dispatch
// ---------------------------------------------------------------------------

async function benchDispatch() {
  note("dispatch: 1 trivial tool, 1 pre-hook, 1 post-hook ...");
  const registry = new ToolRegistry({ logger: createMemoryLogger() });
  const handler = (a) => (a.c ? "ok" : "ok!");
  registry.register({
    name: "trivial",
    toolset: "bench",
    schema: {
      description: "A trivial tool for benchmarking dispatch overhead.",
      parameters: {
        type: "object",
        properties: {
          a: { type: "string", description: "a string" },
          b: { type: "integer", description: "an integer" },
          c: { type: "boolean", description: "a flag" },
        },
        required: ["a", "b"],
        additionalProperties: false,
      },
    },
    handler,
  });
  registry.addPreHook(function benchPre() {
    return undefined;
  });
  registry.addPostHook(function benchPost() {
    return undefined;
  });

  const argsObject = { a: "hello", b: 42, c: true };
  const argsJson = JSON.stringify(argsObject);

  // Sanity: both paths must reach the handler (a validation failure would be an error string).
  for (const input of [argsObject, argsJson]) {
    const content = await registry.dispatch("trivial", input);
    if (content !== "ok") throw new Error(`dispatch sanity check failed: got ${JSON.stringify(content)}`);
  }

  const bench = new Bench({ time: SETTINGS.time, warmupTime: SETTINGS.warmupTime });
  bench
    .add("direct", async () => {
      for (let i = 0; i < BATCH; i++) await handler(argsObject);
    })
    .add("dispatch", async () => {
      for (let i = 0; i < BATCH; i++) await registry.dispatch("trivial", argsObject);
    })
    .add("direct+parse", async () => {
      for (let i = 0; i < BATCH; i++) await handler(JSON.parse(argsJson));
    })
    .add("dispatch(json)", async () => {
      for (let i = 0; i < BATCH; i++) await registry.dispatch("trivial", argsJson);
    });
  await bench.run();

  const perCallNs = (name) => {
    const { p50, samples } = medianMs(bench, name);
    return { ns: (p50 * 1e6) / BATCH, samples };
  };
  const direct = perCallNs("direct");
  const dispatch = perCallNs("dispatch");
  const directParse = perCallNs("direct+parse");
  const dispatchJson = perCallNs("dispatch(json)");

  const overhead = dispatch.ns - direct.ns;
  results.push({
    name: "dispatch.overhead",
    label: "dispatch overhead (args object)",
    value: round(overhead, 0),
    unit: "ns",
    baseline: round(direct.ns, 1),
    baselineLabel: "await handler(args)",
    ratio: round(dispatch.ns / direct.ns, 2),
    median: round(dispatch.ns, 0),
    samples: dispatch.samples,
    target: TARGETS.dispatchOverheadNs,
    targetOn: "value",
    targetText: "≤ 1 µs/call",
    met: overhead <= TARGETS.dispatchOverheadNs,
  });
  const overheadJson = dispatchJson.ns - directParse.ns;
  results.push({
    name: "dispatch.json.overhead",
    label: "dispatch overhead (args JSON string)",
    value: round(overheadJson, 0),
    unit: "ns",
    baseline: round(directParse.ns, 1),
    baselineLabel: "await handler(JSON.parse(args))",
    ratio: round(dispatchJson.ns / directParse.ns, 2),
    median: round(dispatchJson.ns, 0),
    samples: dispatchJson.samples,
    target: TARGETS.dispatchOverheadNs,
    targetOn: "value",
    targetText: "≤ 1 µs/call",
    met: overheadJson <= TARGETS.dispatchOverheadNs,
  });
}

// ---------------------------------------------------------------------------
// 2. getToolDefinitions
// ---------------------------------------------------------------------------

async function benchDefinitions() {
  note("getToolDefinitions: 1,000 tools, 20 toolsets, 10 checks ...");
  const TOOLS = 1000;
  const TOOLSETS = 20;
  const CHECKS = 10;
  const registry = new ToolRegistry({ logger: createMemoryLogger() });
  const checks = Array.from({ length: CHECKS }, (_, i) => {
    const check = () => true;
    Object.defineProperty(check, "name", { value: `check${i}` });
    return check;
  });
  const toolsetName = (t) => `bench_set_${String(t).padStart(2, "0")}`;
  const tools = [];
  for (let i = 0; i < TOOLS; i++) {
    const t = i % TOOLSETS;
    const name = `bench_tool_${String(i).padStart(4, "0")}`;
    const schema = {
      name,
      description: `Benchmark tool number ${i}, in toolset ${toolsetName(t)}.`,
      parameters: {
        type: "object",
        properties: { query: { type: "string", description: "what to look for" }, limit: { type: "integer" } },
        required: ["query"],
      },
    };
    tools.push({ name, toolset: toolsetName(t), schema });
    registry.register({ name, toolset: toolsetName(t), checkFn: checks[t % CHECKS], schema, handler: () => "ok" });
  }
  const enabled = [0, 4, 8, 12, 16].map(toolsetName);
  const enabledSet = new Set(enabled);
  const enabledTools = tools.filter((t) => enabledSet.has(t.toolset));

  const all = getToolDefinitions({ registry, quiet: true });
  const some = getToolDefinitions({ registry, quiet: true, enabledToolsets: enabled });
  if (all.length !== TOOLS || some.length !== enabledTools.length) {
    throw new Error(`getToolDefinitions sanity check failed: ${all.length} and ${some.length} definitions`);
  }

  let sink = 0;
  const bench = new Bench({ time: SETTINGS.time, warmupTime: SETTINGS.warmupTime });
  bench
    .add("baseline(1000)", () => {
      sink += tools.map((t) => ({ type: "function", function: t.schema })).length;
    })
    .add("all", () => {
      sink += getToolDefinitions({ registry, quiet: true }).length;
    })
    .add("baseline(250)", () => {
      sink += enabledTools.map((t) => ({ type: "function", function: t.schema })).length;
    })
    .add("enabled5", () => {
      sink += getToolDefinitions({ registry, quiet: true, enabledToolsets: enabled }).length;
    });
  await bench.run();
  if (sink === 0) throw new Error("unreachable");

  const base1000 = medianMs(bench, "baseline(1000)");
  const allRun = medianMs(bench, "all");
  const base250 = medianMs(bench, "baseline(250)");
  const someRun = medianMs(bench, "enabled5");
  results.push({
    name: "getToolDefinitions.all",
    label: "getToolDefinitions, all 1,000 tools",
    value: round(allRun.p50, 4),
    unit: "ms",
    baseline: round(base1000.p50, 4),
    baselineLabel: "tools.map(...) over 1,000",
    ratio: round(allRun.p50 / base1000.p50, 2),
    samples: allRun.samples,
    target: TARGETS.definitionsMs,
    targetOn: "value",
    targetText: "≤ 0.2 ms",
    met: allRun.p50 <= TARGETS.definitionsMs,
  });
  results.push({
    name: "getToolDefinitions.enabled5",
    label: `getToolDefinitions, 5 of 20 toolsets (${enabledTools.length} tools)`,
    value: round(someRun.p50, 4),
    unit: "ms",
    baseline: round(base250.p50, 4),
    baselineLabel: `tools.map(...) over ${enabledTools.length}`,
    ratio: round(someRun.p50 / base250.p50, 2),
    samples: someRun.samples,
    target: TARGETS.definitionsMs,
    targetOn: "value",
    targetText: "≤ 0.2 ms",
    met: someRun.p50 <= TARGETS.definitionsMs,
  });
}

// ---------------------------------------------------------------------------
// 3. cold start
// ---------------------------------------------------------------------------

function timeSpawn(argv, env) {
  const start = performance.now();
  const child = spawnSync(process.execPath, argv, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });
  const elapsed = performance.now() - start;
  if (child.error !== undefined || child.status !== 0) {
    throw new Error(`spawn of node ${argv.join(" ")} failed (status ${child.status}): ${child.error ?? child.stderr}`);
  }
  return { elapsed, stdout: child.stdout };
}

function benchColdStart() {
  const runs = SETTINGS.spawnRuns;
  note(`cold start: node bin/mibyan.js tools --json vs node -e 0, ${runs} runs each ...`);
  const scratch = mkdtempSync(path.join(tmpdir(), "mibyan-bench-"));
  try {
    const baseEnv = { ...process.env };
    delete baseEnv.NODE_OPTIONS; // npm may set it; the figure is for a plain `node`
    const warmHome = path.join(scratch, "warm");
    const warmEnv = { ...baseEnv, MIBYAN_HOME: warmHome };
    const baselineArgv = ["-e", "0"];
    const cliArgv = [CLI, "tools", "--json"];

    // Warm the scan cache once, and check the command does what we think.
    const first = timeSpawn(cliArgv, warmEnv);
    const parsed = JSON.parse(first.stdout);
    if (!Array.isArray(parsed.toolsets)) throw new Error("mibyan tools --json printed no toolsets");

    let coldIndex = 0;
    const coldEnv = () => ({ ...baseEnv, MIBYAN_HOME: path.join(scratch, `cold-${coldIndex++}`) });

    for (let i = 0; i < SETTINGS.spawnWarmups; i++) {
      timeSpawn(baselineArgv, baseEnv);
      timeSpawn(cliArgv, warmEnv);
      timeSpawn(cliArgv, coldEnv());
    }
    const samples = { baseline: [], warm: [], cold: [] };
    const jobs = [
      ["baseline", () => timeSpawn(baselineArgv, baseEnv)],
      ["warm", () => timeSpawn(cliArgv, warmEnv)],
      ["cold", () => timeSpawn(cliArgv, coldEnv())],
    ];
    for (let i = 0; i < runs; i++) {
      // Interleaved, rotating the order so no kind always runs first.
      for (let j = 0; j < jobs.length; j++) {
        const [kind, job] = jobs[(i + j) % jobs.length];
        samples[kind].push(job().elapsed);
      }
    }
    const baseline = median(samples.baseline);
    const warm = median(samples.warm);
    const cold = median(samples.cold);
    results.push({
      name: "coldStart.tools",
      label: "mibyan tools --json (scan cache warm)",
      value: round(warm, 1),
      unit: "ms",
      baseline: round(baseline, 1),
      baselineLabel: "node -e 0",
      ratio: round(warm / baseline, 2),
      samples: runs,
      target: TARGETS.coldStartRatio,
      targetOn: "ratio",
      targetText: "≤ 3× node -e 0",
      met: warm / baseline <= TARGETS.coldStartRatio,
    });
    results.push({
      name: "coldStart.tools.noCache",
      label: "mibyan tools --json (fresh MIBYAN_HOME)",
      value: round(cold, 1),
      unit: "ms",
      baseline: round(baseline, 1),
      baselineLabel: "node -e 0",
      ratio: round(cold / baseline, 2),
      samples: runs,
      target: TARGETS.coldStartRatio,
      targetOn: "ratio",
      targetText: "≤ 3× node -e 0",
      met: cold / baseline <= TARGETS.coldStartRatio,
    });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------
// 4. dangerous-command detection
// ---------------------------------------------------------------------------

/** A typical benign agent command of 80 characters. */
const BENIGN_80 = "cd packages/web && npm run build -- --mode production 2>&1 | tail -n 40 > bb.log";

/** About 2 KB of compound command: pipes, lists, substitutions, a heredoc, loops. */
function compound2k() {
  const parts = [
    "set -euo pipefail",
    'for f in $(git ls-files "*.ts" | head -n 50); do wc -l "$f"; done | sort -n | tail -n 5',
    "find . -name node_modules -prune -o -type f -name '*.log' -print | xargs -r grep -l ERROR || true",
    'docker ps --format "{{.Names}}" | grep -v postgres | while read -r name; do docker logs --tail 20 "$name"; done',
    "cat <<'EOF' > notes.md\n# Build notes\nrm -rf is mentioned here only as text\nEOF",
    'curl -fsSL https://example.com/api/status -H "Accept: application/json" | jq -r .status',
    "python3 -c 'import json,sys; print(json.load(open(\"package.json\"))[\"version\"])'",
    'tar -czf "backup-$(date +%Y%m%d).tar.gz" src docs && ls -la *.tar.gz',
    "git log --oneline -n 20 | awk '{print $1}' | xargs -n1 git show --stat | grep -c insert",
    "rm -rf ./dist ./coverage && npm ci && npm test -- --reporter=dot",
  ];
  let text = parts.join(" && ");
  while (text.length < 2048) text += ` && echo step-${text.length} | tee -a progress.log`;
  return text;
}

async function benchDetection() {
  note(`command detection: 80-char benign and 2 KB compound, vs ${DANGEROUS_REGEXES.length} regexes ...`);
  await initShellParser();
  const big = compound2k();
  if (BENIGN_80.length !== 80) throw new Error(`BENIGN_80 is ${BENIGN_80.length} characters, not 80`);
  const benign = detect(BENIGN_80);
  if (benign.dangerous) throw new Error(`detection sanity check failed: ${JSON.stringify(benign.matches)}`);
  if (!detect(big).dangerous) throw new Error("detection sanity check failed: the 2 KB compound has an rm -rf");

  const bench = new Bench({ time: SETTINGS.time, warmupTime: SETTINGS.warmupTime });
  bench
    // { cache: false }: measure the analysis itself, not the cache of recent results.
    .add("detect-80", () => detect(BENIGN_80, { cache: false }))
    .add("regex-80", () => regexDetect(BENIGN_80))
    .add("detect-2k", () => detect(big, { cache: false }))
    .add("regex-2k", () => regexDetect(big));
  await bench.run();
  const us = (name) => medianMs(bench, name).p50 * 1000;
  for (const [key, label, command, target] of [
    ["80", "detection, 80-char benign command", BENIGN_80, TARGETS.detectionUs],
    ["2k", `detection, ${big.length}-char compound command`, big, undefined],
  ]) {
    const value = us(`detect-${key}`);
    const baseline = us(`regex-${key}`);
    results.push({
      name: `detection.${key}`,
      label,
      value: round(value, 1),
      unit: "µs",
      baseline: round(baseline, 2),
      baselineLabel: `${DANGEROUS_REGEXES.length} regexes over the text`,
      ratio: round(value / baseline, 2),
      samples: medianMs(bench, `detect-${key}`).samples,
      chars: command.length,
      target: target ?? null,
      targetOn: target === undefined ? null : "value",
      targetText: target === undefined ? "(reported)" : `≤ ${target} µs`,
      met: target === undefined ? true : value <= target,
    });
  }
}

// ---------------------------------------------------------------------------
// output
// ---------------------------------------------------------------------------

function formatValue(value, unit) {
  if (unit === "ns") return `${value.toLocaleString("en-US")} ns`;
  if (unit === "µs") return `${value} µs`;
  if (unit === "ms") return value < 1 ? `${value.toFixed(4)} ms` : `${value.toFixed(1)} ms`;
  return `${value} ${unit}`;
}

function printTable() {
  const rows = results.map((r) => [
    r.label,
    formatValue(r.value, r.unit),
    `${formatValue(r.baseline, r.unit)}  (${r.baselineLabel})`,
    `${r.ratio.toFixed(2)}×`,
    r.targetText,
    r.met ? "ok" : "MISS",
  ]);
  const header = ["benchmark (medians)", "value", "baseline", "ratio", "target", ""];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells) => cells.map((cell, i) => cell.padEnd(widths[i])).join("  ").trimEnd();
  const out = [line(header), widths.map((w) => "-".repeat(w)).join("  ")];
  for (const row of rows) out.push(line(row));
  const misses = results.filter((r) => !r.met);
  out.push("");
  out.push(
    `node ${process.version}, ${QUICK ? "--quick run (rough figures)" : "full run"}; dispatch figures are per call (median of ${BATCH}-call batches ÷ ${BATCH});` +
      ` dispatch overhead = median(dispatch) − median(baseline); ratio = median ÷ baseline median.`,
  );
  out.push(misses.length === 0 ? "All targets met." : `Targets missed: ${misses.map((r) => r.name).join(", ")} (reported only; exit code is 0).`);
  process.stdout.write(`${out.join("\n")}\n`);
}

function printJson() {
  for (const r of results) {
    const { label: _label, baselineLabel: _baselineLabel, targetText: _targetText, ...rest } = r;
    process.stdout.write(`${JSON.stringify({ ...rest, baselineOf: r.baselineLabel, quick: QUICK })}\n`);
  }
}

const started = performance.now();
await benchDispatch();
await benchDefinitions();
benchColdStart();
await benchDetection();
// 5. terminal: overhead, throughput and memory, concurrency (bench/terminal.mjs)
results.push(...(await benchTerminal({ quick: QUICK, note })));
// 6. processes: background processes started and reaped, receipt writes (bench/processes.mjs)
results.push(...(await benchProcesses({ quick: QUICK, note })));
// 7. schema patterns: validation on re2js vs the built-in RegExp (bench/patterns.mjs)
results.push(...(await benchPatterns({ quick: QUICK, note })));
// 7b. results: dispatch of an object result, checked for serialisability (bench/results.mjs)
results.push(...(await benchResults({ quick: QUICK, note })));
// 7c. plugins: dispatch with a loaded plugin, without and with tool-call hooks (bench/plugins.mjs)
results.push(...(await benchPlugins({ quick: QUICK, note })));
// 7d. mcp: an MCP tool call and discovery of 3 stdio servers, against the SDK used directly (bench/mcp.mjs)
results.push(...(await benchMcp({ quick: QUICK, note })));
// 7f. integrations: a call through the AI SDK and OpenAI Agents adapters vs handleFunctionCall (bench/integrations.mjs)
results.push(...(await benchIntegrations({ quick: QUICK, note })));
// 7e. mcp server: a tools/call through mibyan mcp serve (stdio) against the SDK's minimal server (bench/mcp-server.mjs)
results.push(...(await benchMcpServer({ quick: QUICK, note })));
// 7g. sessions: 100,000 messages persisted and session_search over them, against bare better-sqlite3 / FTS5 (bench/sessions.mjs)
results.push(...(await benchSessions({ quick: QUICK, note })));
// 7i. tool search: tool_search over 2,000 deferred tools and the plan's assembly, against a substring scan / getToolDefinitions (bench/tool-search.mjs)
results.push(...(await benchToolSearch({ quick: QUICK, note })));
// 7h. agent loop: runAgent's turn over a local endpoint vs the same turn by hand (bench/agent-loop.mjs)
results.push(...(await benchAgentLoop({ quick: QUICK, note })));
// 8. CLI start-up: check, call and tools --json against node -e 0 (bench/cli-startup.mjs)
results.push(...(await benchCliStartup({ quick: QUICK, note })));
note(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
if (JSON_OUTPUT) printJson();
else printTable();
