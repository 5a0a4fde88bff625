/**
 * The errors `runAgent` throws. Endpoint trouble is one class with a `kind`, so a CLI can map it to
 * a message and exit code and a library user can tell "fix your key" from "try later" without
 * parsing text. Messages name the base URL (without credentials) and never the API key.
 */

export type AgentEndpointErrorKind =
  /** HTTP 401: the key is missing, wrong or expired. */
  | "authentication"
  /** HTTP 403: the key is valid but may not use this model or endpoint. */
  | "permission"
  /** HTTP 404: no such model, or the base URL does not point at a Chat Completions API. */
  | "not_found"
  /** HTTP 429 after the retries, or a Retry-After longer than the loop will wait. */
  | "rate_limited"
  /** HTTP 5xx (and 408/409) after the retries. */
  | "server"
  /** Another 4xx: the endpoint refused the request itself (an unknown parameter, a context too long). */
  | "bad_request"
  /** No HTTP answer: refused, unresolvable, reset or timed out, after the retries. */
  | "connection"
  /** An answer that is not a completion (no choices, not JSON). */
  | "bad_response";

export class AgentEndpointError extends Error {
  override readonly name = "AgentEndpointError";
  constructor(
    readonly kind: AgentEndpointErrorKind,
    message: string,
    readonly details: {
      /** The base URL, credentials removed. */
      baseURL: string;
      status?: number | undefined;
      /** Attempts made, retries included. */
      attempts: number;
      cause?: unknown;
    },
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
  }
  get status(): number | undefined {
    return this.details.status;
  }
  get baseURL(): string {
    return this.details.baseURL;
  }
}

/** The options themselves are wrong (no model, a base URL that is not an http(s) URL, a bad budget). Nothing was sent. */
export class AgentConfigError extends Error {
  override readonly name = "AgentConfigError";
  constructor(
    readonly option: string,
    message: string,
  ) {
    super(message);
  }
}
