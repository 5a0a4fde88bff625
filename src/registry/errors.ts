/** Thrown by `register()` when a tool definition itself is malformed (a programming error, not a policy rejection). */
export class ToolDefinitionError extends TypeError {
  override readonly name = "ToolDefinitionError";
  constructor(
    readonly toolName: string,
    detail: string,
  ) {
    super(`Invalid tool definition ${toolName ? `"${toolName}"` : "(unnamed)"}: ${detail}`);
  }
}
