/**
 * The built-in `execute_code` tool: runs a JavaScript program in a separate
 * `node` process, where `await tools.<name>(args)` calls other tools through
 * the registry (see src/code-execution/ and docs/execute-code.md).
 *
 * Result shape (always a JSON object string):
 *   { "output": string, "exit_code": number, "tool_calls": number, "error": string | null,
 *     "status"?: "timeout" | "cancelled" }
 *
 * Its schema lists the tools a program can call, so it registers a
 * `patchSchema`: `getToolDefinitions` hands it the names of the tools that
 * survived toolset filtering and availability checks, and the description is
 * rebuilt to list only the allow-listed ones among them.
 *
 * Every program passes the approval gate first, as a whole (`gate.checkAction`, rule
 * `execute-code`, prefix `execute_code`, backend `local`: see
 * src/code-execution/approval.ts); a refused program never starts and comes back with
 * `"status": "blocked"` and the reason. Its nested tool calls pass the gate themselves.
 */

import { EXECUTE_CODE_TOOL, SANDBOX_TOOLS } from "../code-execution/limits.js";
import {
  EXECUTE_CODE_SCHEMA,
  FALLBACK_SUMMARIES,
  firstSentence,
  patchExecuteCodeSchema,
  type SandboxToolSummary,
} from "../code-execution/schema.js";
import { registry } from "../registry/singleton.js";
import type { FunctionSchema, ToolContext, ToolEntry } from "../registry/types.js";
import type { ExecuteCodeHandlerOptions } from "./handlers/execute-code.js";
import { lazyToolBody } from "./handlers/lazy-body.js";

export { EXECUTE_CODE_SCHEMA };
export type { ActionGate, ExecuteCodeHandlerOptions, ExecuteCodeToolResult } from "./handlers/execute-code.js";

/**
 * Builds an execute_code handler; the registered tool uses the defaults. Its body
 * (./handlers/execute-code.ts) and the runner load on the first program, not when
 * the tool is listed.
 */
export function createExecuteCodeHandler(options: ExecuteCodeHandlerOptions = {}) {
  const body = lazyToolBody(async () => (await import("./handlers/execute-code.js")).executeCodeToolBody(options));
  return function executeCode(args: Record<string, unknown>, ctx: ToolContext): Promise<string> {
    return body(args, ctx);
  };
}

/** The handler the registered `execute_code` tool uses. */
export const executeCodeHandler = createExecuteCodeHandler();

function namePattern(name: string): RegExp {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(?<![A-Za-z0-9_-])${escaped}(?![A-Za-z0-9_-])`);
}

/**
 * The allow-listed tools among `availableTools`, each with the first sentence
 * of its registered description. A sentence that names a tool outside
 * `availableTools` is replaced by a neutral summary, so the description never
 * mentions a tool the model cannot call.
 */
export function sandboxToolSummaries(
  availableTools: ReadonlySet<string>,
  lookup: (name: string) => ToolEntry | undefined = (name) => registry.get(name),
  knownNames: Iterable<string> = registry.names,
): SandboxToolSummary[] {
  const forbidden = [...new Set([...knownNames, ...SANDBOX_TOOLS])].filter((name) => !availableTools.has(name)).map(namePattern);
  return SANDBOX_TOOLS.filter((name) => name !== EXECUTE_CODE_TOOL && availableTools.has(name)).map((name) => {
    const description = lookup(name)?.schema.description;
    let summary = description === undefined ? "" : firstSentence(description);
    if (summary === "" || forbidden.some((pattern) => pattern.test(summary))) summary = FALLBACK_SUMMARIES[name] ?? "";
    return { name, summary };
  });
}

/** The registered `patchSchema`: the schema rebuilt for the tools that survived filtering. */
export function patchExecuteCodeForAvailable(schema: FunctionSchema, availableTools: ReadonlySet<string>): FunctionSchema {
  return patchExecuteCodeSchema(schema, sandboxToolSummaries(availableTools));
}

registry.register({
  name: "execute_code",
  toolset: "code_execution",
  emoji: "📜",
  parallelSafe: false,
  description: "Run a JavaScript program in a separate node process; it can call allow-listed tools through `tools.<name>(args)`.",
  schema: EXECUTE_CODE_SCHEMA,
  handler: executeCodeHandler,
  patchSchema: patchExecuteCodeForAvailable,
  // The handler enforces the program's own timeout (and kills its process group); this is
  // only a backstop above an approval wait (a gateway waits 5 minutes by default), the
  // largest allowed timeout and the kill grace.
  timeoutMs: 20 * 60 * 1000,
  // The output is capped at 50,000 characters; leave room for JSON escaping so the
  // registry never cuts the JSON itself.
  maxResultChars: 200_000,
  source: { kind: "builtin" },
});
