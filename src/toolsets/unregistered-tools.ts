/**
 * Which tools a toolset names that nobody registered. The built-in toolset names come from the
 * Mibyan document (`web`, `browser`, `memory`, ...), but this package ships tools only for a few
 * of them; the rest are names reserved for tools an application or plugin registers, or tools the
 * agent loop handles. Without this, selecting `web` silently gave an empty tool list.
 */
export interface ToolsetRegistration {
  toolset: string;
  /** The tools the toolset resolves to that are registered. */
  registered: string[];
  /** Tools it names that are not registered and not the agent loop's, in resolution order (declared order). */
  missing: string[];
  /** Tools it names that the agent loop handles (not registered here), in resolution order. */
  agentLoop: string[];
}

/**
 * The tools of `toolset` (`tools`: what `catalog.resolve(toolset).tools` gives, or a definition's
 * own `tools` when it includes nothing, which is cheaper on a cold start), split into registered
 * ones, agent-loop ones and the rest. `isRegistered` and `agentLoopTools` come from the caller (the
 * registry and `AGENT_LOOP_TOOLS`), so toolsets stay independent of the registry.
 */
export function unregisteredTools(
  toolset: string,
  tools: Iterable<string>,
  isRegistered: (tool: string) => boolean,
  agentLoopTools: Iterable<string>,
): ToolsetRegistration {
  const loop = new Set(agentLoopTools);
  const registered: string[] = [];
  const missing: string[] = [];
  const agentLoop: string[] = [];
  for (const tool of tools) {
    if (isRegistered(tool)) registered.push(tool);
    else if (loop.has(tool)) agentLoop.push(tool);
    else missing.push(tool);
  }
  return { toolset, registered, missing, agentLoop };
}

/**
 * Why a toolset has no registered tools:
 * `no tools registered: web_search, web_extract are not built in; register them or load a plugin`, or
 * `no tools registered: todo is handled by the agent loop`.
 */
export function describeUnregistered(registration: Pick<ToolsetRegistration, "missing" | "agentLoop">): string {
  const parts: string[] = [];
  const { missing, agentLoop } = registration;
  if (agentLoop.length > 0) parts.push(`${agentLoop.join(", ")} ${agentLoop.length === 1 ? "is" : "are"} handled by the agent loop`);
  if (missing.length > 0) {
    parts.push(`${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} not built in; register ${missing.length === 1 ? "it" : "them"} or load a plugin`);
  }
  return parts.length > 0 ? `no tools registered: ${parts.join("; ")}` : "no tools registered";
}
