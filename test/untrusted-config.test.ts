/**
 * config.yaml is read from a path anyone with write access to the profile
 * home controls. These tests put there what an attacker would: a symlink to
 * /dev/zero (an endless read that grew to 16 GB and aborted), a FIFO (a read
 * that never returned), a file too large to be a configuration. Each must be
 * a clear ConfigError, and `mibyan` must exit 2 with the reason.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { ConfigError, loadConfig } from "../src/index.js";
import { MAX_CONFIG_BYTES } from "../src/config/read-config-file.js";
import { BIN, cliEnv, ROOT, spawnCollect } from "./support/cli-run.js";

let home: string;
beforeEach(() => {
  home = mkdtempSync(path.join(tmpdir(), "mibyan-untrusted-config-"));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const configFile = () => path.join(home, "config.yaml");

function loadError(): ConfigError {
  try {
    loadConfig({ home });
  } catch (thrown) {
    expect(thrown).toBeInstanceOf(ConfigError);
    return thrown as ConfigError;
  }
  throw new Error("the configuration loaded");
}

describe("loadConfig reads regular files of bounded size only", () => {
  it("refuses a symlink to /dev/zero without reading it", () => {
    symlinkSync("/dev/zero", configFile());
    const error = loadError();
    expect(error.kind).toBe("not_file");
    expect(error.message).toContain("a character device, not a regular file");
  });

  it("refuses a FIFO without waiting for a writer", () => {
    execFileSync("mkfifo", [configFile()]);
    const error = loadError();
    expect(error.kind).toBe("not_file");
    expect(error.message).toContain("a FIFO");
  });

  it("refuses a symlink to a FIFO", () => {
    const fifo = path.join(home, "pipe");
    execFileSync("mkfifo", [fifo]);
    symlinkSync(fifo, configFile());
    expect(loadError().kind).toBe("not_file");
  });

  it("refuses a file over the size limit and reads one at the limit", () => {
    writeFileSync(configFile(), `# ${"x".repeat(MAX_CONFIG_BYTES)}\n`);
    const error = loadError();
    expect(error.kind).toBe("too_large");
    expect(error.message).toContain(`larger than ${MAX_CONFIG_BYTES} bytes`);
    writeFileSync(configFile(), `tools:\n  timeout_seconds: 5\n# ${"x".repeat(MAX_CONFIG_BYTES - 40)}\n`);
    expect(loadConfig({ home }).config.tools?.timeoutSeconds).toBe(5);
  });

  it("still follows a symlink to a regular file", () => {
    const real = path.join(home, "real.yaml");
    writeFileSync(real, "tools:\n  timeout_seconds: 7\n");
    symlinkSync(real, configFile());
    expect(loadConfig({ home }).config.tools?.timeoutSeconds).toBe(7);
  });
});

describe("mibyan exits 2 with the reason", () => {
  const run = (args: string[]) => spawnCollect(process.execPath, [BIN, ...args], { env: cliEnv(home, home), cwd: ROOT });

  it("for config.yaml linked to /dev/zero", async () => {
    symlinkSync("/dev/zero", configFile());
    const result = await run(["tools"]);
    expect(result.status).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("config.yaml: the configuration is a character device, not a regular file; config.yaml must be a file");
  });

  it("for config.yaml as a FIFO (no hang)", async () => {
    execFileSync("mkfifo", [configFile()]);
    const result = await run(["tools"]);
    expect(result.signal).toBeNull();
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("a FIFO, not a regular file");
  });
});
