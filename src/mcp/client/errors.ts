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
