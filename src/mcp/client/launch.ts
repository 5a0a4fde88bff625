/**
 * Starting the stdio servers early: resolve every entry, check each stdio command line, and spawn
 * each server the check allows at once, before the MCP SDK has loaded (this module imports none of
 * it). discover.ts then connects an SDK client over the child that is already running
 * (`McpLaunch.take`), so a server's own start-up (node, its SDK: about half a second) overlaps with
 * ours instead of following it.
 *
 * What it protects:
 *
 * - Never spawned before the full check. A command line the fast shell parser takes is judged by
 *   the full analysis without the bash grammar (the parser gives the same tree for every text it
 *   takes, security.ts `checkStdioCommand`), and such servers start at once. A line with any text
 *   only the grammar can parse waits for the grammar and is checked again; only then is it started
 *   or refused. A refused entry is never spawned.
 * - Nothing spawned in safe mode (`MIBYAN_SAFE_MODE`), nor for a disabled or HTTP entry.
 * - No child left behind: if anything here throws after some servers were spawned, they are ended
 *   before the error leaves; `close()` ends every child nobody took (discover.ts calls it from the
 *   handle's `close()`, and public.ts when loading the client fails). stdio-process.ts's exit hook
 *   is the last resort for a program that exits without either.
 */
import type { McpServerConfig } from "../../config/config-types.js";
import { isSafeMode, type EnvVars } from "../../util/env-vars.js";
import { stdioEnvironment } from "./environment.js";
import { checkStdioCommand, loadMcpCommandScanner } from "./security.js";
import { refusalWarning, resolveMcpServer, type ResolvedMcpServer } from "./server-config.js";
import { stderrLogPath, StdioServerProcess, type StdioProcessOptions } from "./stdio-process.js";

export interface LaunchOptions {
  /** The `mcp_servers` section. */
  config: Readonly<Record<string, McpServerConfig>>;
  /** `${VAR}` expansion, the stdio baseline environment, `MIBYAN_SAFE_MODE`. */
  env: EnvVars;
  /** The profile home (stderr logs). */
  home: string;
  /** Told about refused entries and questionable values (resolveMcpServer's warnings). */
  warn: (message: string) => void;
}

/** Servers resolved and checked, the allowed stdio ones already running. */
export interface McpLaunch {
  /** Every configured entry, resolved, in configured order; `refusal` set where the check refused it. */
  readonly servers: readonly ResolvedMcpServer[];
  /** The child spawned for `name`, handed over once (then `undefined`); `undefined` if none was spawned. */
  take(name: string): StdioServerProcess | undefined;
  /** Ends every child nobody took; resolves once they have exited. Idempotent. */
  close(): Promise<void>;
}

/** Why `server` is not started, or `undefined` when it should be. */
export function notStarted(server: ResolvedMcpServer, safeMode: boolean): { state: "disabled" | "refused"; why: string } | undefined {
  if (server.refusal !== undefined) return { state: "refused", why: server.refusal };
  if (!server.enabled) return { state: "disabled", why: "enabled: false in config.yaml" };
  if (safeMode) return { state: "disabled", why: "MIBYAN_SAFE_MODE is set" };
  return undefined;
}

/** How a resolved stdio entry's child is spawned: exact minimal environment, stderr to its log. */
export function stdioProcessOptions(server: ResolvedMcpServer, parentEnv: EnvVars, home: string): StdioProcessOptions {
  return {
    command: server.command!,
    args: server.args ?? [],
    env: stdioEnvironment(server.env, parentEnv),
    cwd: server.cwd,
    stderrLog: stderrLogPath(home, server.name),
  };
}

/**
 * Resolves and checks every entry and spawns the allowed stdio servers: those whose command line is
 * judged without the bash grammar at once, the others once the grammar has loaded and they have been
 * checked again. Resolves when every entry has been decided (spawned, refused or left alone).
 *
 * The first kind are spawned before this function first yields (public.ts relies on it: it starts
 * loading the client right after the call, so the grammar and the client load side by side).
 */
export async function launchMcpServers(options: LaunchOptions): Promise<McpLaunch> {
  const { config, env, home, warn } = options;
  const safeMode = isSafeMode(env);
  const spawned = new Map<string, StdioServerProcess>();
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= Promise.all([...spawned.values()].map((child) => child.terminate())).then(() => undefined);
    return closing;
  };
  const start = (server: ResolvedMcpServer): void => {
    if (server.transport !== "stdio" || notStarted(server, safeMode) !== undefined || closing !== undefined) return;
    spawned.set(server.name, new StdioServerProcess(stdioProcessOptions(server, env, home)));
  };

  const servers: ResolvedMcpServer[] = [];
  try {
    const names = config !== null && typeof config === "object" ? Object.keys(config) : [];
    const waiting: number[] = [];
    for (const name of names) {
      const server = resolveMcpServer(name, config[name], env, warn);
      servers.push(server);
      if (needsGrammar(server)) waiting.push(servers.length - 1);
      else start(server);
    }
    if (waiting.length > 0) {
      await loadMcpCommandScanner();
      for (const index of waiting) {
        const name = servers[index]!.name;
        // Its other warnings were given on the first pass; only the verdict can differ now.
        const server = resolveMcpServer(name, config[name], env);
        if (server.refusal !== undefined) warn(refusalWarning(name, server.refusal));
        servers[index] = server;
        start(server);
      }
    }
  } catch (error) {
    await close();
    throw error;
  }

  return {
    servers,
    take(name) {
      if (closing !== undefined) return undefined;
      const child = spawned.get(name);
      spawned.delete(name);
      return child;
    },
    close,
  };
}

/** An allowed stdio entry whose command-line verdict is not final until the bash grammar has loaded. */
function needsGrammar(server: ResolvedMcpServer): boolean {
  if (server.transport !== "stdio" || server.refusal !== undefined || server.command === undefined) return false;
  return !checkStdioCommand(server.command, server.args).complete;
}
