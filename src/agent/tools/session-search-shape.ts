/**
 * How `session_search` shows stored sessions and messages to the model: ISO times, content and
 * tool-call arguments cut to a budget (with how much was cut), internal columns left out.
 */

import { stripAnsi } from "../../terminal/ansi.js";
import type { SessionRecord, StoredMessage } from "../stores/sessions/types.js";

/** Characters of message content all results of one discovery may carry together. */
export const DISCOVER_CONTENT_BUDGET = 80_000;
/** Per-message content caps: never below the floor, never above the ceiling, whatever the budget. */
export const MIN_MESSAGE_CHARS = 300;
export const MAX_MESSAGE_CHARS = 4000;
/** Read mode: content cap per message (30 messages at most). */
export const READ_MESSAGE_CHARS = 2000;

export interface ShapedMessage {
  id: number;
  role: string;
  content: string | null;
  timestamp: string;
  tool_name?: string;
  tool_calls?: { id?: string; name: string; arguments: string }[];
  tool_call_id?: string;
  synthetic?: string;
  anchor?: true;
  content_truncated?: true;
  original_content_chars?: number;
}

export function isoTime(ms: number | null | undefined): string | null {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return null;
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

export function shapeMessage(message: StoredMessage, maxChars: number, anchorId?: number): ShapedMessage {
  // Stored terminal output may carry escape sequences: noise to a model, and not text it should echo.
  const content = message.content !== null && message.content.includes("\u001b") ? stripAnsi(message.content) : message.content;
  const shaped: ShapedMessage = { id: message.id, role: message.role, content, timestamp: isoTime(message.timestamp) ?? "" };
  if (content !== null && content.length > maxChars) {
    shaped.content = cut(content, maxChars);
    shaped.content_truncated = true;
    shaped.original_content_chars = content.length;
  }
  if (message.tool_name !== undefined) shaped.tool_name = message.tool_name;
  if (message.tool_calls !== undefined) {
    // Arguments can hold a whole file (write_file): they share the content cap.
    shaped.tool_calls = message.tool_calls.map((call) => ({
      ...(typeof call.id === "string" ? { id: call.id } : {}),
      name: String(call.function?.name ?? ""),
      arguments: cut(String(call.function?.arguments ?? ""), maxChars),
    }));
  }
  if (message.tool_call_id !== undefined) shaped.tool_call_id = message.tool_call_id;
  if (message.synthetic !== undefined) shaped.synthetic = message.synthetic;
  if (anchorId !== undefined && message.id === anchorId) shaped.anchor = true;
  return shaped;
}

export function sessionMeta(session: SessionRecord, title: string | null = session.title): Record<string, unknown> {
  return { when: isoTime(session.started_at), source: session.source, model: session.model, title };
}

/** The per-message cap for `results` discovery results of `messagesEach` messages. */
export function discoverMessageCap(results: number, messagesEach: number): number {
  const share = Math.floor(DISCOVER_CONTENT_BUDGET / Math.max(1, results * messagesEach));
  return Math.max(MIN_MESSAGE_CHARS, Math.min(MAX_MESSAGE_CHARS, share));
}
