/**
 * What goes into and comes out of the store's tables: input checks (a bad message is a typed
 * `invalid` error, never a half-written turn) and rows turned back into records. JSON columns are
 * parsed leniently on the way out: a file edited by hand must not make a whole session unreadable.
 */

import { randomBytes } from "node:crypto";

import { SessionStoreError } from "./errors.js";
import { UNSPACED } from "./fts-query.js";
import { MESSAGE_ROLES, type MessageInput, type MessageRole, type SessionRecord, type StoredMessage, type StoredToolCall, type TokenUsage } from "./types.js";

/** Session ids: the rule `mibyan call --session` and the process registry use (1–200 printable characters, no spaces). */
const SESSION_ID = /^[^\s\u0000-\u001f\u007f]{1,200}$/;
const ROLE_SET: ReadonlySet<string> = new Set(MESSAGE_ROLES);
const SHORT_TEXT_MAX = 1000;
/** A cheap first test: every script UNSPACED matches lies above U+0E00 (most text never gets to the script test). */
const NOT_LATIN = /[^\u0000-\u0dff]/;

export function checkSessionId(value: unknown): string {
  if (typeof value !== "string" || !SESSION_ID.test(value)) {
    throw new SessionStoreError("invalid", `not a valid session id: ${JSON.stringify(String(value)).slice(0, 80)} (1 to 200 printable characters, no spaces)`);
  }
  return value;
}

export function isMessageRole(value: unknown): value is MessageRole {
  return typeof value === "string" && ROLE_SET.has(value);
}

/** `20261204_143501_a1b2c3`: sortable by start time, readable, unique enough with the random tail (collisions are retried). */
export function newSessionId(now: number): string {
  const iso = new Date(now).toISOString();
  return `${iso.slice(0, 10).replace(/-/g, "")}_${iso.slice(11, 19).replace(/:/g, "")}_${randomBytes(3).toString("hex")}`;
}

function optionalText(value: unknown, field: string, index: number, max = Infinity): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") throw new SessionStoreError("invalid", `message ${index}: ${field} must be a string, got ${typeof value}`);
  if (value.length > max) throw new SessionStoreError("invalid", `message ${index}: ${field} is longer than ${max} characters`);
  return value;
}

function count(value: unknown, field: string): number {
  if (value === undefined || value === null) return 0;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new SessionStoreError("invalid", `${field} must be a non-negative integer, got ${JSON.stringify(value)}`);
  }
  return value;
}

export interface UsageCounts {
  input: number;
  output: number;
  cacheRead: number;
  reasoning: number;
}

export function usageCounts(usage: TokenUsage | undefined): UsageCounts {
  return {
    input: count(usage?.input_tokens, "usage.input_tokens"),
    output: count(usage?.output_tokens, "usage.output_tokens"),
    cacheRead: count(usage?.cache_read_tokens, "usage.cache_read_tokens"),
    reasoning: count(usage?.reasoning_tokens, "usage.reasoning_tokens"),
  };
}

/** The columns of one message row, in insert order. */
export type MessageRow = [
  role: string,
  content: string | null,
  contentParts: string | null,
  toolCalls: string | null,
  toolCallId: string | null,
  toolName: string | null,
  reasoning: string | null,
  finishReason: string | null,
  tokenCount: number | null,
  synthetic: string | null,
  unspaced: 0 | 1,
  timestamp: number,
];

function partsText(parts: readonly unknown[]): string {
  return parts
    .map((part) => (part !== null && typeof part === "object" && typeof (part as { text?: unknown }).text === "string" ? (part as { text: string }).text : ""))
    .filter((text) => text !== "")
    .join("\n");
}

function checkToolCalls(value: unknown, index: number): StoredToolCall[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value)) throw new SessionStoreError("invalid", `message ${index}: tool_calls must be an array`);
  for (const [i, call] of value.entries()) {
    const fn = (call as { function?: { name?: unknown; arguments?: unknown } } | null)?.function;
    if (fn === null || typeof fn !== "object" || typeof fn.name !== "string" || typeof fn.arguments !== "string") {
      throw new SessionStoreError("invalid", `message ${index}: tool_calls[${i}] must be {id, function: {name, arguments: string}}`);
    }
  }
  return value.length === 0 ? null : (value as StoredToolCall[]);
}

/** Checks one message to append and returns its row and its number of tool calls. */
export function messageRow(message: MessageInput, index: number, now: number): { row: MessageRow; toolCalls: number } {
  if (message === null || typeof message !== "object") throw new SessionStoreError("invalid", `message ${index} is not an object`);
  if (!isMessageRole(message.role)) {
    throw new SessionStoreError("invalid", `message ${index}: role must be one of ${MESSAGE_ROLES.join(", ")}, got ${JSON.stringify(message.role)}`);
  }
  let content: string | null;
  let contentParts: string | null = null;
  if (Array.isArray(message.content)) {
    content = partsText(message.content);
    contentParts = JSON.stringify(message.content);
  } else {
    content = optionalText(message.content, "content", index);
  }
  const toolCalls = checkToolCalls(message.tool_calls, index);
  const timestamp = message.timestamp ?? now;
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) throw new SessionStoreError("invalid", `message ${index}: timestamp must be milliseconds since the epoch`);
  const toolName = optionalText(message.tool_name, "tool_name", index, SHORT_TEXT_MAX);
  const toolCallsJson = toolCalls === null ? null : JSON.stringify(toolCalls);
  const unspaced = [content, toolName, toolCallsJson].some((text) => text !== null && NOT_LATIN.test(text) && UNSPACED.test(text)) ? 1 : 0;
  const tokenCount = message.token_count === undefined || message.token_count === null ? null : count(message.token_count, `message ${index}: token_count`);
  return {
    row: [
      message.role,
      content,
      contentParts,
      toolCallsJson,
      optionalText(message.tool_call_id, "tool_call_id", index, SHORT_TEXT_MAX),
      toolName,
      optionalText(message.reasoning, "reasoning", index),
      optionalText(message.finish_reason, "finish_reason", index, SHORT_TEXT_MAX),
      tokenCount,
      optionalText(message.synthetic, "synthetic", index, SHORT_TEXT_MAX),
      unspaced,
      timestamp,
    ],
    toolCalls: toolCalls?.length ?? 0,
  };
}

function parseJson(text: unknown): unknown {
  if (typeof text !== "string") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A `messages` row (as better-sqlite3 returns it) as a StoredMessage; empty optional fields left out. */
export function toStoredMessage(row: Record<string, unknown>): StoredMessage {
  const message: StoredMessage = {
    id: row.id as number,
    session_id: row.session_id as string,
    role: row.role as MessageRole,
    content: (row.content as string | null) ?? null,
    timestamp: row.timestamp as number,
  };
  const parts = parseJson(row.content_parts);
  if (Array.isArray(parts)) message.content_parts = parts;
  const calls = parseJson(row.tool_calls);
  if (Array.isArray(calls)) message.tool_calls = calls as StoredToolCall[];
  for (const key of ["tool_call_id", "tool_name", "reasoning", "finish_reason", "synthetic"] as const) {
    const value = row[key];
    if (typeof value === "string") message[key] = value;
  }
  if (typeof row.token_count === "number") message.token_count = row.token_count;
  return message;
}

export function toSessionRecord(row: Record<string, unknown>): SessionRecord {
  return {
    id: row.id as string,
    source: row.source as string,
    model: (row.model as string | null) ?? null,
    title: (row.title as string | null) ?? null,
    parent_session_id: (row.parent_session_id as string | null) ?? null,
    started_at: row.started_at as number,
    updated_at: row.updated_at as number,
    ended_at: (row.ended_at as number | null) ?? null,
    end_reason: (row.end_reason as string | null) ?? null,
    message_count: row.message_count as number,
    tool_call_count: row.tool_call_count as number,
    input_tokens: row.input_tokens as number,
    output_tokens: row.output_tokens as number,
    cache_read_tokens: row.cache_read_tokens as number,
    reasoning_tokens: row.reasoning_tokens as number,
  };
}

/** One line of at most `max` characters (whitespace runs collapsed), with `…` when cut. */
export function previewText(text: string | null | undefined, max = 120): string {
  if (!text) return "";
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
