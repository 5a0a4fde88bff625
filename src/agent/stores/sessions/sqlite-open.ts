/**
 * Opening the SQLite file of a session store: where it lives in the profile home, creating it
 * private to the user, loading better-sqlite3 (only here, on first open: `mibyan` commands other
 * than `sessions` never load the native module), WAL, and the schema migrations.
 */

import { closeSync, constants, lstatSync, mkdirSync, openSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type BetterSqlite3 from "better-sqlite3";

import { SessionStoreError, toStoreError } from "./errors.js";
import { DEFAULT_BUSY_TIMEOUT_MS, type OpenDatabaseOptions } from "./location.js";
import { MIGRATIONS, SCHEMA_VERSION } from "./schema.js";

// The driver's types stay in this file and the ones that run queries: no public declaration names
// them, so a consumer of the package's types needs no @types/better-sqlite3.
export type Database = BetterSqlite3.Database;
export type Statement = BetterSqlite3.Statement<unknown[], unknown>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Transaction<F extends (...args: any[]) => unknown> = BetterSqlite3.Transaction<F>;

let driver: typeof BetterSqlite3 | undefined;

function loadDriver(): typeof BetterSqlite3 {
  if (driver !== undefined) return driver;
  try {
    driver = createRequire(import.meta.url)("better-sqlite3") as typeof BetterSqlite3;
    return driver;
  } catch (thrown) {
    // An optional dependency: an install where it could not be built (no prebuilt binary, no compiler) goes on without it.
    const reason = thrown instanceof Error ? thrown.message : String(thrown);
    throw new SessionStoreError("io", `the session store needs better-sqlite3@12, which did not load (${reason}); install it with \`npm install better-sqlite3@12\` (it builds from source when no prebuilt binary fits: a C++ compiler, make and python3)`, {
      cause: thrown,
    });
  }
}

/**
 * Creates the file with mode 0600 in a 0700 directory when it does not exist. Conversations
 * hold whatever the user and tools said; SQLite would otherwise create the file (and its -wal and
 * -shm, which copy the file's mode) under the process umask.
 */
function createPrivateFile(file: string): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  try {
    closeSync(openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o600));
  } catch (thrown) {
    if ((thrown as NodeJS.ErrnoException).code !== "EEXIST") throw thrown;
  }
}

/**
 * The store's file must be a regular file at that path, not a symlink: a link planted in one
 * profile's home must not make its sessions read and write another profile's store.
 */
function checkRegularFile(file: string): boolean {
  let stat;
  try {
    stat = lstatSync(file);
  } catch (thrown) {
    if ((thrown as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw thrown;
  }
  if (stat.isSymbolicLink() || !stat.isFile()) {
    throw new SessionStoreError("invalid", `session store ${file} is not a regular file (${stat.isSymbolicLink() ? "a symbolic link" : "not a file"}); refusing to open it`);
  }
  return true;
}

function migrate(db: Database, file: string, readonly: boolean): void {
  const version = () => db.pragma("user_version", { simple: true }) as number;
  const current = version();
  if (current > SCHEMA_VERSION) {
    throw new SessionStoreError("schema", `session store ${file} has schema version ${current}, newer than this build's ${SCHEMA_VERSION}; update mibyan-tools to use it`);
  }
  if (current === SCHEMA_VERSION) return;
  if (readonly) {
    throw new SessionStoreError("schema", `session store ${file} has schema version ${current}, older than ${SCHEMA_VERSION}; open it once for writing to migrate it`);
  }
  db.transaction(() => {
    // Re-read under the write lock: another process may have migrated while this one waited.
    for (let v = version(); v < SCHEMA_VERSION; v++) {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    }
  }).immediate();
}

/** Opens (creating and migrating as needed) the database at `file`; errors are SessionStoreErrors. */
export function openDatabase(file: string, options: OpenDatabaseOptions = {}): Database {
  const readonly = options.readonly === true;
  const create = options.create ?? !readonly;
  const Driver = loadDriver();
  let db: Database | undefined;
  try {
    const exists = checkRegularFile(file);
    if (!exists) {
      if (!create) throw new SessionStoreError("not_found", `no session store at ${file}`);
      createPrivateFile(file);
      checkRegularFile(file);
    }
    db = new Driver(file, { readonly, fileMustExist: true, timeout: options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS });
    if (!readonly) {
      // WAL: readers never wait for the writer; NORMAL: no fsync per commit (a power cut may lose
      // the last commits, never corrupt the file), which is what makes thousands of appends a second.
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
    }
    migrate(db, file, readonly);
    return db;
  } catch (thrown) {
    try {
      db?.close();
    } catch {
      // already failing: the first error is the one to report
    }
    throw toStoreError(thrown, file);
  }
}
