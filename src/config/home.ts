/**
 * Where the profile lives. The profile home holds `config.yaml` (and, later,
 * plugins, caches and logs). `MIBYAN_HOME` moves it; otherwise it is
 * `~/.mibyan`. Nothing here touches the filesystem.
 */

import os from "node:os";
import path from "node:path";
import type { EnvVars } from "../util/env-vars.js";

/** The file name of the configuration inside the profile home. */
export const CONFIG_FILE_NAME = "config.yaml";

/** The user's home directory: `HOME` (or `USERPROFILE` on Windows) from `env`, else the OS's answer. */
export function userHomeDir(env: EnvVars = process.env): string {
  const fromEnv = process.platform === "win32" ? (env.USERPROFILE ?? env.HOME) : env.HOME;
  return fromEnv && fromEnv.trim() !== "" ? fromEnv : os.homedir();
}

/**
 * Expands a leading `~` (alone, or followed by `/`, or `\` on Windows) to the user's home.
 * `~user` forms are left as written.
 */
export function expandTilde(p: string, env: EnvVars = process.env): string {
  if (p === "~") return userHomeDir(env);
  if (p.startsWith("~/") || (process.platform === "win32" && p.startsWith("~\\"))) {
    return path.join(userHomeDir(env), p.slice(2));
  }
  return p;
}

/**
 * The profile home: `MIBYAN_HOME` when set and non-empty (a leading `~` expanded, then made
 * absolute against the current directory), else `~/.mibyan`. Always an absolute path.
 */
export function mibyanHome(env: EnvVars = process.env): string {
  const override = env.MIBYAN_HOME?.trim();
  if (override) return path.resolve(expandTilde(override, env));
  return path.join(userHomeDir(env), ".mibyan");
}

/** The path of `config.yaml` inside `home` (the profile home when omitted). */
export function configPath(home: string = mibyanHome()): string {
  return path.join(home, CONFIG_FILE_NAME);
}

/** `p` with the user's home shortened to `~`, for messages. Other paths are returned unchanged. */
export function displayPath(p: string, env: EnvVars = process.env): string {
  const home = userHomeDir(env);
  if (!home || home === path.sep) return p;
  if (p === home) return "~";
  const prefix = home.endsWith(path.sep) ? home : home + path.sep;
  return p.startsWith(prefix) ? `~${path.sep}${p.slice(prefix.length)}` : p;
}
