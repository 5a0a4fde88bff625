/**
 * The one error type of the session store. SQLite's own errors (SqliteError with codes such as
 * SQLITE_BUSY or SQLITE_CORRUPT) are mapped to a `kind` here, so callers (the loop, `mibyan
 * sessions`, session_search) can say what happened without knowing the driver.
 */

export type SessionStoreErrorKind =
  /** Another connection held the write lock longer than the busy timeout. */
  | "locked"
  /** The file is not a SQLite database or is damaged. */
  | "corrupt"
  /** The file was written by a newer schema than this build knows. */
  | "schema"
  /** The file or its directory cannot be written (permissions, read-only file system, disk full). */
  | "readonly"
  /** Other I/O or driver failures; better-sqlite3 missing or not built. */
  | "io"
  /** No such session. */
  | "not_found"
  /** Bad input: a malformed session id, role, message or option. */
  | "invalid"
  /** The store was closed. */
  | "closed";

export class SessionStoreError extends Error {
  readonly kind: SessionStoreErrorKind;
  /** The SQLite error code when the driver raised one (`SQLITE_BUSY`, ...). */
  readonly sqliteCode: string | undefined;

  constructor(kind: SessionStoreErrorKind, message: string, options?: { cause?: unknown; sqliteCode?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "SessionStoreError";
    this.kind = kind;
    this.sqliteCode = options?.sqliteCode;
  }
}

function sqliteCodeOf(thrown: unknown): string | undefined {
  const code = (thrown as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("SQLITE_") ? code : undefined;
}

/**
 * `thrown` as a SessionStoreError: SQLite codes mapped to kinds, the file named in the message.
 * A SessionStoreError passes through unchanged.
 */
export function toStoreError(thrown: unknown, file: string): SessionStoreError {
  if (thrown instanceof SessionStoreError) return thrown;
  const code = sqliteCodeOf(thrown);
  const detail = thrown instanceof Error ? thrown.message : String(thrown);
  const at = `session store ${file}`;
  if (code === undefined) {
    // The driver's JavaScript loaded but its native part was never built (an install with scripts off).
    const unbuilt = /Could not locate the bindings file/.test(detail);
    const hint = unbuilt ? ": better-sqlite3 is installed but not built (were install scripts off?); run `npm rebuild better-sqlite3`" : "";
    return new SessionStoreError("io", `${at}: ${unbuilt ? detail.split("\n")[0] : detail}${hint}`, { cause: thrown });
  }
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) {
    return new SessionStoreError("locked", `${at} is locked by another writer (${code}); try again`, { cause: thrown, sqliteCode: code });
  }
  if (code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB") {
    return new SessionStoreError("corrupt", `${at} is damaged or not a SQLite database (${code}: ${detail}); move it aside to start a new store`, {
      cause: thrown,
      sqliteCode: code,
    });
  }
  if (code.startsWith("SQLITE_READONLY") || code.startsWith("SQLITE_CANTOPEN") || code.startsWith("SQLITE_PERM") || code === "SQLITE_FULL" || code === "SQLITE_AUTH") {
    return new SessionStoreError("readonly", `${at} cannot be opened for writing (${code}: ${detail})`, { cause: thrown, sqliteCode: code });
  }
  return new SessionStoreError("io", `${at}: ${detail} (${code})`, { cause: thrown, sqliteCode: code });
}
