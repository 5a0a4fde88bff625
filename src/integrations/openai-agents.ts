/**
 * The OpenAI Agents JS adapter (`mibyan-tools/openai-agents`, for `@openai/agents-core` 0.20):
 * the registry's tools as `FunctionTool`s. Parameters are the registry's JSON Schema made strict
 * by our own converter (`toOpenAIStrict`: every property required, optional ones nullable,
 * `additionalProperties: false`), or the schema as it is with `strict: false` when the converter
 * cannot make it strict or `strict: false` is asked for; the SDK only parses the JSON, our
 * dispatch validates it (and drops the `null`s strict mode sends for optional parameters).
 * Every call goes through `handleFunctionCall` with the run's AbortSignal; a failure is returned
 * as the text the model reads, never thrown. A command our detection flags uses the SDK's
 * `needsApproval`: the run stops with an interruption, `state.approve(item)` /
 * `state.reject(item)` answer it (a `RunState` survives `toString()`/`fromString`), and an
 * approved call runs once without our gate asking again. See docs/integrations/openai-agents.md.
 *
 * `@openai/agents-core` is an optional peer: imported here, at load, so that
 * `import "mibyan-tools"` never loads it.
 */

import type { FunctionTool, RunContext } from "@openai/agents-core";

import { toOpenAIStrict } from "../adapters/strict.js";
import { registry as defaultRegistry } from "../registry/singleton.js";
import { createApprovalBridge } from "./approval-bridge.js";
import { importPeer } from "./peer-import.js";
import type { IntegrationResult } from "./result-parts.js";
import { callScope, createCallRunnerWith } from "./run-call.js";
import { planIntegrationTools } from "./select-tools.js";
import type { IntegrationOptions } from "./types.js";

const agents = await importPeer("@openai/agents-core", "mibyan-tools/openai-agents", () => import("@openai/agents-core"));

export interface OpenAIAgentsToolsOptions extends IntegrationOptions {
  /**
   * `true` (default): strict parameters from our converter, falling back to `strict: false` for a
   * schema it cannot convert; `false`: every tool non-strict, the schema as it is.
   */
  strict?: boolean | undefined;
}

type ToolOutput = string | ({ type: "text"; text: string } | { type: "image"; image: { data: string; mediaType: string } })[];

/** The largest `timeoutMs` the SDK takes (a 32-bit timer). */
const MAX_SDK_TIMEOUT_MS = 2_147_483_647;

/** The registry's tools as Agents SDK `FunctionTool`s, in name order. */
export function toOpenAIAgentsTools(options: OpenAIAgentsToolsOptions = {}): FunctionTool[] {
  const { tools: selected, allowedTools: allowed, bridge: search } = planIntegrationTools(options);
  const target = options.registry ?? defaultRegistry;
  // The mapping to the SDK's output runs in the same promise step as the call: no extra hop per call.
  const runCall = createCallRunnerWith(options, allowed, toolOutput, "openai-agents", search);
  const bridge = createApprovalBridge(callScope(options), options.registry);
  return selected.map(({ name, description, parameters }) => {
    let strictParameters: Record<string, unknown> | undefined;
    if (options.strict !== false) {
      try {
        strictParameters = toOpenAIStrict({ name, description, parameters }).function.parameters;
      } catch {
        // Left non-strict: the model may then send what the schema does not allow, and our validation says so.
      }
    }
    // The tool's time limit is the SDK's: on expiry the model reads "Tool 'x' timed out after Nms." and the SDK
    // aborts the signal our handler runs with; dispatch's own timer is then not needed (0), so only one fires.
    const limit = target.lookup(name)?.timeoutMs ?? target.defaultTimeoutMs;
    const timeoutMs = limit > 0 ? Math.min(limit, MAX_SDK_TIMEOUT_MS) : undefined;
    const dispatchTimeoutMs = timeoutMs === undefined ? undefined : 0;
    const execute = (input: unknown, runContext?: RunContext<unknown>, details?: { toolCall?: { callId?: string }; signal?: AbortSignal }): Promise<ToolOutput> => {
      const callId = details?.toolCall?.callId;
      // Asked per call id: an approval of this call in the run state, not of another one. Only for calls that can reach the gate.
      const approved = callId !== undefined && bridge.mayAsk(name) && runContext?.isToolApproved({ toolName: name, callId }) === true;
      return runCall({
        name,
        args: input,
        toolCallId: callId,
        signal: details?.signal,
        scope: bridge.scopeFor(name, input, callId, approved),
        timeoutMs: dispatchTimeoutMs,
      });
    };
    // A call id the run state holds no decision for is a fresh request (a provider may reuse ids across turns).
    const needsApproval = async (context: RunContext<unknown>, input: unknown, callId?: string): Promise<boolean> =>
      bridge.mayAsk(name) &&
      (await bridge.requestFor(name, input, callId, callId === undefined || context?.isToolApproved({ toolName: name, callId }) === undefined)).length > 0;
    // The SDK's default error function would turn a throw into its own text; nothing throws here, and null keeps it from rewording.
    const common = { name, description, execute, needsApproval, errorFunction: null, ...(timeoutMs === undefined ? {} : { timeoutMs }) };
    const made =
      strictParameters !== undefined
        ? agents.tool({ ...common, strict: true, parameters: strictParameters as never })
        : agents.tool({ ...common, strict: false, parameters: { ...parameters, additionalProperties: true } as never });
    return made as unknown as FunctionTool;
  });
}

/** Text, or for a multimodal result the SDK's text and image outputs (audio stays a placeholder in the text). */
function toolOutput(result: IntegrationResult): ToolOutput {
  if (result.parts === undefined) return result.content;
  const out: Exclude<ToolOutput, string> = [];
  for (const part of result.parts) {
    if (part.type === "text") out.push({ type: "text", text: part.text });
    else if (part.mediaType.startsWith("image/")) out.push({ type: "image", image: { data: part.data, mediaType: part.mediaType } });
    else out.push({ type: "text", text: `[${part.mediaType}, not sent]` });
  }
  return out;
}
