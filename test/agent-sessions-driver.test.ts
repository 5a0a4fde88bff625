// What a session store says when its native driver is not usable: an install without scripts leaves
// better-sqlite3's JavaScript in place but no binary, and the driver's own error lists a dozen paths.
import { describe, expect, it } from "vitest";

import { SessionStoreError, toStoreError } from "../src/agent/stores/sessions/errors.js";

describe("the session store's driver errors", () => {
  it("an unbuilt better-sqlite3 says what to run, in one line", () => {
    const thrown = new Error("Could not locate the bindings file. Tried:\n → /x/node_modules/better-sqlite3/build/better_sqlite3.node\n → /x/node_modules/better-sqlite3/build/Release/better_sqlite3.node");
    const error = toStoreError(thrown, "/home/me/.mibyan/sessions/sessions.db");
    expect(error).toBeInstanceOf(SessionStoreError);
    expect(error.kind).toBe("io");
    expect(error.message).toContain("npm rebuild better-sqlite3");
    expect(error.message).not.toContain("\n");
    expect(error.message).toContain("/home/me/.mibyan/sessions/sessions.db");
  });

  it("any other driver error keeps its message", () => {
    expect(toStoreError(new Error("disk on fire"), "/f.db").message).toBe("session store /f.db: disk on fire");
  });
});
