import { closeMatches } from "../toolsets/suggest.js";

/** Longer names get no suggestions: no tool name is this long, and matching costs grow with the length. */
const MAX_SUGGESTED_NAME = 128;

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
