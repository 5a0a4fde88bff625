// A stdio MCP server gets a minimal environment (never the parent's secrets), and `${VAR}` /
// `${env:VAR}` expand in config values with unset variables left literal (spec 1.5 item 4).
import { spawnSync } from "node:child_process";

import { describe, expect, it } from "vitest";

import { STDIO_BASELINE_VARS, expandEnvVars, stdioEnvironment } from "../src/mcp/client/environment.js";

const parent = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: "/home/alice",
  USER: "alice",
  LANG: "C.UTF-8",
  LC_ALL: "C.UTF-8",
  TERM: "xterm",
  SHELL: "/bin/bash",
  TMPDIR: "/tmp",
  XDG_CONFIG_HOME: "/home/alice/.config",
  XDG_RUNTIME_DIR: "/run/user/1000",
  SECRET_TOKEN: "s3cret-value",
  OPENAI_API_KEY: "sk-abcdefabcdefabcdefabcdef",
  AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG",
  LD_PRELOAD: "/tmp/evil.so",
  NODE_OPTIONS: "--require /tmp/evil.js",
  UNSET_ONE: undefined,
};

describe("stdioEnvironment", () => {
  it("a real child process sees only the baseline, XDG_* and the configured env", () => {
    const env = stdioEnvironment({ GITHUB_TOKEN: "ghp_configured", HOME: "/srv/mcp-home" }, parent);
    const child = spawnSync(process.execPath, ["-e", "process.stdout.write(JSON.stringify(process.env))"], { env, encoding: "utf8" });
    expect(child.status).toBe(0);
    const seen = JSON.parse(child.stdout) as Record<string, string>;
    expect(seen.SECRET_TOKEN).toBeUndefined();
    expect(seen.OPENAI_API_KEY).toBeUndefined();
    expect(seen.AWS_SECRET_ACCESS_KEY).toBeUndefined();
    expect(seen.LD_PRELOAD).toBeUndefined();
    expect(seen.NODE_OPTIONS).toBeUndefined();
    expect(seen.GITHUB_TOKEN).toBe("ghp_configured");
    // `env` overrides the baseline.
    expect(seen.HOME).toBe("/srv/mcp-home");
    expect(seen.XDG_CONFIG_HOME).toBe("/home/alice/.config");
    expect(seen.XDG_RUNTIME_DIR).toBe("/run/user/1000");
    for (const name of ["PATH", "USER", "LANG", "LC_ALL", "TERM", "SHELL", "TMPDIR"]) expect(seen[name]).toBe(parent[name as keyof typeof parent]);
  });

  it("builds exactly the allowed keys, skipping unset ones", () => {
    const env = stdioEnvironment(undefined, { PATH: "/bin", XDG_DATA_HOME: "/d", HOMEBREW_GITHUB_API_TOKEN: "x", XDGNOT: "y", HOME: undefined });
    expect(env).toEqual({ PATH: "/bin", XDG_DATA_HOME: "/d" });
    expect(STDIO_BASELINE_VARS).toEqual(["PATH", "HOME", "USER", "LANG", "LC_ALL", "TERM", "SHELL", "TMPDIR"]);
  });

  it("works with process.env itself and never copies a secret from it", () => {
    process.env.MIBYAN_TEST_SECRET_TOKEN = "leak-me";
    try {
      const env = stdioEnvironment({}, process.env);
      expect(env.MIBYAN_TEST_SECRET_TOKEN).toBeUndefined();
      expect(env.PATH).toBe(process.env.PATH);
    } finally {
      delete process.env.MIBYAN_TEST_SECRET_TOKEN;
    }
  });

  it("a configured key named __proto__ is an ordinary variable, not a prototype change", () => {
    const configured = JSON.parse('{"__proto__": "x", "A": "1"}') as Record<string, string>;
    const env = stdioEnvironment(configured, {});
    expect(Object.keys(env).sort()).toEqual(["A", "__proto__"]);
    expect(Object.getPrototypeOf(env)).toBe(Object.prototype);
  });
});

describe("expandEnvVars", () => {
  const env = { X: "ex", TOKEN: "t0k", EMPTY: "", NESTED: "${X}" };

  it("expands ${X} and ${env:X}; an unset ${Y} stays literal", () => {
    expect(expandEnvVars("a ${X} b ${env:X} c ${Y} d ${env:Y}", env)).toBe("a ex b ex c ${Y} d ${env:Y}");
    expect(expandEnvVars("Bearer ${TOKEN}", env)).toBe("Bearer t0k");
    expect(expandEnvVars("[${EMPTY}]", env)).toBe("[]");
  });

  it("does not expand a variable's value again, nor malformed placeholders", () => {
    expect(expandEnvVars("${NESTED}", env)).toBe("${X}");
    expect(expandEnvVars("$X ${ X} ${1X} ${env:} ${X", env)).toBe("$X ${ X} ${1X} ${env:} ${X");
  });

  it("recurses through objects and arrays, leaving keys and other values alone, without changing the input", () => {
    const input = { command: "${X}/bin", args: ["--token", "${TOKEN}", 3, true, null], env: { "${X}": "${env:TOKEN}" }, timeout: 5 };
    const out = expandEnvVars(input, env);
    expect(out).toEqual({ command: "ex/bin", args: ["--token", "t0k", 3, true, null], env: { "${X}": "t0k" }, timeout: 5 });
    expect(input.args[1]).toBe("${TOKEN}");
  });

  it("takes process.env-like records and ignores inherited names", () => {
    expect(expandEnvVars("${toString} ${constructor}", {})).toBe("${toString} ${constructor}");
  });

  it("survives hostile nesting", () => {
    let deep: unknown = "${X}";
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(() => expandEnvVars(deep, env)).not.toThrow();
  });
});
