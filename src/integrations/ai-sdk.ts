/**
 * The Vercel AI SDK adapter (`mibyan-tools/ai-sdk`, for `ai@6`): the registry's tools as an AI
 * SDK `ToolSet`. Each tool's input schema is the registry's JSON Schema as it is (`jsonSchema()`,
 * no validation on the SDK's side: ours runs in dispatch), every call goes through
 * `handleFunctionCall` with the call's `abortSignal`, a failure reaches the model as an
 * `error-text` output, media as `content` parts, and a command our detection flags is put to
 * the SDK's own approval flow (`needsApproval`: a `tool-approval-request`, answered with a
 * `tool-approval-response`) instead of our gate's prompt. See docs/integrations/ai-sdk.md.
 *
 * `ai` is an optional peer: imported here, at load, so that `import "mibyan-tools"` never loads
 * it and this module fails with what to install when it is missing.
 */

import type { JSONSchema7, ModelMessage, Tool, ToolExecutionOptions, ToolSet } from "ai";

import { isMultimodalResult } from "../dispatch/multimodal.js";
import { createApprovalBridge } from "./approval-bridge.js";
import { importPeer } from "./peer-import.js";
import type { IntegrationPart } from "./result-parts.js";
import { callScope, createCallRunnerWith } from "./run-call.js";
import { planIntegrationTools } from "./select-tools.js";
import type { IntegrationOptions } from "./types.js";

const ai = await importPeer("ai", "mibyan-tools/ai-sdk", () => import("ai"));

/**
 * What `execute` returns, and so what a `tool-result` part's `output` holds: exactly the string
 * `handleFunctionCall` returns, or for a multimodal result that text with its parts (base64
 * media), which `toModelOutput` sends as media.
 */
export type AiSdkToolOutput = string | { type: "multimodal"; text: string; parts: IntegrationPart[] };

export type AiSdkToolsOptions = IntegrationOptions;

type ToolResultOutput = Awaited<ReturnType<NonNullable<Tool<Record<string, unknown>, AiSdkToolOutput>["toModelOutput"]>>>;

/**
 * Failed calls by tool call id, from `execute` to the `toModelOutput` the SDK calls right after
 * it: the output string itself cannot say it is an error. Bounded: an entry whose output is
 * never converted (a run cut short) is dropped after `FAILED_CALLS_KEPT` newer ones.
 */
const FAILED_CALLS_KEPT = 1_000;

/** The registry's tools as an AI SDK `ToolSet`, keyed by tool name. */
export function toAiSdkTools(options: AiSdkToolsOptions = {}): ToolSet {
  const { tools: selected, allowedTools: allowed, bridge: search } = planIntegrationTools(options);
  const failed = new Map<string, boolean>();
  // The mapping runs in the same promise step as the call (createCallRunnerWith): no extra hop per call.
  const runCall = createCallRunnerWith(options, allowed, (result, call): AiSdkToolOutput => {
    if (result.isError && call.toolCallId !== undefined) {
      failed.set(call.toolCallId, true);
      if (failed.size > FAILED_CALLS_KEPT) failed.delete(failed.keys().next().value!);
    }
    return result.parts === undefined ? result.content : { type: "multimodal", text: result.content, parts: result.parts };
  }, "ai-sdk", search);
  const bridge = createApprovalBridge(callScope(options), options.registry);
  const tools: ToolSet = {};
  for (const { name, description, parameters } of selected) {
    const entry: Tool<Record<string, unknown>, AiSdkToolOutput> = {
      description,
      inputSchema: ai.jsonSchema<Record<string, unknown>>(parameters as JSONSchema7),
      execute: (input: Record<string, unknown>, call: ToolExecutionOptions): Promise<AiSdkToolOutput> => {
        // The messages are searched only for a call that can reach the gate: the approval is of this call id.
        const approved = bridge.mayAsk(name) && approvedInMessages(call.messages, call.toolCallId);
        return runCall({
          name,
          args: input,
          toolCallId: call.toolCallId,
          signal: call.abortSignal,
          scope: bridge.scopeFor(name, input, call.toolCallId, approved),
        });
      },
      toModelOutput: ({ toolCallId, output }): ToolResultOutput => {
        if (typeof output !== "string") {
          if (isMultimodalOutput(output)) return { type: "content", value: output.parts.map(toContentPart) };
          return { type: "json", value: output as never };
        }
        const isError = failed.get(toolCallId) ?? looksLikeError(output);
        failed.delete(toolCallId);
        return isError ? { type: "error-text", value: output } : { type: "text", value: output };
      },
      // Every tool: a plugin's approve directive can make any call need a person. Without a way to reach the gate, false at once.
      // The first request for a call id is kept: the SDK asks again, with the input it is about to run, before it runs an approved call.
      needsApproval: async (input: Record<string, unknown>, { toolCallId, messages }: { toolCallId: string; messages?: ModelMessage[] }) =>
        bridge.mayAsk(name) && (await bridge.requestFor(name, input, toolCallId, !answeredInMessages(messages, toolCallId))).length > 0,
    };
    tools[name] = entry;
  }
  return tools;
}

function isMultimodalOutput(output: unknown): output is Extract<AiSdkToolOutput, { type: "multimodal" }> {
  return typeof output === "object" && output !== null && (output as { type?: unknown }).type === "multimodal" && Array.isArray((output as { parts?: unknown }).parts);
}

/** `media` (base64 and its type) is what every `ai@6` release takes; its successors `image-data`/`file-data` came later in 6.x. */
function toContentPart(part: IntegrationPart): { type: "text"; text: string } | { type: "media"; data: string; mediaType: string } {
  return part.type === "text" ? { type: "text", text: part.text } : { type: "media", data: part.data, mediaType: part.mediaType };
}

/**
 * For an output whose `execute` ran in another process (messages stored and converted later):
 * an error result of dispatch is a JSON object with a string `error` and no `output`. A terminal
 * result has `output` (and `"error": null` when it ran), so a failing command is not an error.
 */
function looksLikeError(text: string): boolean {
  if (!text.startsWith("{")) return false;
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    return typeof value === "object" && value !== null && typeof value.error === "string" && !("output" in value);
  } catch {
    return false;
  }
}

/**
 * The person's answer in `messages` to the approval requests made for `toolCallId`: `none` when
 * nothing answered one, `denied` when any answer was a denial, else `approved`.
 */
function approvalAnswer(messages: readonly ModelMessage[] | undefined, toolCallId: string): "none" | "approved" | "denied" {
  if (messages === undefined) return "none";
  const requested = new Set<string>();
  for (const message of messages) {
    if (message.role !== "assistant" || typeof message.content === "string") continue;
    for (const part of message.content) if (part.type === "tool-approval-request" && part.toolCallId === toolCallId) requested.add(part.approvalId);
  }
  if (requested.size === 0) return "none";
  let answer: "none" | "approved" = "none";
  for (const message of messages) {
    if (message.role !== "tool") continue;
    for (const part of message.content) {
      if (part.type !== "tool-approval-response" || !requested.has(part.approvalId)) continue;
      // A denial anywhere is a denial.
      if (!part.approved) return "denied";
      answer = "approved";
    }
  }
  return answer;
}

/** Whether the messages hold any answer (approved or not) to an approval request of this call id. */
function answeredInMessages(messages: readonly ModelMessage[] | undefined, toolCallId: string): boolean {
  return approvalAnswer(messages, toolCallId) !== "none";
}

/**
 * Whether the messages the SDK executes this call with hold a person's approval of exactly this
 * call: a `tool-approval-response` with `approved: true` answering a `tool-approval-request`
 * made for this `toolCallId`. The SDK runs a call that needed approval only after that response
 * (and re-checks `needsApproval` first); reading it here binds our one-shot grant to the call
 * the person approved, not to whatever else runs in the session.
 */
export function approvedInMessages(messages: readonly ModelMessage[] | undefined, toolCallId: string): boolean {
  return approvalAnswer(messages, toolCallId) === "approved";
}

