/**
 * Test resources a file creates and must not leave behind, each with the hook that cleans it up:
 * temporary directories (removed after the file's tests) and scripted OpenAI-compatible servers
 * (closed after each test). Call these at the top level of a test file.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { afterAll, afterEach } from "vitest";

import { startScriptedOpenAI, type ScriptEntry, type ScriptedOpenAI } from "./scripted-openai.js";

/** `tempDir(prefix)` makes a directory under the system's temporary folder; all are removed after the file's tests. */
export function useTempDirs(): (prefix: string) => string {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return (prefix) => {
    const dir = mkdtempSync(path.join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
}

/** `serve(script)` starts a scripted endpoint; every one is closed after the current test. */
export function useScriptedServers(): (script: ScriptEntry[]) => Promise<ScriptedOpenAI> {
  const servers: ScriptedOpenAI[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  return async (script) => {
    const server = await startScriptedOpenAI(script);
    servers.push(server);
    return server;
  };
}
