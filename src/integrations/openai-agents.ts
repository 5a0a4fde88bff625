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
import { approvalRequired } from "./approval-preview.js";
import { importPeer } from "./peer-import.js";
import type { IntegrationResult } from "./result-parts.js";
import { callScope, createCallRunner } from "./run-call.js";
import { selectIntegrationTools } from "./select-tools.js";
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

/** The registry's tools as Agents SDK `FunctionTool`s, in name order. */
export function toOpenAIAgentsTools(options: OpenAIAgentsToolsOptions = {}): FunctionTool[] {
  const selected = selectIntegrationTools(options);
  const allowed: ReadonlySet<string> = new Set(selected.map((t) => t.name));
  const scope = callScope(options);
  const runCall = createCallRunner(options, allowed);
  return selected.map(({ name, description, parameters }) => {
    let strictParameters: Record<string, unknown> | undefined;
    if (options.strict !== false) {
      try {
        strictParameters = toOpenAIStrict({ name, description, parameters }).function.parameters;
      } catch {
        // Left non-strict: the model may then send what the schema does not allow, and our validation says so.
      }
    }
    const execute = async (input: unknown, runContext?: RunContext<unknown>, details?: { toolCall?: { callId?: string }; signal?: AbortSignal }): Promise<ToolOutput> => {
      const callId = details?.toolCall?.callId;
      const result = await runCall({
        name,
        args: input,
        toolCallId: callId,
        signal: details?.signal,
        // Asked per call id: an approval of this call in the run state, not of another one.
        approved: callId !== undefined && runContext?.isToolApproved({ toolName: name, callId }) === true,
      });
      return toolOutput(result);
    };
    const needsApproval =
      name === "terminal" ? async (_context: RunContext<unknown>, input: unknown) => approvalRequired(name, input, scope) : false;
    // The SDK's default error function would turn a throw into its own text; nothing throws here, and null keeps it from rewording.
    const common = { name, description, execute, needsApproval, errorFunction: null };
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
