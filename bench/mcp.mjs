/**
 * What the MCP client costs, against the SDK used directly in the same run, on the stdio test server
 * (test/fixtures/mcp/server.mjs):
 *
 * - `mcp.call`: one `registry.dispatch("mcp__b__echo")` (breaker, session, RPC slot, result conversion,
 *   the dispatch pipeline) against `client.callTool` on an SDK client of its own to the same kind of
 *   server. Target ≤ 1.2× (issue 12). `mcp.call.sameOptions`: the same against `callTool` with the
 *   request options every MCP tool call carries (a signal; a progress handler, so progress can extend
 *   the deadline), which separates what those options cost in the SDK from what mibyan adds.
 * - `mcp.discover3`: `discoverMcpTools` with 3 stdio servers (spawn, initialize, list, register) against
 *   connecting 3 SDK clients concurrently and listing their tools. Target ≤ 1.5×.
 *
 * Samples alternate between the two sides (the machine is shared and drifts). Imports the build.
 * `node bench/mcp.mjs [--quick]` runs it alone.
 */
import { fileURLToPath, pathToFileURL } from "node:url";
import { median, round } from "./common.mjs";

const FIXTURE = fileURLToPath(new URL("../test/fixtures/mcp/server.mjs", import.meta.url));
const CALLS_PER_SAMPLE = 50;

function row({ name, label, value, baseline, baselineLabel, unit, target, samples }) {
  const ratio = value / baseline;
  return {
    name,
    label,
    value: round(value, unit === "ms" ? 1 : 0),
    unit,
    baseline: round(baseline, unit === "ms" ? 1 : 0),
    baselineLabel,
    ratio: round(ratio, 2),
    samples,
    target,
    targetOn: "ratio",
    targetText: `≤ ${target}×`,
    met: ratio <= target,
  };
}

export async function benchMcp({ quick, note }) {
  note("mcp: dispatch of an MCP tool vs the SDK client's callTool; discovery of 3 stdio servers vs 3 SDK connects ...");
  const { ToolRegistry, createMemoryLogger } = await import("../dist/index.js");
  const { discoverMcpTools } = await import("../dist/mcp/client/index.js");
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
  const entry = { command: process.execPath, args: [FIXTURE] };
  const sdkClient = async () => {
    const client = new Client({ name: "bench", version: "1" });
    await client.connect(new StdioClientTransport({ command: entry.command, args: entry.args }));
    return client;
  };
  const rows = [];

  // Per-call overhead.
  const registry = new ToolRegistry({ logger: createMemoryLogger() });
  const handle = await discoverMcpTools({ registry, config: { b: entry }, logger: createMemoryLogger() });
  const direct = await sdkClient();
  try {
    if ((await registry.dispatch("mcp__b__echo", { text: "x" })) !== "x") throw new Error("mcp bench sanity check failed");
    const samples = quick ? 10 : 60;
    const ours = [];
    const sdk = [];
    const sdkSame = [];
    // The options every MCP tool call carries (call.ts): a signal, and a progress handler, which makes the
    // SDK send a progress token so the server's progress can extend the deadline.
    const sameOptions = () => ({ timeout: 300_000, signal: new AbortController().signal, resetTimeoutOnProgress: true, maxTotalTimeout: 3_000_000, onprogress: () => undefined });
    const time = async (fn) => {
      const started = performance.now();
      for (let c = 0; c < CALLS_PER_SAMPLE; c++) await fn();
      return (performance.now() - started) / CALLS_PER_SAMPLE;
    };
    const sides = [
      [ours, () => registry.dispatch("mcp__b__echo", { text: "x" })],
      [sdk, () => direct.callTool({ name: "echo", arguments: { text: "x" } })],
      [sdkSame, () => direct.callTool({ name: "echo", arguments: { text: "x" } }, undefined, sameOptions())],
    ];
    // Both sides' code paths (and both servers) need a few thousand calls to reach their steady state.
    for (const [, fn] of sides) for (let c = 0; c < (quick ? 500 : 3000); c++) await fn();
    const WARMUP = 2;
    for (let i = 0; i < samples + WARMUP; i++) {
      // The order rotates: whichever side runs right after another's burst pays for the switch.
      for (let k = 0; k < sides.length; k++) {
        const [into, fn] = sides[(i + k) % sides.length];
        const perCall = await time(fn);
        if (i >= WARMUP) into.push(perCall);
      }
    }
    rows.push(
      row({
        name: "mcp.call",
        label: "registry.dispatch of an MCP stdio tool (µs per call)",
        value: median(ours) * 1000,
        baseline: median(sdk) * 1000,
        baselineLabel: "SDK client.callTool, same server",
        unit: "µs",
        target: 1.2,
        samples,
      }),
      row({
        name: "mcp.call.sameOptions",
        label: "registry.dispatch of an MCP stdio tool (µs per call)",
        value: median(ours) * 1000,
        baseline: median(sdkSame) * 1000,
        baselineLabel: "SDK client.callTool with a signal and progress, same server",
        unit: "µs",
        target: 1.2,
        samples,
      }),
    );
  } finally {
    await handle.close();
    await direct.close();
  }

  // Discovery of 3 servers.
  const runs = quick ? 3 : 10;
  const ours = [];
  const sdk = [];
  const config = { a: entry, b: entry, c: entry };
  for (let i = 0; i < runs + 1; i++) {
    let started = performance.now();
    const h = await discoverMcpTools({ registry: new ToolRegistry({ logger: createMemoryLogger() }), config, logger: createMemoryLogger() });
    const a = performance.now() - started;
    if (h.servers.some((s) => s.state !== "ready")) throw new Error("mcp bench: a server did not connect");
    await h.close();
    started = performance.now();
    const clients = await Promise.all([sdkClient(), sdkClient(), sdkClient()]);
    await Promise.all(clients.map((c) => c.listTools()));
    const b = performance.now() - started;
    await Promise.all(clients.map((c) => c.close()));
    if (i >= 1) {
      ours.push(a);
      sdk.push(b);
    }
  }
  rows.push(
    row({
      name: "mcp.discover3",
      label: "discoverMcpTools, 3 stdio servers (ms)",
      value: median(ours),
      baseline: median(sdk),
      baselineLabel: "3 SDK clients connect + listTools",
      unit: "ms",
      target: 1.5,
      samples: runs,
    }),
  );
  return rows;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const rows = await benchMcp({ quick: process.argv.includes("--quick"), note: (m) => process.stderr.write(`${m}\n`) });
  for (const r of rows) process.stdout.write(`${JSON.stringify(r)}\n`);
}
