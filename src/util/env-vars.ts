/**
 * Environment variables as the library takes them: `process.env` or any plain record.
 * Our own type rather than `NodeJS.ProcessEnv`, so that the package's public declarations
 * compile in a project without @types/node (see docs/packaging.md); `process.env` is
 * assignable to it.
 */
export type EnvVars = Readonly<Record<string, string | undefined>>;
