/**
 * What `mibyan mcp serve` adds to an MCP round trip (issue 13), against the SDK's own minimal stdio server
 * (test/fixtures/mcp-server/sdk-minimal.mjs) in the same run:
 *
 * - `mcpServer.call`: one `tools/call` of a trivial `echo` tool from an SDK client over stdio. On the mibyan
 *   side the tool is a plugin's (a real profile home with config.yaml enabling it), served by the built CLI
 *   (`node bin/mibyan.js mcp serve --tools echo`), so the call goes through everything a served call does:
 *   the allowed-tools check, the elicitation scope, `handleFunctionCall` (validation, hooks, redaction) and
 *   the result mapping. Target ≤ 1.3× (issue 13).
 *
 * Samples of 50 calls alternate between the two servers (the machine is shared and drifts).
 * `node bench/mcp-server.mjs [--quick]` runs it alone and prints the row as JSON.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { median, round } from "./common.mjs";

const MINIMAL = fileURLToPath(new URL("../test/fixtures/mcp-server/sdk-minimal.mjs", import.meta.url));
const CLI = fileURLToPath(new URL("../bin/mibyan.js", import.meta.url));
const CALLS_PER_SAMPLE = 50;
const TARGET = 1.3;

function echoPluginHome() {
  const home = mkdtempSync(path.join(tmpdir(), "mibyan-bench-mcp-server-"));
  mkdirSync(path.join(home, "plugins", "echo"), { recursive: true });
  writeFileSync(path.join(home, "plugins", "echo", "plugin.yaml"), "name: echo\n");
  writeFileSync(
    path.join(home, "plugins", "echo", "index.js"),
    `export function register(ctx) {
  ctx.registerTool({ name: "echo", toolset: "echo", schema: { description: "Echo the text back.", parameters: { type: "object", properties: { text: { type: "string" } } } }, handler: (args) => "echo: " + args.text });
}
`,
  );
  writeFileSync(path.join(home, "config.yaml"), "plugins:\n  enabled: [echo]\n");
  return home;
}

async function stdioClient(args, env) {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args, env, stderr: "ignore" }));
  return client;
}

/** Nanoseconds per call over one sample of CALLS_PER_SAMPLE sequential calls. */
async function sample(client) {
  const started = process.hrtime.bigint();
  for (let i = 0; i < CALLS_PER_SAMPLE; i++) {
    const result = await client.callTool({ name: "echo", arguments: { text: "x" } });
    if (result.content?.[0]?.text !== "echo: x") throw new Error(`unexpected result ${JSON.stringify(result)}`);
  }
  return Number(process.hrtime.bigint() - started) / CALLS_PER_SAMPLE;
}

export async function benchMcpServer({ quick, note }) {
  note("mcp server: a tools/call through mibyan mcp serve (stdio) vs the SDK's minimal server ...");
  const home = echoPluginHome();
  const env = { ...process.env, MIBYAN_HOME: home, HOME: home };
  delete env.NODE_OPTIONS;
  const sdk = await stdioClient([MINIMAL], env);
  const mibyan = await stdioClient([CLI, "mcp", "serve", "--tools", "echo"], env);
  try {
    const samples = quick ? 20 : 120;
    for (let i = 0; i < (quick ? 4 : 20); i++) {
      await sample(sdk);
      await sample(mibyan);
    }
    const ours = [];
    const base = [];
    for (let i = 0; i < samples; i++) {
      if (i % 2 === 0) {
        base.push(await sample(sdk));
        ours.push(await sample(mibyan));
      } else {
        ours.push(await sample(mibyan));
        base.push(await sample(sdk));
      }
    }
    const value = median(ours);
    const baseline = median(base);
    return [
      {
        name: "mcpServer.call",
        label: "MCP tools/call via mibyan mcp serve (stdio)",
        value: round(value, 0),
        unit: "ns",
        baseline: round(baseline, 0),
        baselineLabel: "the SDK's minimal stdio server",
        ratio: round(value / baseline, 2),
        samples,
        target: TARGET,
        targetOn: "ratio",
        targetText: `≤ ${TARGET}×`,
        met: value / baseline <= TARGET,
      },
    ];
  } finally {
    await Promise.all([sdk.close(), mibyan.close()]);
    rmSync(home, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const rows = await benchMcpServer({ quick: process.argv.includes("--quick"), note: (text) => process.stderr.write(`${text}\n`) });
  for (const row of rows) process.stdout.write(`${JSON.stringify(row)}\n`);
}
