/** The one error type configuration loading throws. */

import { displayPath } from "./home.js";

export type ConfigErrorKind =
  /** The file could not be read (permissions, ...). */
  | "io"
  /** The path leads (perhaps through a symlink) to a directory, FIFO, device or socket. */
  | "not_file"
  /** The file is larger than `MAX_CONFIG_BYTES`. */
  | "too_large"
  /** The YAML itself is malformed (including several documents in one file). */
  | "syntax"
  /** The same key appears twice in one mapping. */
  | "duplicate_key"
  /** The top level of the file is not a mapping. */
  | "not_mapping"
  /** A known key holds a value of the wrong type or out of range. */
  | "type"
  /** A value names something that does not exist (an unknown toolset in `toolsets.enabled`). */
  | "unknown_name"
  /** A key Mibyan does not know in a section where that is an error (`terminal`, `approvals`: see strict-sections.ts). */
  | "unknown_key";

export interface ConfigErrorDetails {
  kind: ConfigErrorKind;
  /** Absolute path of the offending file. */
  file: string;
  /** 1-based line of the offending node, when known. */
  line?: number;
  /** 1-based column of the offending node, when known. */
  column?: number;
  /** Dotted key path as written in the file (`plugins.entries.foo.allow_tool_override`, `toolsets.enabled[1]`). */
  key?: string;
  cause?: unknown;
}

/**
 * A configuration file that cannot be used. The message leads with the location in the
 * compiler style, `~/.mibyan/config.yaml:12:5: plugins.entries.foo.allow_tool_override must be a boolean (got "yes")`;
 * `reason` is the same text without the location.
 */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly kind: ConfigErrorKind;
  readonly file: string;
  readonly line?: number;
  readonly column?: number;
  readonly key?: string;
  readonly reason: string;

  constructor(reason: string, details: ConfigErrorDetails) {
    super(
      `${formatLocation(details.file, details.line, details.column)}: ${reason}`,
      details.cause === undefined ? undefined : { cause: details.cause },
    );
    this.kind = details.kind;
    this.file = details.file;
    this.reason = reason;
    if (details.line !== undefined) this.line = details.line;
    if (details.column !== undefined) this.column = details.column;
    if (details.key !== undefined) this.key = details.key;
  }
}

/** `file[:line[:column]]`, the home directory shown as `~`. */
export function formatLocation(file: string, line?: number, column?: number): string {
  let where = displayPath(file);
  if (line !== undefined) {
    where += `:${line}`;
    if (column !== undefined) where += `:${column}`;
  }
  return where;
}
