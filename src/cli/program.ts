/**
 * The `mibyan` command line as a commander program: every command, its options, help and usage
 * errors. Loaded only when the fast path (fast-path.ts) does not take the command line.
 */
import { readFileSync } from "node:fs";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { callAction, checkAction, toolsAction, withRuntime } from "./actions.js";
import { registerChatCommand } from "./chat-command.js";
import { registerSessionsCommand } from "./commands/sessions.js";
import { describeThrown } from "../util/text.js";

const FORMATS = ["openai", "responses", "anthropic", "gemini", "raw", "strict"] as const;

/** `--context 200000`: a positive whole number of tokens. */
function positiveTokens(value: string): number {
  const tokens = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(tokens) || tokens <= 0) throw new InvalidArgumentError(`expected a positive whole number of tokens, got ${JSON.stringify(value)}`);
  return tokens;
}

function list(value: string): string[] {
  const items = value.split(",").map((item) => item.trim()).filter((item) => item !== "");
  if (items.length === 0) throw new InvalidArgumentError("expected a comma-separated list of toolset names");
  return items;
}

function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return manifest.version;
}

function buildProgram(): Command {
  const program = new Command("mibyan")
    .description("Run and inspect mibyan-tools: the tool runtime for LLM agents.")
    .version(packageVersion(), "-V, --version", "print the version")
    .showHelpAfterError("(run mibyan --help for usage)")
    .exitOverride();

  program
    .command("tools")
    .description("List toolsets and their tools, with availability and why a tool is unavailable.")
    .option("--json", "print JSON: {toolsets:[{name,description,available,tools:[{name,available,reason}]}], sandbox:{mode,network,writableRoots,active,reason,version}, mcpServers:[{name,transport,state,toolCount,toolset,error}]}")
    .option("--plan", "show what tool search sends directly and what it defers behind tool_search, and why (with --json: {activated,mode,reason,contextTokens,thresholdTokens,deferrableTokens,visible,deferred:[{name,reason}],withheld})")
    .option("--context <tokens>", "with --plan: the model's context window in tokens (default: tool_search.context_tokens)", positiveTokens)
    .action(toolsAction);

  program
    .command("definitions")
    .description("Print the tool definitions a model would receive, as a JSON array.")
    .option("--enable <toolsets>", "only these toolsets (comma-separated)", list)
    .option("--disable <toolsets>", "leave out these toolsets (comma-separated)", list)
    .addOption(new Option("--format <format>", "provider format").choices(FORMATS).default("openai"))
    .action(async (options: { enable?: string[]; disable?: string[]; format: (typeof FORMATS)[number] }) => {
      const { runDefinitionsCommand } = await import("./commands/definitions.js");
      await withRuntime({ mcp: true }, (runtime) => runDefinitionsCommand(runtime, options));
    });

  program
    .command("call")
    .description("Run one tool call through the full dispatch path and print the model-facing result (exit 1 when it is an error).")
    .argument("<tool>", "tool name")
    .argument("[json-args]", "arguments as a JSON object ('-' reads them from stdin)", "{}")
    .option("--session <id>", "the session the call belongs to")
    .option(
      "--task <id>",
      "the task the call belongs to; its environment (cd, exported variables, a container) ends when this process exits, so separate `mibyan call --task T` runs do not share shell state (background processes of a --session do outlive it)",
    )
    .action(callAction);

  program
    .command("check")
    .description("Check commands with the dangerous-command detection (what the approval gate would see). Exit status: 0 safe, 1 needs approval, 3 hardline, 2 usage error.")
    .argument("[command]", "the command to check")
    .option("--stdin", "read commands from stdin, one JSON string per line; print one JSON object per line")
    .option("--json", "print JSON: {command,verdict,dangerous,hardline,analysable,unanalysable,matches:[{rule,description,category,hardline,prefix,id}]}")
    .action(async (command: string | undefined, options: { stdin?: boolean; json?: boolean }) => {
      if (options.stdin) {
        if (command !== undefined) throw new InvalidArgumentError("give either a command or --stdin, not both");
        const { checkStdin } = await import("./commands/check.js");
        process.exitCode = await checkStdin();
      } else if (command === undefined) {
        throw new InvalidArgumentError("give a command to check, or --stdin");
      } else {
        await checkAction(command, options);
      }
    });

  const approvals = program
    .command("approvals")
    .description("List or revoke the persisted (always) command approvals in config.yaml.");
  approvals
    .command("list", { isDefault: true })
    .description("List persisted approvals (rule, command prefix, backend).")
    .option("--json", "print JSON: {approvals:[{id,rule,prefix,backend,added}]}")
    .action(async (options: { json?: boolean }) => {
      const { listCommand } = await import("./commands/approvals.js");
      process.exitCode = listCommand(options.json === true);
    });
  approvals
    .command("revoke")
    .description("Revoke one persisted approval by its id.")
    .argument("<id>", "the approval's id, as mibyan approvals list shows it")
    .option("--json", "print JSON: {revoked:{id,rule,prefix,backend}}")
    .action(async (id: string, options: { json?: boolean }) => {
      const { revokeCommand } = await import("./commands/approvals.js");
      process.exitCode = await revokeCommand(id, options.json === true);
    });

  const mcp = program.command("mcp").description("Inspect the MCP servers of config.yaml (docs/mcp.md), or serve the registry as an MCP server (docs/integrations/mcp-server.md).");
  mcp
    .command("list", { isDefault: true })
    .description("Start the configured servers (waiting up to 10 s) and show each one's transport, state (ready, connecting, parked, refused, disabled) with its last error, and tool count.")
    .option("--json", "print JSON: {servers:[{name,transport,state,toolCount,toolset,error}]}")
    .action(async (options: { json?: boolean }) => {
      const { listMcpCommand } = await import("./commands/mcp.js");
      process.exitCode = await withRuntime({ mcp: true }, (runtime) => listMcpCommand(runtime, options.json === true));
    });
  mcp
    .command("test")
    .description("Connect to one server afresh, list its tools with the names the model sees, disconnect. Exit 1 when it cannot connect or is refused.")
    .argument("<name>", "the server's key under mcp_servers")
    .option("--json", "print JSON: {name,transport,ok,refusal,error,tools:[{raw,name,description}],resources,prompts,durationMs}")
    .action(async (name: string, options: { json?: boolean }) => {
      const { testMcpCommand } = await import("./commands/mcp.js");
      process.exitCode = await testMcpCommand(name, options.json === true);
    });
  mcp
    .command("serve")
    .description("Serve the registry's tools to an MCP client (docs/integrations/mcp-server.md): stdio (stdout carries only JSON-RPC) or Streamable HTTP on 127.0.0.1.")
    .addOption(new Option("--transport <kind>", "stdio or http").choices(["stdio", "http"]).default("stdio"))
    .option("--host <address>", "HTTP: the address to bind (default 127.0.0.1; any other needs --token-env)")
    .option("--port <n>", "HTTP: the port (default 0: a free one, printed)", (value: string) => {
      const port = Number(value);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError(`--port ${value}: expected a port number 0-65535`);
      return port;
    })
    .option("--toolsets <names>", "only these toolsets (comma-separated)", list)
    .option("--tools <names>", "only these tools (comma-separated)", list)
    .option("--exclude <names>", "leave out these tools; calls to them are refused (comma-separated)", list)
    .option("--token-env <var>", "HTTP: require Authorization: Bearer <the value of this environment variable>")
    .option("--stateless", "HTTP: no sessions (a new server per request; no elicitation, so dangerous commands are refused)")
    .option("--print-tools", "print the tool list as JSON (what tools/list answers) and exit")
    .option("--with-session <id>", "also serve todo, memory and session_search, bound to this stored session (started when not stored yet)")
    .addOption(new Option("--tool-search <mode>", "defer MCP and plugin tools behind tool_search / tool_describe / tool_call (docs/tool-search.md); auto uses config.yaml's tool_search threshold").choices(["auto", "on", "off"]))
    .action(async (options: { transport: "stdio" | "http"; host?: string; port?: number; toolsets?: string[]; tools?: string[]; exclude?: string[]; tokenEnv?: string; stateless?: boolean; printTools?: boolean; withSession?: string; toolSearch?: "auto" | "on" | "off" }) => {
      const { mcpServeCommand } = await import("./commands/mcp-serve.js");
      process.exitCode = await mcpServeCommand(options, withRuntime);
    });

  const plugins = program.command("plugins").description("List plugins, or turn them on or off in config.yaml (docs/plugins.md).");
  plugins
    .command("list", { isDefault: true })
    .description("Discover plugins (user, project, npm) and show each one's state (enabled, disabled, not enabled, failed with its error) and the tools and hooks it registered.")
    .option("--json", "print JSON: {safeMode,plugins:[{key,source,name,version,state,error,tools,hooks,dir}]}")
    .action(async (options: { json?: boolean }) => {
      const { listPluginsCommand } = await import("./commands/plugins.js");
      process.exitCode = await withRuntime({ plugins: "always" }, (runtime) => listPluginsCommand(runtime, options.json === true));
    });
  for (const enabled of [true, false]) {
    plugins
      .command(enabled ? "enable" : "disable")
      .description(enabled ? "Add a plugin key to plugins.enabled (and take it out of plugins.disabled)." : "Add a plugin key to plugins.disabled (and take it out of plugins.enabled).")
      .argument("<key>", "the plugin key: name, category/name or @scope/name")
      .option("--json", "print JSON: {key,enabled,changed,config,plugins:{enabled,disabled}}")
      .action(async (key: string, options: { json?: boolean }) => {
        const { switchPluginCommand } = await import("./commands/plugins.js");
        process.exitCode = await switchPluginCommand(key, enabled, options.json === true);
      });
  }

  const processes = program
    .command("processes")
    .description("List or show the background processes of a session and their retained results (reads only; adopts nothing).");
  processes
    .command("list", { isDefault: true })
    .description("List the session's running processes and the results of ended ones.")
    .option("--session <id>", "the session whose processes to list (default: default, as mibyan call)")
    .option("--json", "print JSON: {session,running:[...],ended:[...]}")
    .action(async (options: { session?: string; json?: boolean }) => {
      const { listProcessesCommand } = await import("./commands/processes.js");
      process.exitCode = await listProcessesCommand(options);
    });
  processes
    .command("show")
    .description("Show one process: the receipt (exit code, output) of an ended one, or the state of a running one.")
    .argument("<id>", "the process id (proc_...), as terminal or mibyan processes shows it")
    .option("--session <id>", "the session the process belongs to (default: default, as mibyan call)")
    .option("--json", "print the receipt as JSON (snake_case fields)")
    .action(async (id: string, options: { session?: string; json?: boolean }) => {
      const { showProcessCommand } = await import("./commands/processes.js");
      process.exitCode = await showProcessCommand(id, options);
    });

  registerSessionsCommand(program);
  registerChatCommand(program);
  return program;
}

/** Parses `argv` with commander and runs the command; sets the exit status. */
export async function runProgram(argv: readonly string[]): Promise<void> {
  const program = buildProgram();
  if (argv.length <= 2) {
    program.outputHelp({ error: true });
    process.exitCode = 2;
    return;
  }
  try {
    await program.parseAsync(argv as string[]);
  } catch (thrown) {
    if (thrown instanceof InvalidArgumentError) {
      process.stderr.write(`mibyan: ${thrown.message}\n(run mibyan --help for usage)\n`);
      process.exitCode = 2;
      return;
    }
    if (thrown instanceof CommanderError) {
      // Commander already printed the message; help and version exit 0.
      process.exitCode = thrown.exitCode === 0 ? 0 : 2;
      return;
    }
    process.stderr.write(`mibyan: ${thrown instanceof Error && thrown.name === "ConfigError" ? thrown.message : describeThrown(thrown)}\n`);
    process.exitCode = 2;
  }
}
