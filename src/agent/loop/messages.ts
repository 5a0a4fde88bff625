/**
 * The messages a request carries. Each role keeps only the fields the Chat Completions API defines
 * (an allowlist, not a blocklist), so what the loop, a store or a caller keeps beside a message —
 * `tool_name`, `reasoning`, `finish_reason`, `timestamp`, any `_`-prefixed key, a stored row's
 * `id` — never reaches the endpoint.
 */

import type { AgentAssistantMessage, AgentMessage, AgentToolCall } from "../types.js";
import { AgentConfigError } from "./errors.js";

/** A message in the request body (the openai client's `ChatCompletionMessageParam`, structurally). */
export type ApiMessage = Record<string, unknown> & { role: string };

function toApiToolCall(call: AgentToolCall): AgentToolCall {
  return { id: call.id, type: "function", function: { name: call.function.name, arguments: call.function.arguments } };
}

export function toApiMessage(message: AgentMessage): ApiMessage {
  switch (message.role) {
    case "system":
      return message.name === undefined ? { role: "system", content: message.content } : { role: "system", content: message.content, name: message.name };
    case "user":
      return message.name === undefined ? { role: "user", content: message.content } : { role: "user", content: message.content, name: message.name };
    case "assistant": {
      const out: ApiMessage = { role: "assistant", content: message.content };
      if (message.tool_calls !== undefined && message.tool_calls.length > 0) out.tool_calls = message.tool_calls.map(toApiToolCall);
      if (message.name !== undefined) out.name = message.name;
      return out;
    }
    case "tool":
      return { role: "tool", tool_call_id: message.tool_call_id, content: message.content };
  }
}

const ROLES = new Set(["system", "user", "assistant", "tool"]);

/**
 * Checks messages a caller or a session store handed over, before anything is sent: a wrong shape
 * is the caller's error (`AgentConfigError` naming the index), not the endpoint's 400 three retries later.
 */
export function checkMessages(messages: readonly unknown[], option: string): AgentMessage[] {
  if (!Array.isArray(messages)) throw new AgentConfigError(option, `${option} must be an array of messages`);
  return messages.map((raw, index) => {
    const where = `${option}[${index}]`;
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw new AgentConfigError(option, `${where} is not a message object`);
    const message = raw as Record<string, unknown>;
    if (typeof message.role !== "string" || !ROLES.has(message.role)) {
      throw new AgentConfigError(option, `${where} has role ${JSON.stringify(message.role)}; expected system, user, assistant or tool`);
    }
    const content = message.content;
    if (message.role === "tool") {
      if (typeof message.tool_call_id !== "string" || message.tool_call_id === "") throw new AgentConfigError(option, `${where} is a tool message without a tool_call_id`);
      if (typeof content !== "string") throw new AgentConfigError(option, `${where} is a tool message whose content is not a string`);
    } else if (message.role === "assistant") {
      if (content !== null && content !== undefined && typeof content !== "string") throw new AgentConfigError(option, `${where} has an assistant content that is not a string`);
      const calls = message.tool_calls;
      if (calls !== undefined && calls !== null) {
        if (!Array.isArray(calls)) throw new AgentConfigError(option, `${where}.tool_calls is not an array`);
        calls.forEach((call: unknown, i) => {
          const c = call as { id?: unknown; function?: { name?: unknown; arguments?: unknown } } | null;
          if (typeof c?.id !== "string" || typeof c.function?.name !== "string" || typeof c.function.arguments !== "string") {
            throw new AgentConfigError(option, `${where}.tool_calls[${i}] needs a string id, function.name and function.arguments`);
          }
        });
      }
      return { ...(message as unknown as AgentAssistantMessage), content: typeof content === "string" ? content : null };
    } else if (typeof content !== "string" && !Array.isArray(content)) {
      throw new AgentConfigError(option, `${where} has no text content`);
    }
    // A copy: the loop stamps messages it records, and the caller's objects are theirs.
    return { ...message } as unknown as AgentMessage;
  });
}

/** What a tool call with no recorded result is answered with. */
export const INTERRUPTED_TOOL_RESULT = JSON.stringify({ error: "The tool call was interrupted before it returned a result." });

/**
 * The conversation with every assistant tool call answered: a call with no tool message in the
 * block after its assistant message (a run killed between the two, a history cut short) gets an
 * `INTERRUPTED_TOOL_RESULT` at the end of that block. Endpoints refuse unanswered calls with a 400.
 * Returns the same array when nothing was missing.
 */
export function answerDanglingToolCalls(messages: readonly AgentMessage[]): readonly AgentMessage[] {
  let out: AgentMessage[] | undefined;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    const calls = message.role === "assistant" ? message.tool_calls : undefined;
    if (calls === undefined || calls.length === 0) {
      out?.push(message);
      continue;
    }
    let end = i + 1;
    const answered = new Set<string>();
    while (end < messages.length && messages[end]!.role === "tool") answered.add((messages[end] as { tool_call_id: string }).tool_call_id), end++;
    const missing = calls.filter((call) => !answered.has(call.id));
    if (missing.length === 0 && out === undefined) continue;
    out ??= messages.slice(0, i) as AgentMessage[];
    out.push(...messages.slice(i, end));
    for (const call of missing) out.push({ role: "tool", tool_call_id: call.id, content: INTERRUPTED_TOOL_RESULT, tool_name: call.function.name });
    i = end - 1;
  }
  return out ?? messages;
}
