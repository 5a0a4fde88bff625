/** Errors of the MCP client's public surface (kept apart so the package entry can export them without loading the SDK). */

/** Thrown by `refresh` / `reconnect` / `finishAuth` for a name that is not a configured, started server. */
export class UnknownMcpServerError extends Error {
  override readonly name = "UnknownMcpServerError";
  constructor(
    readonly server: string,
    known: readonly string[],
  ) {
    super(`No started MCP server named "${server}"${known.length > 0 ? ` (started: ${known.join(", ")})` : ""}`);
  }
}

/**
 * The URL answers with a web page: a typo'd path, a login portal, a documentation site. Retrying
 * (or falling back to SSE) cannot help, so the server is parked at once with this reason. This is
 * judged from the answer to `initialize` itself, so it costs no extra request (hermes sends a
 * HEAD/GET preflight first and needs `skip_preflight` for servers that mishandle it).
 */
export class NotAnMcpEndpointError extends Error {
  override readonly name = "NotAnMcpEndpointError";
  constructor(url: string) {
    super(`${url} is not an MCP endpoint (it answers with an HTML page); check the url`);
  }
}
