/**
 * `testMcpServer`: connect to one configured server afresh, list its tools, disconnect — what
 * `mibyan mcp test <name>` shows (the command's exit status is `ok`). Nothing is registered and no
 * retry is made: the point is to see the first error as it is. A refused or disabled entry is reported
 * without being started.
 */
import type { McpServerConfig } from "../../config/config-types.js";
import { mibyanHome } from "../../config/home.js";
import type { EnvVars } from "../../util/env-vars.js";
import { describe } from "./connection.js";
import { mcpToolName } from "./naming.js";
import { listAllTools } from "./register.js";
import { loadMcpCommandScanner } from "./security.js";
import { resolveMcpServer } from "./server-config.js";
import { connectServer } from "./transport.js";
import { redactText } from "../../redaction/tool-output.js";

export interface McpServerTestResult {
  name: string;
  transport: "stdio" | "http" | "sse";
  ok: boolean;
  /** Why the entry was not started (refused or disabled); `ok` is false. */
  refusal?: string | undefined;
  /** The connection or listing error (redacted). */
  error?: string | undefined;
  /** The server's tools: raw name, the registry name it would get, description. */
  tools: { raw: string; name: string; description: string }[];
  /** What the server advertises beyond tools. */
  resources: boolean;
  prompts: boolean;
  durationMs: number;
}

export interface TestMcpServerOptions {
  env?: EnvVars | undefined;
  home?: string | undefined;
}

export async function testMcpServer(name: string, entry: McpServerConfig, options: TestMcpServerOptions = {}): Promise<McpServerTestResult> {
  const env = options.env ?? process.env;
  const started = performance.now();
  if (typeof entry?.command === "string") await loadMcpCommandScanner();
  const server = resolveMcpServer(name, entry, env);
  const result: McpServerTestResult = { name, transport: server.transport, ok: false, tools: [], resources: false, prompts: false, durationMs: 0 };
  const finish = (): McpServerTestResult => ({ ...result, durationMs: Math.round(performance.now() - started) });
  if (server.refusal !== undefined || !server.enabled) {
    result.refusal = server.refusal ?? "enabled: false in config.yaml";
    return finish();
  }
  let connected;
  try {
    connected = await connectServer(server, { env, home: options.home ?? mibyanHome(env) });
    result.transport = connected.kind;
    const tools = await listAllTools(connected.client, { timeout: server.connectTimeoutMs });
    result.tools = tools.map((tool) => ({ raw: tool.name, name: mcpToolName(name, tool.name).name, description: tool.description ?? "" }));
    const capabilities = connected.client.getServerCapabilities();
    result.resources = capabilities?.resources != null;
    result.prompts = capabilities?.prompts != null;
    result.ok = true;
  } catch (error) {
    result.error = redactText(describe(error));
  } finally {
    await connected?.transport.close().catch(() => undefined);
  }
  return finish();
}
