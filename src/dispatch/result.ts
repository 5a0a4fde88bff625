import type { ToolError, ToolErrorKind, ToolResult, ValidationIssue } from "../registry/types.js";
import { capText, describeThrown } from "../util/text.js";
import { mayContainSecret } from "../redaction/redact.js";
import { redactForModel } from "../redaction/tool-output.js";
import { isMultimodalResult, multimodalText } from "./multimodal.js";

const TOOL_RESULT_KEYS = new Set(["success", "data", "error", "metadata"]);
/** Larger string results are never parsed for an `error` field (they are passed on as successes). */
const MAX_PARSED_RESULT_CHARS = 4_000_000;

/** A successful result. */
export function ok<T>(data: T, metadata?: Record<string, unknown>): ToolResult<T> {
  return metadata === undefined ? { success: true, data } : { success: true, data, metadata };
}

/** A failed result; the model receives `{"error": message}`. */
export function fail(message: string, kind: ToolErrorKind = "failed", issues?: ValidationIssue[]): ToolResult<never> {
  const error: ToolError = issues === undefined ? { kind, message } : { kind, message, issues };
  return { success: false, error };
}

/**
 * A handler may return a ToolResult as a plain object (`{ success: true, data }`):
 * any object whose `success` is a boolean and whose other keys are ToolResult keys.
 */
export function isToolResult(value: unknown): value is ToolResult {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  if (typeof (value as { success?: unknown }).success !== "boolean") return false;
  for (const key in value) if (!TOOL_RESULT_KEYS.has(key)) return false;
  return true;
}

/**
 * What the handler returned, as a ToolResult. Strings pass through verbatim
 * (a JSON object string with a truthy top-level `error` is a failure, the
 * convention of Mibyan's Python tools); other values must be JSON-serialisable.
 */
export function resultFromHandlerValue(toolName: string, value: unknown): ToolResult {
  switch (typeof value) {
    case "string":
      return stringResult(value);
    case "number":
    case "boolean":
      return { success: true, data: value };
    case "undefined":
      return fail(
        `Tool ${toolName} returned undefined; a handler must return a string, a JSON-serialisable value or a ToolResult`,
        "invalid_result",
      );
    case "object":
      if (value === null) return { success: true, data: null };
      if (isToolResult(value)) return value.success ? checkSerialisable(toolName, value, "returned") : checkFailedResult(toolName, value);
      return checkSerialisable(toolName, { success: true, data: value }, "returned");
    default:
      return fail(
        `Tool ${toolName} returned a ${typeof value}, which cannot be sent to the model; return a string, a JSON-serialisable value or a ToolResult`,
        "invalid_result",
      );
  }
}

/**
 * The JSON text of the success checked last, so that rendering it right
 * after does not serialise the same value twice. One slot, not a WeakMap:
 * a WeakMap entry per call costs about a microsecond in garbage collection
 * (measured), more than the rest of dispatch. Calls that interleave simply
 * miss and serialise again; the slot is emptied when it is used, so it keeps
 * at most one result alive.
 */
let lastCheckedResult: ToolResult | undefined;
let lastCheckedText = "";

/**
 * A success whose data cannot be sent to the model as JSON (a circular value,
 * a bigint anywhere inside, a `toJSON` that throws, a value nested too deep
 * for the serialiser, a top-level value JSON drops) is turned into an
 * `invalid_result` failure here, so every caller — `invoke()`, post-hooks,
 * `isError` — sees the same failure the model does. Nested functions,
 * symbols and `undefined` are dropped as `JSON.stringify` drops them.
 *
 * `source` says who produced the value: "returned" (the handler) or
 * "post-hook" (the result as the post-hooks left it; always re-serialised,
 * because a hook may have changed the data in place).
 */
export function checkSerialisable(toolName: string, result: ToolResult, source: "returned" | "post-hook"): ToolResult {
  if (!result.success) return result;
  const data = result.data;
  if (data === undefined || typeof data === "string") return result;
  // Well-formed by its guard (strings only): serialisable, and rendered as text, not JSON, so the
  // megabytes of base64 an image holds are never stringified on the way.
  if (isMultimodalResult(data)) return result;
  let text: string | undefined;
  let problem = "";
  try {
    text = JSON.stringify(data);
  } catch (thrown) {
    problem = `: ${describeThrownSafely(thrown)}`;
  }
  if (text === undefined) {
    const who = source === "returned" ? `Tool ${toolName} returned` : `The result of ${toolName}, as its post-hooks left it, is`;
    const message = `${who} a value that is not JSON-serialisable${problem}; a handler must return a string, a JSON-serialisable value or a ToolResult`;
    const failure = fail(message, "invalid_result");
    return result.metadata === undefined ? failure : { ...failure, metadata: result.metadata };
  }
  lastCheckedResult = result;
  lastCheckedText = text;
  return result;
}

/** `describeThrown`, for values a handler threw: one whose toJSON and toString both throw is still described. */
export function describeThrownSafely(thrown: unknown): string {
  try {
    return describeThrown(thrown);
  } catch {
    return "an exception that cannot be described";
  }
}

function checkFailedResult(toolName: string, result: ToolResult): ToolResult {
  if (result.success) return result;
  const error = result.error as unknown;
  if (error !== null && typeof error === "object" && typeof (error as ToolError).message === "string") {
    const kind = (error as ToolError).kind ?? "failed";
    return { ...result, error: { ...(error as ToolError), kind } };
  }
  const message = typeof error === "string" && error !== "" ? error : `Tool ${toolName} reported a failure without a message`;
  return { ...result, error: { kind: "failed", message } };
}

function stringResult(text: string): ToolResult {
  // Cheap pre-filter: only strings that look like an error object are parsed.
  if (text.length <= MAX_PARSED_RESULT_CHARS && text.charCodeAt(0) === 123 /* { */ && text.includes('"error"')) {
    try {
      const parsed = JSON.parse(text) as unknown;
      const error = (parsed as { error?: unknown }).error;
      if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) && error) {
        const message = typeof error === "string" ? error : JSON.stringify(error);
        return { success: false, data: text, error: { kind: "failed", message } };
      }
    } catch {
      // Not JSON: an ordinary string result.
    }
  }
  return { success: true, data: text };
}

export interface RenderLimits {
  maxResultChars: number;
  maxErrorChars: number;
}

/**
 * Successes whose model-facing text must be redacted when rendered: output of
 * a tool registered with `redactOutput` (plugin and MCP tools by default;
 * built-ins redact their own output, line for line) in which a secret may be. Only results that may hold one are added,
 * so the common call pays one scan and no allocation. The typed result keeps
 * the tool's data as it returned it: redaction is of what the model sees.
 */
const redactOnRender = new WeakSet<ToolResult>();

/** Marks a final result for redaction when its tool asks for it and its text may hold a secret. */
export function screenOutput(result: ToolResult, redactOutput: boolean): void {
  if (!result.success || !redactOutput) return;
  const data = result.data;
  if (typeof data === "string") {
    if (mayContainSecret(data)) redactOnRender.add(result);
  } else if (isMultimodalResult(data)) {
    if (mayContainSecret(multimodalText(data))) redactOnRender.add(result);
  } else if (data !== null && typeof data === "object") {
    // The text checkSerialisable just made; without it, redact to be safe.
    if (lastCheckedResult !== result || mayContainSecret(lastCheckedText)) redactOnRender.add(result);
  }
}

/**
 * The result of a call whose signal aborted (time limit or cancellation)
 * before its handler settled, when the handler settled within the grace
 * (pipeline.ts): the `timeout`/`cancelled` failure, carrying what the
 * handler delivered as its `data` (the terminal's JSON with the partial
 * output, exit code 130 and `status`). A handler's own failure without data
 * adds its message; a result that cannot be sent is dropped.
 */
export function cutShortResult(failure: ToolResult, late: ToolResult): ToolResult {
  const error = failure.error!;
  const metadata = late.metadata;
  let result: ToolResult;
  if (late.success) {
    if (late.data === undefined) return failure;
    result = { success: false, data: late.data, error };
  } else if (late.error?.kind === "invalid_result") {
    return failure;
  } else if (late.data !== undefined) {
    result = { success: false, data: late.data, error };
  } else {
    result = { success: false, error: { kind: error.kind, message: `${error.message}: ${late.error?.message ?? "the tool reported a failure"}` } };
  }
  if (metadata !== undefined) result.metadata = metadata;
  return result;
}

/**
 * The text of a failure that carries the tool's own words: a handler's JSON
 * error string (it may carry output and an exit code), or what a cut-short
 * handler delivered — as written when it is itself an error JSON (the
 * terminal's `{"output": ..., "exit_code": 130, "status": "cancelled"}`),
 * otherwise `{"error": <why the call was cut short>, "output": <what it returned>}`.
 */
function ownFailureText(result: ToolResult): string | undefined {
  const error = result.error;
  const data = result.data;
  if (data === undefined || error === undefined) return undefined;
  if (error.kind === "failed") return typeof data === "string" ? data : undefined;
  if (error.kind !== "timeout" && error.kind !== "cancelled") return undefined;
  if (typeof data === "string" && !stringResult(data).success) return data;
  try {
    return JSON.stringify({ error: error.message, output: data });
  } catch {
    return undefined;
  }
}

/**
 * The model-facing string: a success's data (strings verbatim, a multimodal
 * result as its text with media placeholders — see multimodal.ts — the rest as
 * JSON), or `{"error": ...}` for a failure. Always a well-formed string; an
 * over-long result becomes a JSON object with the head and tail kept. Error
 * texts of every tool, and the output of tools that are not built in, pass
 * the redaction policy (`redactForModel`) on the way.
 */
export function renderResult(toolName: string, result: ToolResult, limits: RenderLimits): string {
  let text: string;
  if (!result.success) {
    const own = ownFailureText(result);
    if (own === undefined) return renderError(result.error, limits.maxErrorChars);
    text = redactForModel(own);
  } else {
    const data = result.data;
    if (typeof data === "string") text = data;
    else if (data === undefined) text = '{"success":true}';
    else if (isMultimodalResult(data)) text = multimodalText(data);
    else {
      // Dispatch checked (and serialised) every success before it got here; a
      // result built elsewhere is checked now, with the same message.
      if (lastCheckedResult !== result) {
        const checked = checkSerialisable(toolName, result, "returned");
        if (!checked.success) return renderError(checked.error, limits.maxErrorChars);
      }
      text = lastCheckedText;
      lastCheckedResult = undefined;
      lastCheckedText = "";
    }
    if (redactOnRender.has(result)) text = redactForModel(text);
  }
  if (text.length <= limits.maxResultChars) return text;
  return truncatedResult(text, limits.maxResultChars, result.success ? undefined : capText(redactForModel(result.error!.message), limits.maxErrorChars));
}

function renderError(error: ToolError | undefined, maxErrorChars: number): string {
  const message = capText(redactForModel(error?.message ?? "Tool call failed"), maxErrorChars);
  if (error?.issues !== undefined && error.issues.length > 0) {
    return JSON.stringify({ error: message, issues: error.issues.slice(0, 20).map(({ path, message: m }) => ({ path, message: m })) });
  }
  return JSON.stringify({ error: message });
}

function truncatedResult(text: string, max: number, error?: string): string {
  const head = Math.floor(max * 0.4);
  const tail = max - head;
  const omitted = text.length - head - tail;
  return JSON.stringify({
    ...(error === undefined ? {} : { error }),
    truncated: true,
    total_chars: text.length,
    omitted_chars: omitted,
    content: `${text.slice(0, head)}\n\n[... ${omitted} characters omitted ...]\n\n${text.slice(text.length - tail)}`,
  });
}
