import type { ToolEntry, ToolResult } from "../registry/types.js";
import { BUILTIN_TOOL_NAMES } from "../registry/builtin-names.js";
import { closeMatches } from "../toolsets/suggest.js";
import { fail } from "./result.js";

/** Longer names get no suggestions: no tool name is this long, and matching costs grow with the length. */
const MAX_SUGGESTED_NAME = 128;

/** What the answers below need from a registry (a subset of `DispatchHost`). */
export interface UnknownToolHost {
  lookup(name: string): ToolEntry | undefined;
  /** The registered tool names, for suggestions (none without it). */
  readonly names?: Iterable<string> | undefined;
  isAgentLoopTool(name: string): boolean;
  /** Whether any built-in tool was registered here (by `discoverBuiltinTools()`). */
  readonly builtinsRegistered?: boolean | undefined;
}

/**
 * The model-facing text for a call to a tool that is not registered:
 * `Unknown tool: termnal. Did you mean: terminal?`, or `Unknown tool: x` when
 * nothing looks like it. Suggestions come from `known` (the registered tools,
 * narrowed to `allowed` when the session limits them), so the model is never
 * pointed at a tool it may not call.
 */
export function unknownToolMessage(name: string, known: Iterable<string> | undefined, allowed?: ReadonlySet<string>): string {
  const base = `Unknown tool: ${name}`;
  if (known === undefined || name.length > MAX_SUGGESTED_NAME) return base;
  const candidates = allowed === undefined ? known : [...known].filter((tool) => allowed.has(tool));
  const matches = closeMatches(name, candidates);
  return matches.length > 0 ? `${base}. Did you mean: ${matches.join(", ")}?` : base;
}

/**
 * The result for a call to an unregistered tool. A built-in tool's name in a
 * registry that never received the built-ins gets the fix as a hint: the
 * embedder forgot `discoverBuiltinTools()`, and nothing else would say so.
 */
export function unknownToolResult(host: UnknownToolHost, name: string, allowed: ReadonlySet<string> | undefined): ToolResult {
  let message = unknownToolMessage(name, host.names, allowed);
  if (host.builtinsRegistered !== true && BUILTIN_TOOL_NAMES.has(name)) {
    message += ". Built-in tools are registered by discoverBuiltinTools() (in the default registry); call it once at start-up";
  }
  return fail(message, "unknown_tool");
}

/**
 * The result for a call to a tool outside the session's `allowedTools`. A
 * name that exists nowhere is answered as unknown (with suggestions among the
 * allowed tools only), so a misspelling gets the same help with or without a
 * session limit; a real tool the session may not call is "not enabled", and
 * no other name is mentioned.
 */
export function outsideSessionResult(host: UnknownToolHost, name: string, allowed: ReadonlySet<string>): ToolResult {
  if (host.lookup(name) === undefined && !host.isAgentLoopTool(name)) return unknownToolResult(host, name, allowed);
  return fail(`Tool ${name} is not enabled for this session`, "unavailable");
}
