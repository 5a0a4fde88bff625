/**
 * Environment variables as the library takes them: `process.env` or any plain record.
 * Our own type rather than `NodeJS.ProcessEnv`, so that the package's public declarations
 * compile in a project without @types/node (see docs/packaging.md); `process.env` is
 * assignable to it.
 */
export type EnvVars = Readonly<Record<string, string | undefined>>;

/** `1`, `true`, `yes`, `on` (any case, surrounding spaces ignored); everything else, unset included, is false. */
export function isTruthyEnv(value: string | undefined): boolean {
  if (value === undefined) return false;
  return ["1", "true", "yes", "on"].includes(value.trim().toLowerCase());
}

/** `MIBYAN_SAFE_MODE`: no plugin, shell hook or MCP server is started (docs/plugins.md, docs/mcp.md). */
export function isSafeMode(env: EnvVars): boolean {
  return isTruthyEnv(env.MIBYAN_SAFE_MODE);
}
