/**
 * A backend's own section of config.yaml (`terminal.ssh`, `terminal.docker`,
 * `terminal.vercel_sandbox`, ...), as written (snake_case keys). Each backend
 * parses and checks its section itself when it creates an environment, so the
 * runtime's config schema only knows that the section is a mapping.
 */

import { getConfig } from "../config/load-config.js";

/**
 * The `terminal.<backend>` mapping of the current config.yaml, or undefined
 * when there is none. A config file that cannot be read is reported where the
 * rest of the runtime loads it; here it counts as "no section".
 */
export function backendConfigSection(backend: string): Record<string, unknown> | undefined {
  let terminal: unknown;
  try {
    terminal = (getConfig().document as { terminal?: unknown } | undefined)?.terminal;
  } catch {
    return undefined;
  }
  if (terminal === null || typeof terminal !== "object" || Array.isArray(terminal)) return undefined;
  const section = (terminal as Record<string, unknown>)[backend];
  return section !== null && typeof section === "object" && !Array.isArray(section) ? (section as Record<string, unknown>) : undefined;
}

/**
 * The section with camelCase keys spelled snake_case. A key outside `known`
 * throws, naming `terminal.<backend>.<key>` and the known keys: a misspelt
 * isolation setting (`netwrok: none`) must not pass silently.
 */
export function checkedSection(backend: string, raw: Record<string, unknown>, known: readonly string[]): Record<string, unknown> {
  const section: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    const snake = key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    if (!known.includes(snake)) throw new Error(`terminal.${backend}.${key} is not a known option (known: ${known.join(", ")})`);
    section[snake] = value;
  }
  return section;
}

/**
 * Why `url` cannot be a cloud API's base URL, or undefined: an absolute URL
 * without query, fragment or credentials, https (plain http only to a loopback
 * address, for local stand-ins), because `secret` is sent with every request.
 */
export function apiUrlProblem(url: string, secret: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "must be an absolute URL (https://...)";
  }
  if (parsed.search || parsed.hash) return "must not carry a query or a fragment";
  if (parsed.username || parsed.password) return "must not carry credentials";
  if (parsed.protocol === "https:") return undefined;
  if (parsed.protocol === "http:" && isLoopback(parsed.hostname)) return undefined;
  return `must use https (plain http only to a loopback address: ${secret} is sent with every request)`;
}

function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}
