/**
 * A call's outcome as adapters hand it to a framework: the model-facing text, whether it
 * failed, and, for a multimodal result, its parts with the media as base64 (frameworks have
 * their own media parts; the text keeps only placeholders, never base64).
 */

import { isMultimodalResult } from "../dispatch/multimodal.js";
import type { FunctionCallOutcome } from "../dispatch/handle-function-call.js";
import { redactForModel } from "../redaction/tool-output.js";

export type IntegrationPart = { type: "text"; text: string } | { type: "media"; data: string; mediaType: string };

export interface IntegrationResult {
  /** What `handleFunctionCall` returns: the text the model sees. */
  content: string;
  /** A failed call (an error result, not a tool's ordinary output such as a non-zero exit code). */
  isError: boolean;
  /** Set for a multimodal result: text and media parts, in order. */
  parts?: IntegrationPart[] | undefined;
}

export function integrationResult(outcome: FunctionCallOutcome): IntegrationResult {
  const data = outcome.result.data;
  if (outcome.isError || !isMultimodalResult(data)) return { content: outcome.content, isError: outcome.isError };
  const parts = data.parts.map((part): IntegrationPart =>
    // The typed result keeps the tool's words unredacted; what reaches the model passes the policy, as `content` did.
    part.type === "text" ? { type: "text", text: redactForModel(part.text) } : { type: "media", data: part.data, mediaType: part.mimeType },
  );
  return { content: outcome.content, isError: false, parts };
}
