/**
 * What the CLI's commands do once their arguments are parsed, shared by the commander program
 * (program.ts) and the fast path that runs the most frequent command lines without loading
 * commander (fast-path.ts). Every command module is imported when its command runs, so one
 * command loads only what it needs (`check` never loads the registry, the config or the tools).
 */
import type { Runtime } from "./boot.js";

/** Config, registry and tool discovery, for the commands that need them. */
export async function boot(): Promise<Runtime> {
  return (await import("./boot.js")).boot();
}

/** `mibyan tools [--json]`. */
export async function toolsAction(options: { json?: boolean }): Promise<void> {
  const [runtime, { collectToolStatus, renderToolStatus, collectSandboxStatus, renderSandboxStatus }] = await Promise.all([boot(), import("./commands/tools.js")]);
  const toolsets = collectToolStatus(runtime);
  if (options.json) {
    const json = toolsets.map(({ tools, ...toolset }) => ({
      ...toolset,
      tools: tools.map(({ name, available, reason }) => ({ name, available, reason })),
    }));
    process.stdout.write(`${JSON.stringify({ toolsets: json, sandbox: await collectSandboxStatus() }, null, 2)}\n`);
  } else {
    // Whether local commands run in the OS sandbox, and why not when it is configured but cannot work.
    process.stdout.write(renderToolStatus(toolsets) + renderSandboxStatus(await collectSandboxStatus()));
  }
}

/** `mibyan call TOOL [JSON]`: sets the exit status. */
export async function callAction(tool: string, rawArgs: string, options: { session?: string; task?: string }): Promise<void> {
  const [runtime, { runCallCommand }] = await Promise.all([boot(), import("./commands/call.js")]);
  process.exitCode = await runCallCommand(runtime, tool, rawArgs, options);
}

/** `mibyan check COMMAND [--json]`: sets the exit status (the verdict). */
export async function checkAction(command: string, options: { json?: boolean }): Promise<void> {
  const { checkOne } = await import("./commands/check.js");
  process.exitCode = await checkOne(command, options.json === true);
}
