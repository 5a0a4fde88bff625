/**
 * The model endpoint: one Chat Completions request through the `openai` client (loaded on the
 * first run, so importing the package does not load it), with the loop's own retries (retry.ts)
 * and every failure turned into an `AgentEndpointError` of a known kind.
 */

import { describeThrown } from "../../util/text.js";
import type { AgentEvent } from "../types.js";
import { completionFromResponse, StreamAccumulator, type Completion } from "./completion.js";
import { AgentConfigError, AgentEndpointError, type AgentEndpointErrorKind } from "./errors.js";
import { abortableSleep, backoffMs, retryableStatus, retryAfterMs, type RetryPolicy } from "./retry.js";

/** What the Authorization header carries when no key is configured (a local endpoint). */
const NO_KEY = "no-key";

type OpenAIModule = typeof import("openai");
type OpenAIClient = InstanceType<OpenAIModule["OpenAI"]>;

let openaiModule: Promise<OpenAIModule> | undefined;
const loadOpenAI = (): Promise<OpenAIModule> => (openaiModule ??= import("openai"));

export const DEFAULT_REQUEST_TIMEOUT_MS = 600_000;
/** Longest text of an endpoint's error message quoted in ours. */
const MAX_SERVER_MESSAGE = 500;

/** The base URL as messages show it: no user name, password, query or fragment. */
export function displayURL(url: URL): string {
  const shown = new URL(url.href);
  shown.username = "";
  shown.password = "";
  shown.search = "";
  shown.hash = "";
  return shown.href.replace(/\/$/, "");
}

/** Checks the base URL before anything is sent; a relative, non-http(s) or unparsable one is the caller's error. */
export function parseBaseURL(baseURL: unknown): URL {
  if (typeof baseURL !== "string" || baseURL.trim() === "") throw new AgentConfigError("baseURL", "baseURL is required (e.g. https://api.openai.com/v1 or http://127.0.0.1:8000/v1)");
  let url: URL;
  try {
    url = new URL(baseURL.trim());
  } catch {
    throw new AgentConfigError("baseURL", `baseURL ${JSON.stringify(baseURL.slice(0, 200))} is not a URL (expected e.g. http://127.0.0.1:8000/v1)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new AgentConfigError("baseURL", `baseURL must be an http:// or https:// URL, got ${url.protocol}//…`);
  }
  // fetch refuses them, and its error would quote the password back; a key goes in apiKey or headers.
  if (url.username !== "" || url.password !== "") {
    throw new AgentConfigError("baseURL", `baseURL must not carry a user name or password (${displayURL(url)}); pass the key as apiKey or in headers`);
  }
  return url;
}

const MAX_CACHED_ENDPOINTS = 8;
const endpoints = new Map<string, ChatEndpoint>();

/** A stream that ended before the completion did. */
class StreamCut extends Error {}

/** The request was abandoned because the run's signal fired; `partialText` is what had streamed. */
export class RequestAborted extends Error {
  constructor(readonly partialText: string) {
    super("the request was aborted");
  }
}

export interface EndpointOptions {
  baseURL: URL;
  apiKey: string | undefined;
  headers: Readonly<Record<string, string>> | undefined;
  timeoutMs: number;
  retry: RetryPolicy;
  model: string;
}

interface Failure {
  kind: AgentEndpointErrorKind;
  status: number | undefined;
  retryable: boolean;
  retryAfterMs: number | undefined;
  detail: string;
  cause: unknown;
}

export class ChatEndpoint {
  private constructor(
    private readonly client: OpenAIClient,
    private readonly mod: OpenAIModule,
    private readonly options: EndpointOptions,
    readonly shownURL: string,
  ) {}

  /**
   * The endpoint for these options: a run of a chat session reuses the previous run's client (its
   * construction and first connection cost ~0.3 ms per run, measured in bench/agent-loop.mjs). A few
   * are kept, the least recently used dropped.
   */
  static async open(options: EndpointOptions): Promise<ChatEndpoint> {
    const key = JSON.stringify([options.baseURL.href, options.apiKey ?? null, options.headers ?? null, options.timeoutMs, options.retry, options.model]);
    const cached = endpoints.get(key);
    if (cached !== undefined) {
      endpoints.delete(key);
      endpoints.set(key, cached);
      return cached;
    }
    const endpoint = await ChatEndpoint.create(options);
    endpoints.set(key, endpoint);
    if (endpoints.size > MAX_CACHED_ENDPOINTS) endpoints.delete(endpoints.keys().next().value!);
    return endpoint;
  }

  private static async create(options: EndpointOptions): Promise<ChatEndpoint> {
    const mod = await loadOpenAI();
    const client = new mod.OpenAI({
      baseURL: options.baseURL.href.replace(/\/$/, ""),
      // The client refuses to start without a key (an empty one too); local endpoints usually take none,
      // and the header then carries this placeholder, which means nothing to anyone.
      apiKey: options.apiKey === undefined || options.apiKey === "" ? NO_KEY : options.apiKey,
      defaultHeaders: options.headers === undefined ? undefined : { ...options.headers },
      maxRetries: 0,
      timeout: options.timeoutMs,
    });
    return new ChatEndpoint(client, mod, options, displayURL(options.baseURL));
  }

  /**
   * One completion, retried on 408/409/429/5xx and connection failures. Throws `AgentEndpointError`,
   * or `RequestAborted` when `signal` fired.
   */
  async complete(
    params: Record<string, unknown>,
    request: { stream: boolean; signal: AbortSignal | undefined; turn: number; onDelta: (delta: string) => void; onEvent: (event: AgentEvent) => void },
  ): Promise<Completion> {
    const { retry } = this.options;
    for (let attempt = 1; ; attempt++) {
      let partial = "";
      try {
        if (!request.stream) {
          const body = await this.client.chat.completions.create(params as never, { signal: request.signal, maxRetries: 0 });
          return completionFromResponse(body, this.shownURL);
        }
        const accumulator = new StreamAccumulator();
        const stream = await this.client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } } as never, {
          signal: request.signal,
          maxRetries: 0,
        });
        try {
          for await (const chunk of stream as unknown as AsyncIterable<unknown>) {
            const delta = accumulator.push(chunk);
            if (delta !== "") request.onDelta(delta);
          }
        } catch (thrown) {
          partial = accumulator.partialText;
          if (request.signal?.aborted) throw new RequestAborted(partial);
          // A body that breaks off (undici's "terminated") is the connection's fault, whatever it is called.
          const cut = thrown instanceof this.mod.APIError ? thrown : new StreamCut(`the stream broke off: ${rootCause(thrown as Error)}`);
          // Text already shown cannot be taken back: a stream that broke after it is not retried.
          if (partial !== "") throw this.error(this.classify(cut), attempt);
          throw cut;
        }
        // The client's stream ends quietly (no throw) when its signal fires: what arrived is only a part.
        if (request.signal?.aborted) throw new RequestAborted(accumulator.partialText);
        // It also ends quietly when the connection drops: without a finish_reason the answer is cut short.
        if (!accumulator.finished) {
          partial = accumulator.partialText;
          const cut = new StreamCut("the stream ended without a finish_reason (the connection dropped mid-answer)");
          if (partial !== "") throw this.error(this.classify(cut), attempt);
          throw cut;
        }
        return accumulator.result();
      } catch (thrown) {
        if (thrown instanceof RequestAborted) throw thrown;
        if (request.signal?.aborted) throw new RequestAborted(partial);
        if (thrown instanceof AgentEndpointError) throw thrown;
        const failure = this.classify(thrown);
        if (!failure.retryable || attempt > retry.maxRetries) throw this.error(failure, attempt);
        if (failure.retryAfterMs !== undefined && failure.retryAfterMs > retry.maxDelayMs) {
          throw new AgentEndpointError(
            failure.kind === "rate_limited" ? "rate_limited" : failure.kind,
            `${this.shownURL} asked to wait ${Math.ceil(failure.retryAfterMs / 1000)} s before retrying (HTTP ${failure.status ?? "?"}), longer than the ${Math.round(retry.maxDelayMs / 1000)} s the loop waits: ${failure.detail}`,
            { baseURL: this.shownURL, status: failure.status, attempts: attempt, cause: failure.cause },
          );
        }
        const delayMs = failure.retryAfterMs ?? backoffMs(retry, attempt);
        request.onEvent({ type: "retry", turn: request.turn, attempt, delayMs, status: failure.status, reason: failure.detail });
        try {
          await abortableSleep(delayMs, request.signal);
        } catch {
          throw new RequestAborted("");
        }
      }
    }
  }

  private classify(thrown: unknown): Failure {
    const { APIError, APIConnectionError } = this.mod;
    if (thrown instanceof APIError && !(thrown instanceof APIConnectionError) && typeof thrown.status === "number") {
      const status = thrown.status;
      const kind: AgentEndpointErrorKind =
        status === 401 ? "authentication" : status === 403 ? "permission" : status === 404 ? "not_found" : status === 429 ? "rate_limited" : retryableStatus(status) ? "server" : "bad_request";
      return { kind, status, retryable: retryableStatus(status), retryAfterMs: retryAfterMs(thrown.headers), detail: this.serverMessage(thrown), cause: thrown };
    }
    if (thrown instanceof APIConnectionError || thrown instanceof StreamCut) {
      return { kind: "connection", status: undefined, retryable: true, retryAfterMs: undefined, detail: this.scrub(thrown instanceof StreamCut ? thrown.message : rootCause(thrown)), cause: thrown };
    }
    return { kind: "bad_response", status: undefined, retryable: false, retryAfterMs: undefined, detail: this.scrub(describeThrown(thrown)), cause: thrown };
  }

  /** The endpoint's own explanation, without our key in it (some servers echo what they got). */
  private serverMessage(error: InstanceType<OpenAIModule["APIError"]>): string {
    const body = error.error as { message?: unknown } | undefined;
    const text = typeof body?.message === "string" && body.message !== "" ? body.message : error.message.replace(/^\d{3}\s*/, "");
    return this.scrub(text || "(no message)");
  }

  private scrub(text: string): string {
    const key = this.options.apiKey;
    let out = key !== undefined && key.length >= 4 ? text.split(key).join("[API key]") : text;
    out = out.replace(/\s+/g, " ").trim();
    return out.length > MAX_SERVER_MESSAGE ? `${out.slice(0, MAX_SERVER_MESSAGE)}…` : out;
  }

  private error(failure: Failure, attempts: number): AgentEndpointError {
    const url = this.shownURL;
    const status = failure.status;
    const tries = attempts > 1 ? ` after ${attempts} attempts` : "";
    const messages: Record<AgentEndpointErrorKind, string> = {
      authentication: `authentication failed for ${url} (HTTP 401): ${failure.detail}. Check the API key (the apiKey option, or OPENAI_API_KEY).`,
      permission: `permission denied by ${url} (HTTP 403) for model "${this.options.model}": ${failure.detail}`,
      not_found: `not found at ${url} (HTTP 404): ${failure.detail}. Check the model name "${this.options.model}" and that the base URL is the API root (it usually ends in /v1).`,
      rate_limited: `rate limited by ${url} (HTTP 429)${tries}: ${failure.detail}`,
      server: `the endpoint at ${url} failed (HTTP ${status})${tries}: ${failure.detail}`,
      bad_request: `the endpoint at ${url} refused the request (HTTP ${status}): ${failure.detail}`,
      connection: `cannot reach ${url}${tries}: ${failure.detail}`,
      bad_response: `the endpoint at ${url} gave an answer that is not a completion: ${failure.detail}`,
    };
    return new AgentEndpointError(failure.kind, messages[failure.kind], { baseURL: url, status, attempts, cause: failure.cause });
  }
}

/** The innermost cause's code and message (`ECONNREFUSED 127.0.0.1:9`), not undici's "fetch failed". */
function rootCause(error: Error): string {
  let current: unknown = error;
  let text = error instanceof Error ? error.message : String(error);
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (current.message) text = typeof code === "string" && !current.message.includes(code) ? `${code} ${current.message}` : current.message;
    current = (current as { cause?: unknown }).cause;
  }
  if (/timed? ?out/i.test(text) || error.name === "APIConnectionTimeoutError") return `the request timed out (${text})`;
  return text;
}
