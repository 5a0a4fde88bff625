/**
 * Redaction of JSON text without breaking it. The text rules of redact.ts
 * work on free text: run over a JSON document they would turn
 * `"password":"abc"` into `"password":[REDACTED]` (no longer JSON) and stop a
 * value at an escaped quote (`API_KEY=\"abc\"` keeps `abc`). So JSON is
 * parsed, every string (keys included) is redacted as free text, every string
 * or number under a secret's name (`password`, `api_key`, ...) is replaced
 * whole, and the value is written out again.
 */

import { REDACTED, isSecretName, mayContainSecret, redactSecrets } from "./redact.js";

/** Deeper than this, a value is replaced whole (JSON.parse allows far more; a tool's result should never get near). */
const MAX_DEPTH = 200;

const ALREADY_REDACTED = /^\[REDACTED\]$/i;

/** A parsed JSON value with its secrets replaced (a new value; the input is not changed). */
export function redactJsonValue(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return redactSecrets(value);
  if (value === null || typeof value !== "object") return value;
  if (depth >= MAX_DEPTH) return REDACTED;
  if (Array.isArray(value)) return value.map((item) => redactJsonValue(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    const name = redactSecrets(key);
    // As the text rules: an empty value or one already redacted (any case) is left alone.
    const secret = isSecretName(key) && (typeof item === "string" ? item !== "" && !ALREADY_REDACTED.test(item) : typeof item === "number");
    // defineProperty: a key named __proto__ stays an own property, as JSON.parse made it.
    Object.defineProperty(out, name, { value: secret ? REDACTED : redactJsonValue(item, depth + 1), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * Text a tool hands the model, redacted: a JSON object or array is redacted
 * as JSON (and stays valid JSON), anything else as free text.
 */
export function redactTextOrJson(text: string): string {
  if (!mayContainSecret(text)) return text;
  const first = text.trimStart().charCodeAt(0);
  if (first === 123 /* { */ || first === 91 /* [ */) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return redactSecrets(text);
    }
    // Written out again only when something was redacted: text without a secret keeps its own layout.
    const redacted = JSON.stringify(redactJsonValue(parsed));
    return redacted === JSON.stringify(parsed) ? text : redacted;
  }
  return redactSecrets(text);
}
