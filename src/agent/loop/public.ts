/**
 * The agent loop as the package entry (`src/index.ts`) exports it: the error classes, the types,
 * and `runAgent` as a thin wrapper that loads the loop (prompt assembly, the threat scan's
 * patterns, the openai client) on the first run, so `import "mibyan-tools"` and the CLI's other
 * commands do not pay for it.
 */
import type { RunAgentOptions, RunAgentResult } from "../types.js";

export { AgentConfigError, AgentEndpointError, type AgentEndpointErrorKind } from "./errors.js";

/**
 * Runs the agent loop for one user turn against an OpenAI-compatible Chat Completions endpoint:
 * requests and tool rounds until the model answers without tools, the budget runs out (then one
 * summary request) or `signal` fires. Throws `AgentConfigError` for bad options and
 * `AgentEndpointError` when the endpoint fails for good. See docs/agent-loop.md.
 */
export async function runAgent(options: RunAgentOptions): Promise<RunAgentResult> {
  // Held after the first run: a dynamic import() goes through the module loader again on every call.
  loop ??= import("./run-agent.js");
  return (await loop).runAgent(options);
}

let loop: Promise<typeof import("./run-agent.js")> | undefined;
