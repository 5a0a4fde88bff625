import { accessSync, constants as fsConstants, statSync } from "node:fs";
import { delimiter, join } from "node:path";

/**
 * The path of `name` when it is an executable file: `name` itself when it
 * contains a slash, else the first match on `env.PATH`. Undefined otherwise.
 */
export function findExecutable(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidates = name.includes("/") ? [name] : (env.PATH ?? "").split(delimiter).filter(Boolean).map((dir) => join(dir, name));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, fsConstants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
