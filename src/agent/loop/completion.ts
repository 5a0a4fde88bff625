/**
 * One completion turned into the loop's assistant message: from a JSON response, or accumulated
 * from a stream's chunks (text deltas reported as they arrive, tool calls assembled by index).
 */

import type { AgentAssistantMessage, AgentToolCall, AgentUsage } from "../types.js";
import { AgentEndpointError } from "./errors.js";
import { emptyUsage, usageOf } from "./usage.js";

export interface Completion {
  message: AgentAssistantMessage;
  usage: AgentUsage;
}

type Json = Record<string, unknown>;

function toolCallsOf(raw: unknown): AgentToolCall[] {
  if (!Array.isArray(raw)) return [];
  const calls: AgentToolCall[] = [];
  raw.forEach((entry: unknown, index) => {
    const call = (entry ?? {}) as Json;
    const fn = (call.function ?? {}) as Json;
    // A call without a name is still answered (dispatch reports it malformed); an id is made up if missing,
    // since the tool message must quote one.
    calls.push({
      id: typeof call.id === "string" && call.id !== "" ? call.id : `call_${index}`,
      type: "function",
      function: { name: typeof fn.name === "string" ? fn.name : "", arguments: typeof fn.arguments === "string" ? fn.arguments : fn.arguments === undefined ? "" : JSON.stringify(fn.arguments) },
    });
  });
  return calls;
}

/**
 * Ids made unique: two calls sharing an id (a sloppy server, a model echoing one) would get two tool
 * messages with that id, which endpoints refuse; the second becomes `<id>_2`.
 */
function uniqueIds(calls: AgentToolCall[]): AgentToolCall[] {
  const seen = new Set<string>();
  for (const call of calls) {
    let id = call.id;
    for (let n = 2; seen.has(id); n++) id = `${call.id}_${n}`;
    call.id = id;
    seen.add(id);
  }
  return calls;
}

function assistant(content: string | null, calls: AgentToolCall[], reasoning: string | undefined, finishReason: string | undefined): AgentAssistantMessage {
  const message: AgentAssistantMessage = { role: "assistant", content };
  if (calls.length > 0) message.tool_calls = uniqueIds(calls);
  if (reasoning !== undefined && reasoning !== "") message.reasoning = reasoning;
  if (finishReason !== undefined) message.finish_reason = finishReason;
  return message;
}

/** A non-streamed response body. */
export function completionFromResponse(body: unknown, baseURL: string): Completion {
  const choice = Array.isArray((body as Json | null)?.choices) ? ((body as Json).choices as unknown[])[0] : undefined;
  const message = (choice as Json | undefined)?.message as Json | undefined;
  if (message === undefined || message === null || typeof message !== "object") {
    throw new AgentEndpointError("bad_response", `the endpoint at ${baseURL} answered without a completion (no choices[0].message); is it a Chat Completions API?`, {
      baseURL,
      attempts: 1,
    });
  }
  const content = typeof message.content === "string" ? message.content : null;
  const reasoning = typeof message.reasoning_content === "string" ? message.reasoning_content : typeof message.reasoning === "string" ? message.reasoning : undefined;
  const finish = (choice as Json).finish_reason;
  return {
    message: assistant(content, toolCallsOf(message.tool_calls), reasoning, typeof finish === "string" ? finish : undefined),
    usage: usageOf((body as Json).usage),
  };
}

/** Accumulates a stream's chunks. */
export class StreamAccumulator {
  private text = "";
  private sawText = false;
  private reasoning = "";
  private finish: string | undefined;
  private readonly calls: { id: string; name: string; arguments: string }[] = [];
  private usage: AgentUsage | undefined;

  /** Feeds one chunk; returns the text delta it carried ("" when none). */
  push(chunk: unknown): string {
    const body = (chunk ?? {}) as Json;
    if (body.usage !== undefined && body.usage !== null) this.usage = usageOf(body.usage);
    const choice = Array.isArray(body.choices) ? (body.choices[0] as Json | undefined) : undefined;
    if (choice === undefined) return "";
    if (typeof choice.finish_reason === "string") this.finish = choice.finish_reason;
    const delta = (choice.delta ?? {}) as Json;
    if (typeof delta.reasoning_content === "string") this.reasoning += delta.reasoning_content;
    if (Array.isArray(delta.tool_calls)) {
      for (const raw of delta.tool_calls as Json[]) {
        const index = typeof raw?.index === "number" && raw.index >= 0 && raw.index < 1024 ? raw.index : this.calls.length;
        const slot = (this.calls[index] ??= { id: "", name: "", arguments: "" });
        if (typeof raw.id === "string") slot.id = raw.id;
        const fn = (raw.function ?? {}) as Json;
        if (typeof fn.name === "string") slot.name += fn.name;
        if (typeof fn.arguments === "string") slot.arguments += fn.arguments;
      }
    }
    if (typeof delta.content === "string" && delta.content !== "") {
      this.text += delta.content;
      this.sawText = true;
      return delta.content;
    }
    return "";
  }

  /** Whether a chunk said why the completion ended; a stream that stops without one was cut. */
  get finished(): boolean {
    return this.finish !== undefined;
  }

  /** The text so far (what an interrupted stream had said). */
  get partialText(): string {
    return this.text;
  }

  result(): Completion {
    const calls = this.calls
      .filter((slot) => slot !== undefined)
      .map((slot, index) => ({ id: slot.id || `call_${index}`, type: "function" as const, function: { name: slot.name, arguments: slot.arguments } }));
    const usage = this.usage ?? { ...emptyUsage(), requests: 1 };
    return { message: assistant(this.sawText ? this.text : null, calls, this.reasoning || undefined, this.finish), usage };
  }
}
