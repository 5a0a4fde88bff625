/**
 * `mibyan chat -q PROMPT`: one user turn of the agent loop against an OpenAI-compatible endpoint,
 * with the built-in, plugin and MCP tools of `mibyan call`, the session stored in the profile's
 * SQLite store, memory in the system prompt, and the answer on stdout (docs/chat.md). Loaded only
 * for this command: the loop, the openai client and better-sqlite3 stay out of every other one.
 *
 * Exit status: 0 answered (also when the budget ran out: the summary is the answer), 1 the endpoint
 * failed (401, unreachable, 5xx after the retries) or the session store failed, 2 a usage or
 * settings error (no model, no endpoint, a named key variable that is not set, an unknown --resume id).
 */

import { getApprovalGate } from "../../approval/default-gate.js";
import { NonInteractiveSurface } from "../../approval/surfaces/non-interactive.js";
import type { GateDecision } from "../../approval/flow/types.js";
import { getConfig } from "../../config/load-config.js";
import { mibyanHome } from "../../config/home.js";
import { ModelSettingsError, resolveModel } from "../../agent/model-endpoint.js";
import { runAgent, AgentConfigError, AgentEndpointError } from "../../agent/loop/public.js";
import { addDelegation, openSessionWiring, type SessionWiring } from "../../agent/session-wiring.js";
import { childEndpoint } from "../../agent/delegation/settings.js";
import type { AgentEvent, RunAgentResult } from "../../agent/types.js";
import { redactSecrets } from "../../redaction/redact.js";
import { boot } from "../actions.js";
import { subagentMark } from "../chat/chat-renderer.js";

export interface ChatOptions {
  /** The prompt; without it the chat is interactive (chat-interactive.ts). */
  query?: string | undefined;
  model?: string | undefined;
  baseUrl?: string | undefined;
  apiKeyEnv?: string | undefined;
  toolsets?: string[] | undefined;
  maxTurns?: number | undefined;
  resume?: string | undefined;
  json?: boolean | undefined;
}

/** A command the approval gate refused during the run (non-interactive: nobody can be asked). */
interface Refusal {
  command: string;
  reason: string;
  rules: string[];
}

/**
 * Sent as the bearer token when no key is configured (a local server takes none). The openai client
 * refuses to start without a non-empty key, and the loop would otherwise fall back to OPENAI_API_KEY,
 * which chat has already decided not to use. vLLM's and llama.cpp's examples use such a placeholder.
 */
const NO_KEY = "no-key";

function fail(message: string, code: number): number {
  process.stderr.write(`mibyan chat: ${message}\n`);
  return code;
}

/** One stderr line per finished tool call (a subagent's marked with its task), so a person sees what ran; stdout keeps only the answer. */
function activity(event: AgentEvent, taskIndex?: number): void {
  const mark = taskIndex === undefined ? "" : `${subagentMark(taskIndex)} `;
  if (event.type === "tool_end") process.stderr.write(`${event.emoji} ${mark}${event.name} (${event.status}, ${event.elapsedMs} ms)\n`);
  if (taskIndex !== undefined) return;
  else if (event.type === "retry") process.stderr.write(`… ${event.reason}; retrying in ${Math.round(event.delayMs)} ms\n`);
  else if (event.type === "compaction") process.stderr.write("context compacted\n");
}

export async function runChatCommand(options: ChatOptions): Promise<number> {
  const config = getConfig().config;
  let settings;
  try {
    settings = resolveModel({ model: options.model, baseUrl: options.baseUrl, apiKeyEnv: options.apiKeyEnv }, config.model);
  } catch (thrown) {
    if (thrown instanceof ModelSettingsError) return fail(thrown.message, 2);
    throw thrown;
  }
  // -q has nobody to ask: dangerous commands get the non-interactive answer (approvals.non_interactive,
  // deny unless set to allow), never a terminal prompt that would hang a script.
  // Interactive: the gate's default surface (the terminal prompt on a terminal, else non-interactive).
  const interactive = options.query === undefined;
  if (interactive && options.json) return fail("--json needs -q (one prompt, one JSON object)", 2);
  const gate = getApprovalGate();
  if (!interactive) gate.setSurface(new NonInteractiveSurface(gate.settings.nonInteractive));
  // The key goes to the endpoint client only: out of this process's environment, no tool's child
  // process (terminal, execute_code, hooks) and no plugin can read it and write it into the session.
  // After the gate is built: a smart reviewer configured to use the same variable has read it already.
  // The subagents' endpoint (delegation.model / base_url / api_key_env, else the chat's) is read first: its
  // key variable leaves the environment with the chat's (docs/delegation.md).
  const subagents = childEndpoint(config.delegation, { model: settings.model, baseURL: settings.baseURL, apiKey: settings.apiKey ?? NO_KEY });
  if (settings.apiKeyEnv !== undefined) delete process.env[settings.apiKeyEnv];
  if (config.delegation.apiKeyEnv !== undefined) delete process.env[config.delegation.apiKeyEnv];
  const refusals: Refusal[] = [];
  const stopObserving = gate.addObserver({
    onDecision(decision: GateDecision) {
      if (!decision.allowed && decision.matches.length > 0) refusals.push({ command: redactSecrets(decision.command), reason: decision.reason, rules: decision.matches.map((m) => m.rule) });
    },
  });

  const controller = new AbortController();
  const onInterrupt = (): void => controller.abort(new Error("interrupted (Ctrl-C)"));
  if (!interactive) process.once("SIGINT", onInterrupt);
  const runtime = await boot({ mcp: true });
  // Interactive: the answer streams, a live activity line on a terminal, questions asked there (chat-interactive.ts).
  const ui = interactive ? (await import("./chat-interactive.js")).openInteractiveUi(gate) : undefined;
  let wiring: SessionWiring | undefined;
  try {
    try {
      wiring = await openSessionWiring({ home: mibyanHome(), registry: runtime.registry, memory: config.memory, model: settings.model, resume: options.resume, approveMemoryWrite: ui?.approveMemoryWrite });
    } catch (thrown) {
      if ((thrown as Error)?.name !== "SessionStoreError") throw thrown;
      return fail((thrown as Error).message, (thrown as { kind?: string }).kind === "not_found" ? 2 : 1);
    }
    const session = wiring;
    // delegate_task: children on the chat's tools, stored as subagent sessions of this one, hooks from plugins and config.yaml.
    addDelegation(wiring, runtime.registry, {
      model: settings.model,
      baseURL: settings.baseURL,
      apiKey: settings.apiKey ?? NO_KEY,
      child: subagents,
      delegation: config.delegation,
      toolsets: options.toolsets,
      toolSearch: config.toolSearch,
      compaction: { ...config.compaction, contextTokens: config.compaction.contextTokens ?? config.toolSearch.contextTokens },
      onEvent: options.json ? undefined : (ui?.onChildEvent ?? ((taskIndex, event) => activity(event, taskIndex))),
      onSubagentStart: (event) => runtime.plugins?.subagentStart(event),
      onSubagentStop: (event) => runtime.plugins?.subagentStop(event),
    });
    const turn = (prompt: string, signal: AbortSignal): Promise<RunAgentResult> =>
      runAgent({
        model: settings.model,
        baseURL: settings.baseURL,
        apiKey: settings.apiKey ?? NO_KEY,
        prompt,
        registry: runtime.registry,
        toolsets: options.toolsets,
        maxTurns: options.maxTurns,
        session: session.session,
        handlers: session.handlers,
        systemPrompt: { memory: session.memory },
        // config.yaml's tool_search section (docs/tool-search.md): MCP and plugin tools deferred past its share.
        toolSearch: config.toolSearch,
        // config.yaml's compaction section (docs/compaction.md); the window falls back to tool_search's.
        compaction: { ...config.compaction, contextTokens: config.compaction.contextTokens ?? config.toolSearch.contextTokens },
        // The task (terminal directory, shell) stays the chat's when a compaction continues the session in a new one.
        taskId: session.sessionId,
        signal,
        stream: ui !== undefined,
        onEvent: options.json ? undefined : (ui?.onEvent ?? activity),
      });
    if (options.query === undefined) {
      // `ui` is made above whenever there is no -q.
      return await ui!.run(async (prompt, signal) => {
        try {
          return await turn(prompt, signal);
        } catch (thrown) {
          if (thrown instanceof AgentEndpointError || thrown instanceof AgentConfigError) return { error: thrown.message };
          throw thrown;
        }
      }, () => session.session.id); // the current session: a compaction continues the conversation in a new one
    }
    let result: RunAgentResult;
    try {
      result = await turn(options.query, controller.signal);
    } catch (thrown) {
      if (thrown instanceof AgentEndpointError) return fail(`${thrown.message} (session ${wiring.session.id} keeps what was said)`, 1);
      if (thrown instanceof AgentConfigError) return fail(thrown.message, 2);
      throw thrown;
    }
    const refusalNote =
      refusals.length === 0 ? "" : `${refusals.length} command(s) needing approval were refused: nobody can approve in -q mode (set approvals.non_interactive: allow in config.yaml to allow them, hardline rules aside).`;
    if (options.json) {
      const { status, finalText: answer, toolCalls, usage, turns } = result;
      process.stdout.write(`${JSON.stringify({ answer, sessionId: wiring.session.id, status, turns, toolCalls, usage, refused: refusals, resumed: wiring.resumed })}\n`);
    } else {
      process.stdout.write(result.finalText.endsWith("\n") ? result.finalText : `${result.finalText}\n`);
      if (refusalNote !== "") process.stderr.write(`mibyan chat: ${refusalNote}\n`);
      process.stderr.write(`session ${wiring.session.id}${result.status === "completed" ? "" : ` (${result.status})`}\n`);
    }
    return result.status === "interrupted" ? 130 : 0;
  } finally {
    ui?.stop();
    process.removeListener("SIGINT", onInterrupt);
    stopObserving();
    wiring?.close();
    await runtime.close();
  }
}
