/**
 * What plugins cost a tool call, against plain dispatch of the same tool in the same run:
 *
 * - `plugins.noToolHooks`: a plugin is loaded that registers no tool-call hook (only `on_session_start`);
 *   nothing is installed on the registry, so this must match plain dispatch (ratio ~1.0);
 * - `plugins.hooks`: one plugin with a synchronous `pre_tool_call` hook (no directive) and a
 *   `post_tool_call` observer: the bridge's pre- and post-hook, the event objects and rendering the
 *   result text for the observer.
 *
 * Plugins are real folders in a temporary profile home, loaded by `loadPlugins` from the build.
 * `node bench/plugins.mjs [--quick]` runs it alone.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Bench } from "tinybench";
import { reportedNsRow } from "./common.mjs";

const BATCH = 1000;

function pluginHome(body) {
  const home = mkdtempSync(path.join(tmpdir(), "mibyan-bench-plugins-"));
  const dir = path.join(home, "plugins", "bench");
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "plugin.yaml"), "name: bench\n");
  writeFileSync(path.join(dir, "index.js"), `export function register(ctx) {\n${body}\n}\n`);
  writeFileSync(path.join(home, "config.yaml"), "plugins:\n  enabled: [bench]\n");
  return home;
}

export async function benchPlugins({ quick, note }) {
  note("plugins: dispatch with a loaded plugin (no tool hooks / a pre and a post hook) vs plain dispatch ...");
  const { ToolRegistry, createMemoryLogger } = await import("../dist/index.js");
  const { loadPlugins } = await import("../dist/plugins/index.js");
  const settings = quick ? { time: 150, warmupTime: 50 } : { time: 1500, warmupTime: 300 };
  const tool = { name: "trivial", toolset: "bench", schema: { description: "trivial", parameters: { type: "object", properties: { a: { type: "string" } } } }, handler: () => "ok" };
  const registries = {};
  const managers = [];
  const homes = [];
  for (const [key, body] of [
    ["plain", undefined],
    ["noToolHooks", `ctx.registerHook("on_session_start", () => undefined);`],
    ["hooks", `ctx.registerHook("pre_tool_call", () => undefined);\nctx.registerHook("post_tool_call", () => undefined);`],
  ]) {
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    registry.register(tool);
    if (body !== undefined) {
      const home = pluginHome(body);
      homes.push(home);
      const manager = await loadPlugins({ registry, home, cwd: home, env: { PATH: process.env.PATH }, logger: createMemoryLogger() });
      if (manager.plugins[0]?.state !== "enabled") throw new Error(`plugins bench: the plugin did not load: ${manager.plugins[0]?.error}`);
      managers.push(manager);
    }
    if ((await registry.dispatch("trivial", { a: "x" })) !== "ok") throw new Error("plugins bench sanity check failed");
    registries[key] = registry;
  }
  const args = { a: "x" };
  const bench = new Bench(settings);
  // Plain dispatch is measured first and last, and the baseline is their mean: tinybench runs tasks one
  // after another, and a later task measured slower on this machine whatever it ran.
  for (const [task, key] of [["plain", "plain"], ["noToolHooks", "noToolHooks"], ["hooks", "hooks"], ["plainAgain", "plain"]]) {
    bench.add(task, async () => {
      for (let i = 0; i < BATCH; i++) await registries[key].dispatch("trivial", args);
    });
  }
  try {
    await bench.run();
  } finally {
    for (const manager of managers) await manager.close();
    for (const home of homes) rmSync(home, { recursive: true, force: true });
  }
  const ns = (name) => {
    const result = bench.getTask(name)?.result;
    if (result?.latency === undefined) throw new Error(`benchmark task "${name}" did not complete`);
    return { ns: (result.latency.p50 * 1e6) / BATCH, samples: result.latency.samples?.length ?? 0 };
  };
  const first = ns("plain");
  const last = ns("plainAgain");
  const baseline = { ns: (first.ns + last.ns) / 2, samples: first.samples + last.samples };
  return [
    reportedNsRow({ name: "plugins.noToolHooks", label: "dispatch, a plugin loaded without tool-call hooks", value: ns("noToolHooks"), baseline, baselineLabel: "dispatch, no plugins" }),
    reportedNsRow({ name: "plugins.hooks", label: "dispatch, 1 pre_tool_call + 1 post_tool_call plugin hook", value: ns("hooks"), baseline, baselineLabel: "dispatch, no plugins" }),
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const rows = await benchPlugins({ quick: process.argv.includes("--quick"), note: (m) => process.stderr.write(`${m}\n`) });
  for (const row of rows) process.stdout.write(`${JSON.stringify(row)}\n`);
}
