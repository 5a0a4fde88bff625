/**
 * What the CLI's commands do once their arguments are parsed, shared by the commander program
 * (program.ts) and the fast path that runs the most frequent command lines without loading
 * commander (fast-path.ts). Every command module is imported when its command runs, so one
 * command loads only what it needs (`check` never loads the registry, the config or the tools).
 */
import type { BootOptions, Runtime } from "./boot.js";

/** Config, registry and tool discovery, for the commands that need them. */
export async function boot(options?: BootOptions): Promise<Runtime> {
  return (await import("./boot.js")).boot(options);
}

/** Runs `command` on a booted runtime and always closes it (MCP server processes, plugins) afterwards. */
export async function withRuntime<T>(options: BootOptions, command: (runtime: Runtime) => Promise<T> | T): Promise<T> {
  const runtime = await boot(options);
  try {
    return await command(runtime);
  } finally {
    await runtime.close();
  }
}

/** `mibyan tools [--json]`. */
export async function toolsAction(options: { json?: boolean; plan?: boolean; context?: number }): Promise<void> {
  if (options.plan === true) return toolsPlanAction(options);
  const [runtime, commands] = await Promise.all([boot({ mcp: true }), import("./commands/tools.js")]);
  try {
    const toolsets = commands.collectToolStatus(runtime);
    const sandbox = await commands.collectSandboxStatus();
    // The MCP report module only when servers are configured: `tools` start-up is measured without them.
    const mcpCommands = runtime.mcp !== undefined ? await import("./commands/mcp.js") : undefined;
    const mcp = mcpCommands?.mcpServerReports(runtime) ?? [];
    if (options.json) {
      const json = toolsets.map(({ tools, ...toolset }) => ({
        ...toolset,
        tools: tools.map(({ name, available, reason }) => ({ name, available, reason })),
      }));
      process.stdout.write(`${JSON.stringify({ toolsets: json, sandbox, mcpServers: mcp }, null, 2)}\n`);
    } else {
      // Whether local commands run in the OS sandbox, and why not when it is configured but cannot work.
      process.stdout.write(commands.renderToolStatus(toolsets) + commands.renderSandboxStatus(sandbox) + (mcpCommands?.renderMcpServers(mcp) ?? ""));
    }
  } finally {
    await runtime.close();
  }
}

/** `mibyan tools --plan [--context N] [--json]`: tool search's plan (docs/tool-search.md). */
async function toolsPlanAction(options: { json?: boolean; context?: number }): Promise<void> {
  const [runtime, commands] = await Promise.all([boot({ mcp: true }), import("./commands/tools.js")]);
  try {
    const report = await commands.collectToolPlan(runtime, options.context);
    process.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : commands.renderToolPlan(report));
  } finally {
    await runtime.close();
  }
}

/** `mibyan call TOOL [JSON]`: sets the exit status. */
export async function callAction(tool: string, rawArgs: string, options: { session?: string; task?: string }): Promise<void> {
  // MCP servers start only for a tool the built-ins and plugins do not have: `call terminal` never waits for one.
  const [runtime, { runCallCommand }] = await Promise.all([boot({ mcp: (registry) => !registry.has(tool), mcpReadyWhen: (registry) => registry.has(tool) }), import("./commands/call.js")]);
  try {
    process.exitCode = await runCallCommand(runtime, tool, rawArgs, options);
  } finally {
    await runtime.close();
  }
}

/** `mibyan check COMMAND [--json]`: sets the exit status (the verdict). */
export async function checkAction(command: string, options: { json?: boolean }): Promise<void> {
  const { checkOne } = await import("./commands/check.js");
  process.exitCode = await checkOne(command, options.json === true);
}
