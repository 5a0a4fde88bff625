/**
 * What the MCP client costs, against the SDK used directly in the same run, on the stdio test server
 * (test/fixtures/mcp/server.mjs):
 *
 * - `mcp.call`: one `registry.dispatch("mcp__b__echo")` (breaker, session, RPC slot, result conversion,
 *   the dispatch pipeline) against `client.callTool` on an SDK client of its own to the same kind of
 *   server. Target ≤ 1.2× (issue 12). `mcp.call.sameChild`: the same against an SDK client whose server
 *   runs in a process group of its own as mibyan's do (mibyan's stdio transport under the SDK's client),
 *   which separates what mibyan's call path adds from what the process group costs; that cost alone is
 *   `mcp.stdio.processGroup` (reported, no target).
 * - `mcp.discover3`: `discoverMcpTools` with 3 stdio servers (spawn, initialize, list, register) against
 *   connecting 3 SDK clients concurrently and listing their tools. Target ≤ 1.5×.
 * - `mcp.cliTools3`: what 3 configured stdio servers add to `mibyan tools --json` (a whole CLI process,
 *   `node bin/mibyan.js`, config.yaml naming 3 servers minus the same with an empty config.yaml),
 *   against the same baseline as `mcp.discover3` (3 SDK clients connect + listTools, in this warm
 *   process), all three measured in the same interleaved rounds. Target ≤ 1.5× (issue 12).
 *
 * Samples alternate between the two sides (the machine is shared and drifts). Imports the build.
 * `node bench/mcp.mjs [--quick] [--runs N]` runs it alone; `--cli-only` runs only `mcp.cliTools3`, and
 * `--cli PATH` times another build's bin/mibyan.js there; `--compare PATH` times another build's in the
 * same rounds too (row `mcp.cliTools3.compare`: a before/after on a machine whose load drifts).
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { median, round } from "./common.mjs";

const FIXTURE = fileURLToPath(new URL("../test/fixtures/mcp/server.mjs", import.meta.url));
const CLI = fileURLToPath(new URL("../bin/mibyan.js", import.meta.url));
const CALLS_PER_SAMPLE = 50;

function row({ name, label, value, baseline, baselineLabel, unit, target, samples }) {
  const ratio = value / baseline;
  if (target === undefined) {
    return { name, label, value: round(value, 0), unit, baseline: round(baseline, 0), baselineLabel, ratio: round(ratio, 2), samples, target: null, targetOn: null, targetText: "(reported)", met: true };
  }
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

/**
 * An SDK client to the fixture server over mibyan's stdio transport, which starts the server in a process
 * group (and session) of its own so closing ends its whole tree and a terminal's Ctrl-C does not reach it:
 * the same child as mibyan's, without mibyan's call path.
 */
async function sdkProcessGroupClient() {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { ProcessGroupStdioTransport } = await import("../dist/mcp/client/stdio-transport.js");
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(new ProcessGroupStdioTransport({ command: process.execPath, args: [FIXTURE], env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" } }));
  return client;
}

/** An SDK client (the SDK's own stdio transport) to the fixture server: the baseline of the start-up rows. */
async function sdkFixtureClient() {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [FIXTURE] }));
  return client;
}

export async function benchMcp({ quick, note, runs: runsOverride }) {
  note("mcp: dispatch of an MCP tool vs the SDK client's callTool; discovery of 3 stdio servers vs 3 SDK connects ...");
  const { ToolRegistry, createMemoryLogger } = await import("../dist/index.js");
  const { discoverMcpTools } = await import("../dist/mcp/client/index.js");
  const entry = { command: process.execPath, args: [FIXTURE] };
  const sdkClient = sdkFixtureClient;
  const rows = [];

  // Per-call overhead.
  const registry = new ToolRegistry({ logger: createMemoryLogger() });
  const handle = await discoverMcpTools({ registry, config: { b: entry }, logger: createMemoryLogger() });
  const direct = await sdkClient();
  const grouped = await sdkProcessGroupClient();
  try {
    if ((await registry.dispatch("mcp__b__echo", { text: "x" })) !== "x") throw new Error("mcp bench sanity check failed");
    const samples = quick ? 10 : 60;
    const ours = [];
    const sdk = [];
    const sdkGroup = [];
    const time = async (fn) => {
      const started = performance.now();
      for (let c = 0; c < CALLS_PER_SAMPLE; c++) await fn();
      return (performance.now() - started) / CALLS_PER_SAMPLE;
    };
    const request = { name: "echo", arguments: { text: "x" } };
    const sides = [
      [ours, () => registry.dispatch("mcp__b__echo", { text: "x" })],
      [sdk, () => direct.callTool(request)],
      [sdkGroup, () => grouped.callTool(request)],
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
        baselineLabel: "SDK client.callTool, the SDK's stdio transport",
        unit: "µs",
        target: 1.2,
        samples,
      }),
      row({
        name: "mcp.call.sameChild",
        label: "registry.dispatch of an MCP stdio tool (µs per call)",
        value: median(ours) * 1000,
        baseline: median(sdkGroup) * 1000,
        baselineLabel: "SDK client.callTool, a server in its own process group like ours",
        unit: "µs",
        target: 1.2,
        samples,
      }),
      row({
        name: "mcp.stdio.processGroup",
        label: "SDK client.callTool to a server in its own process group (µs per call)",
        value: median(sdkGroup) * 1000,
        baseline: median(sdk) * 1000,
        baselineLabel: "SDK client.callTool, the SDK's stdio transport",
        unit: "µs",
        samples,
      }),
    );
  } finally {
    await handle.close();
    await direct.close();
    await grouped.close();
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

  rows.push(...(await benchCliTools3({ quick, runs: runsOverride })));
  return rows;
}

/** Runs `node bin/mibyan.js tools --json` in `env`; resolves with the wall time and the parsed output. */
function timeCliTools(env, cli = CLI) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [cli, "tools", "--json"], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (text) => (stdout += text));
    child.stderr.setEncoding("utf8").on("data", (text) => (stderr += text));
    child.on("error", reject);
    child.on("close", (code) => {
      const elapsed = performance.now() - started;
      if (code !== 0) reject(new Error(`mibyan tools --json exited with ${code}: ${stderr.trim()}`));
      else resolve({ elapsed, output: JSON.parse(stdout) });
    });
  });
}

/**
 * `mcp.cliTools3`: a CLI process with 3 stdio servers against one with none; the difference against
 * 3 SDK clients connecting and listing in this (warm) process. Each round runs the three sides in a
 * rotating order, so load on the shared machine hits them alike.
 */
export async function benchCliTools3({ quick, runs: runsOverride, cli = CLI, compare }) {
  const sdkClient = sdkFixtureClient;
  const scratch = mkdtempSync(path.join(tmpdir(), "mibyan-bench-mcp-cli-"));
  try {
    // Each build gets homes of its own, so the two never share (and thrash) a discovery scan cache.
    const homes = { none: path.join(scratch, "none"), three: path.join(scratch, "three"), noneB: path.join(scratch, "noneB"), threeB: path.join(scratch, "threeB") };
    const server = `    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(FIXTURE)}]\n`;
    for (const [name, home] of Object.entries(homes)) {
      mkdirSync(home, { recursive: true });
      writeFileSync(path.join(home, "config.yaml"), name.startsWith("none") ? "{}\n" : `mcp_servers:\n${["a", "b", "c"].map((id) => `  ${id}:\n${server}`).join("")}`);
    }
    const envFor = (home) => {
      const env = { ...process.env, MIBYAN_HOME: home, MIBYAN_PROCESS_ROOT: path.join(scratch, "proc") };
      delete env.NODE_OPTIONS; // npm may set it; the figure is for a plain `node`
      delete env.MIBYAN_SAFE_MODE;
      return env;
    };
    mkdirSync(path.join(scratch, "proc"), { recursive: true, mode: 0o700 });
    // Sanity, and the first runs write the discovery scan cache (as for any user after the first command).
    const first = await timeCliTools(envFor(homes.three), cli);
    const states = (first.output.mcpServers ?? []).map((s) => s.state);
    if (states.length !== 3 || states.some((state) => state !== "ready")) throw new Error(`mcp bench: mibyan tools saw servers ${JSON.stringify(first.output.mcpServers)}`);
    await timeCliTools(envFor(homes.none), cli);

    const sdk3 = async () => {
      const started = performance.now();
      const clients = await Promise.all([sdkClient(), sdkClient(), sdkClient()]);
      await Promise.all(clients.map((c) => c.listTools()));
      const elapsed = performance.now() - started;
      await Promise.all(clients.map((c) => c.close()));
      return { elapsed };
    };
    const sides = [
      ["none", () => timeCliTools(envFor(homes.none), cli)],
      ["three", () => timeCliTools(envFor(homes.three), cli)],
      ["sdk", sdk3],
    ];
    // `compare`: another build's CLI timed in the same rounds (a before/after on a drifting machine).
    if (compare !== undefined) {
      await timeCliTools(envFor(homes.threeB), compare);
      await timeCliTools(envFor(homes.noneB), compare);
      sides.push(["noneB", () => timeCliTools(envFor(homes.noneB), compare)], ["threeB", () => timeCliTools(envFor(homes.threeB), compare)]);
    }
    const runs = runsOverride ?? (quick ? 3 : 10);
    const samples = { none: [], three: [], sdk: [], noneB: [], threeB: [] };
    for (let i = 0; i < runs + 1; i++) {
      for (let k = 0; k < sides.length; k++) {
        const [name, fn] = sides[(i + k) % sides.length];
        const { elapsed } = await fn();
        if (i >= 1) samples[name].push(elapsed);
      }
    }
    const cliRow = (name, none, three, which) =>
      row({
        name,
        label: `mibyan tools --json${which}: 3 stdio servers minus none (ms added; none ${round(median(none), 0)} ms, three ${round(median(three), 0)} ms)`,
        value: median(three) - median(none),
        baseline: median(samples.sdk),
        baselineLabel: "3 SDK clients connect + listTools (warm process, same rounds)",
        unit: "ms",
        target: 1.5,
        samples: runs,
      });
    const rows = [cliRow("mcp.cliTools3", samples.none, samples.three, "")];
    if (compare !== undefined) rows.push(cliRow("mcp.cliTools3.compare", samples.noneB, samples.threeB, ` (${compare})`));
    return rows;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const args = process.argv.slice(2);
  const runsAt = args.indexOf("--runs");
  const cliAt = args.indexOf("--cli");
  const compareAt = args.indexOf("--compare");
  const options = {
    quick: args.includes("--quick"),
    runs: runsAt === -1 ? undefined : Number(args[runsAt + 1]),
    cli: cliAt === -1 ? undefined : path.resolve(args[cliAt + 1]),
    compare: compareAt === -1 ? undefined : path.resolve(args[compareAt + 1]),
    note: (m) => process.stderr.write(`${m}\n`),
  };
  const rows = args.includes("--cli-only") ? await benchCliTools3(options) : await benchMcp(options);
  for (const r of rows) process.stdout.write(`${JSON.stringify(r)}\n`);
}
