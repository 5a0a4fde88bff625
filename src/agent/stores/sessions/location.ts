/**
 * Where a profile's session store lives and how it is opened. No driver code or types here: this is
 * what the public declarations reach (see sqlite-open.ts).
 */

import path from "node:path";

import { mibyanHome } from "../../../config/home.js";

/** How long a write waits for another connection's write lock before failing with kind `locked`. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/** `<home>/sessions/sessions.db` (the profile home when omitted). */
export function sessionStorePath(home: string = mibyanHome()): string {
  return path.join(home, "sessions", "sessions.db");
}

export interface OpenDatabaseOptions {
  /** Open without writing: no file is created, no migration runs (an outdated file is refused). */
  readonly?: boolean;
  /** Create the file (and its directory) when missing; default true unless `readonly`. */
  create?: boolean;
  /** How long a write waits for another writer (default 5000 ms), then fails with kind `locked`. */
  busyTimeoutMs?: number;
}
