import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import {
  ConfigError,
  clearConfigCache,
  configPath,
  emptyConfig,
  getConfig,
  loadConfig,
  mibyanHome,
  validateConfig,
} from "../src/config/index.js";

const require = createRequire(import.meta.url);

let root: string;
let home: string;

beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), "mibyan-config-"));
  home = path.join(root, "profile");
  mkdirSync(home);
  clearConfigCache();
});

afterEach(() => {
  vi.unstubAllEnvs();
  rmSync(root, { recursive: true, force: true });
});

function writeConfig(text: string, dir = home): string {
  const file = path.join(dir, "config.yaml");
  writeFileSync(file, text);
  return file;
}

/** Loads `text` as config.yaml and returns the ConfigError it throws. */
function errorFor(text: string): ConfigError {
  writeConfig(text);
  try {
    loadConfig({ home });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error("expected loadConfig to throw");
}

describe("yaml is loaded lazily", () => {
  // First in the file on purpose: nothing before it has read a config file in this worker.
  it("is not required until a config file exists", () => {
    const yamlPath = require.resolve("yaml");
    expect(require.cache[yamlPath]).toBeUndefined();
    loadConfig({ home: path.join(root, "nowhere") });
    writeConfig("");
    loadConfig({ home });
    expect(require.cache[yamlPath]).toBeUndefined();
    writeConfig("terminal:\n  backend: local\n");
    loadConfig({ home });
    expect(require.cache[yamlPath]).toBeDefined();
  });
});

describe("profile home", () => {
  it("defaults to ~/.mibyan", () => {
    expect(mibyanHome({ HOME: "/users/ada" })).toBe(path.join("/users/ada", ".mibyan"));
    expect(mibyanHome({ HOME: "/users/ada", MIBYAN_HOME: "  " })).toBe(path.join("/users/ada", ".mibyan"));
  });

  it("takes MIBYAN_HOME, made absolute", () => {
    expect(mibyanHome({ HOME: "/users/ada", MIBYAN_HOME: "/srv/mibyan" })).toBe("/srv/mibyan");
    expect(mibyanHome({ HOME: "/users/ada", MIBYAN_HOME: "rel/dir" })).toBe(path.resolve("rel/dir"));
  });

  it("expands a leading ~ in MIBYAN_HOME", () => {
    expect(mibyanHome({ HOME: "/users/ada", MIBYAN_HOME: "~/profiles/work" })).toBe("/users/ada/profiles/work");
    expect(mibyanHome({ HOME: "/users/ada", MIBYAN_HOME: "~" })).toBe("/users/ada");
    expect(mibyanHome({ HOME: "/users/ada", MIBYAN_HOME: "/a/~/b" })).toBe("/a/~/b");
  });

  it("configPath is config.yaml inside the home", () => {
    expect(configPath("/srv/mibyan")).toBe(path.join("/srv/mibyan", "config.yaml"));
  });

  it("loadConfig follows MIBYAN_HOME from the env option", () => {
    const file = writeConfig("tools:\n  max_concurrency: 3\n");
    const loaded = loadConfig({ env: { HOME: root, MIBYAN_HOME: home } });
    expect(loaded.path).toBe(file);
    expect(loaded.config.tools.maxConcurrency).toBe(3);
  });

  it("loadConfig expands ~ in the home option and in MIBYAN_HOME", () => {
    const file = writeConfig("terminal:\n  backend: docker\n");
    const viaOption = loadConfig({ home: "~/profile", env: { HOME: root } });
    expect(viaOption.path).toBe(file);
    expect(viaOption.config.terminal.backend).toBe("docker");
    const viaEnv = loadConfig({ env: { HOME: root, MIBYAN_HOME: "~/profile" } });
    expect(viaEnv.path).toBe(file);
  });

  it("loadConfig defaults to ~/.mibyan under HOME", () => {
    mkdirSync(path.join(root, ".mibyan"));
    const file = writeConfig("terminal:\n  cwd: /work\n", path.join(root, ".mibyan"));
    const loaded = loadConfig({ env: { HOME: root } });
    expect(loaded.path).toBe(file);
    expect(loaded.config.terminal.cwd).toBe("/work");
  });
});

/** The approvals section's defaults, present in every loaded config. */
const APPROVAL_DEFAULTS = {
  mode: "manual",
  nonInteractive: "deny",
  timeoutSeconds: 60,
  gatewayTimeoutSeconds: 300,
  isolatedBackendsNeedApproval: false,
  smart: {},
};

describe("loadConfig", () => {
  it("gives the empty config for a missing file", () => {
    const loaded = loadConfig({ home });
    expect(loaded).toEqual({
      path: path.join(home, "config.yaml"),
      exists: false,
      config: emptyConfig(),
      warnings: [],
    });
    expect(loaded.config).toEqual({
      plugins: { entries: {} },
      mcpServers: {},
      hooks: {},
      toolsets: {},
      tools: {},
      terminal: { backend: "local" },
      approvals: APPROVAL_DEFAULTS,
      processes: { results: {} },
      memory: { memoryEnabled: true, userProfileEnabled: true, memoryCharLimit: 2200, userCharLimit: 1375, writeApproval: false },
      toolSearch: { enabled: "auto", thresholdPct: 10, searchDefaultLimit: 5, maxSearchLimit: 20 },
      delegation: { maxIterations: 50, maxSpawnDepth: 1, orchestratorEnabled: true, subagentAutoApprove: false, maxSummaryChars: 24000 },
      compaction: { enabled: true, threshold: 0.5, keepFirst: 3, keepLast: 20 },
      model: {},
    });
  });

  it("gives the empty config when the home itself does not exist", () => {
    const loaded = loadConfig({ home: path.join(root, "missing", "deeper") });
    expect(loaded.exists).toBe(false);
    expect(loaded.config).toEqual(emptyConfig());
  });

  it("accepts an empty file and a comments-only file", () => {
    writeConfig("");
    const empty = loadConfig({ home });
    expect(empty.exists).toBe(true);
    expect(empty.config).toEqual(emptyConfig());
    expect(empty.warnings).toEqual([]);
    expect(empty.document).toEqual({});

    writeConfig("# nothing configured yet\n\n# terminal:\n#   backend: docker\n");
    const comments = loadConfig({ home });
    expect(comments.config).toEqual(emptyConfig());
    expect(comments.warnings).toEqual([]);
  });

  it("maps a full config onto the camelCase shape", () => {
    writeConfig(`# full example
plugins:
  enabled: [github, tools/lint]
  disabled: [old]
  entries:
    github:
      enabled: true
      allow_tool_override: false
    my.plugin:
      enabled: false
mcp_servers:
  my-fs:
    command: npx
    args: [-y, server-fs]
    env: { ROOT: /srv, TOKEN: "\${FS_TOKEN}" }
    enabled: "off"
    timeout: 30
    connect_timeout: 5
    tools:
      include: read_file
      exclude: [delete_file]
      resources: false
    supports_parallel_tool_calls: true
  remote:
    url: http://127.0.0.1:8080/mcp
    headers: { Authorization: "Bearer t" }
    transport: sse
hooks:
  pre_tool_call:
    - matcher: "^terminal$"
      command: node block.js
      timeout: 5
toolsets:
  enabled: [web, files]
  disabled:
    - terminal
tools:
  max_result_chars: 20000
  timeout_seconds: 120
  max_concurrency: 4
  availability_ttl_seconds: 0
terminal:
  backend: docker
  timeout_seconds: 1.5
  max_output_chars: 50000
  cwd: ~/projects
`);
    const loaded = loadConfig({ home });
    expect(loaded.exists).toBe(true);
    expect(loaded.warnings).toEqual([]);
    expect(loaded.config).toEqual({
      plugins: {
        entries: {
          github: { enabled: true, allowToolOverride: false },
          "my.plugin": { enabled: false },
        },
        enabled: ["github", "tools/lint"],
        disabled: ["old"],
      },
      mcpServers: {
        "my-fs": {
          command: "npx",
          args: ["-y", "server-fs"],
          env: { ROOT: "/srv", TOKEN: "${FS_TOKEN}" },
          enabled: "off",
          timeout: 30,
          connectTimeout: 5,
          tools: { include: "read_file", exclude: ["delete_file"], resources: false },
          supportsParallelToolCalls: true,
        },
        remote: { url: "http://127.0.0.1:8080/mcp", headers: { Authorization: "Bearer t" }, transport: "sse" },
      },
      hooks: { preToolCall: [{ matcher: "^terminal$", command: "node block.js", timeout: 5 }] },
      toolsets: { enabled: ["web", "files"], disabled: ["terminal"] },
      tools: { maxResultChars: 20000, timeoutSeconds: 120, maxConcurrency: 4, availabilityTtlSeconds: 0 },
      terminal: { backend: "docker", timeoutSeconds: 1.5, maxOutputChars: 50000, cwd: "~/projects" },
      approvals: APPROVAL_DEFAULTS,
      processes: { results: {} },
      memory: { memoryEnabled: true, userProfileEnabled: true, memoryCharLimit: 2200, userCharLimit: 1375, writeApproval: false },
      toolSearch: { enabled: "auto", thresholdPct: 10, searchDefaultLimit: 5, maxSearchLimit: 20 },
      delegation: { maxIterations: 50, maxSpawnDepth: 1, orchestratorEnabled: true, subagentAutoApprove: false, maxSummaryChars: 24000 },
      compaction: { enabled: true, threshold: 0.5, keepFirst: 3, keepLast: 20 },
      model: {},
    });
    expect((loaded.document as { tools: unknown }).tools).toEqual({
      max_result_chars: 20000,
      timeout_seconds: 120,
      max_concurrency: 4,
      availability_ttl_seconds: 0,
    });
  });

  it("reads the receipt retention of the process registry", () => {
    writeConfig("processes:\n  results:\n    max_age_days: 2.5\n    max_count: 10\n");
    expect(loadConfig({ home }).config.processes).toEqual({ results: { maxAgeDays: 2.5, maxCount: 10 } });
    writeConfig("processes:\n  results:\n    max_count: 0\n");
    expect(() => loadConfig({ home })).toThrow(/processes\.results\.max_count must be a positive integer/);
  });

  it("treats null values as unset and empty sections as empty", () => {
    writeConfig("tools:\n  timeout_seconds: ~\nterminal:\n  backend:\nplugins:\n  entries:\n    quiet:\ntoolsets:\n");
    const loaded = loadConfig({ home });
    expect(loaded.config).toEqual({
      plugins: { entries: { quiet: {} } },
      mcpServers: {},
      hooks: {},
      toolsets: {},
      tools: {},
      terminal: { backend: "local" },
      approvals: APPROVAL_DEFAULTS,
      processes: { results: {} },
      memory: { memoryEnabled: true, userProfileEnabled: true, memoryCharLimit: 2200, userCharLimit: 1375, writeApproval: false },
      toolSearch: { enabled: "auto", thresholdPct: 10, searchDefaultLimit: 5, maxSearchLimit: 20 },
      delegation: { maxIterations: 50, maxSpawnDepth: 1, orchestratorEnabled: true, subagentAutoApprove: false, maxSummaryChars: 24000 },
      compaction: { enabled: true, threshold: 0.5, keepFirst: 3, keepLast: 20 },
      model: {},
    });
  });

  it("keeps odd plugin ids as plain own keys", () => {
    writeConfig('plugins:\n  entries:\n    "__proto__":\n      enabled: true\n    "123":\n      enabled: false\n');
    const { config } = loadConfig({ home });
    expect(Object.getPrototypeOf(config.plugins.entries)).toBe(Object.prototype);
    expect(Object.hasOwn(config.plugins.entries, "__proto__")).toBe(true);
    expect(config.plugins.entries["__proto__"]).toEqual({ enabled: true });
    expect(config.plugins.entries["123"]).toEqual({ enabled: false });
    expect(({} as Record<string, unknown>).enabled).toBeUndefined();
  });

  it("reports a directory in place of the config file as not_file", () => {
    mkdirSync(path.join(home, "config.yaml"));
    const err = (() => {
      try {
        loadConfig({ home });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).kind).toBe("not_file");
  });
});

describe("type errors name file, line, column and key", () => {
  const cases: Array<{ name: string; yaml: string; line: number; column: number; key: string; reason: string }> = [
    {
      name: "boolean",
      yaml: "plugins:\n  entries:\n    foo:\n      enabled: true\n      allow_tool_override: yes\n",
      line: 5,
      column: 28,
      key: "plugins.entries.foo.allow_tool_override",
      reason: 'plugins.entries.foo.allow_tool_override must be a boolean (got "yes")',
    },
    {
      name: "plugin entry not a mapping",
      yaml: "plugins:\n  entries:\n    foo: true\n",
      line: 3,
      column: 10,
      key: "plugins.entries.foo",
      reason: "plugins.entries.foo must be a mapping (got true)",
    },
    {
      name: "list of strings",
      yaml: "toolsets:\n  enabled: web\n",
      line: 2,
      column: 12,
      key: "toolsets.enabled",
      reason: 'toolsets.enabled must be a list of strings (got "web")',
    },
    {
      name: "list item",
      yaml: "toolsets:\n  disabled:\n    - web\n    - 42\n",
      line: 4,
      column: 7,
      key: "toolsets.disabled[1]",
      reason: "toolsets.disabled[1] must be a non-empty string (got 42)",
    },
    {
      name: "positive integer (fraction)",
      yaml: "tools:\n  max_result_chars: 10.5\n",
      line: 2,
      column: 21,
      key: "tools.max_result_chars",
      reason: "tools.max_result_chars must be a positive integer (got 10.5)",
    },
    {
      name: "positive integer (quoted)",
      yaml: 'tools:\n  max_concurrency: "4"\n',
      line: 2,
      column: 20,
      key: "tools.max_concurrency",
      reason: 'tools.max_concurrency must be a positive integer (got "4")',
    },
    {
      name: "positive integer (zero)",
      yaml: "tools:\n  max_concurrency: 0\n",
      line: 2,
      column: 20,
      key: "tools.max_concurrency",
      reason: "tools.max_concurrency must be a positive integer (got 0)",
    },
    {
      name: "non-negative number",
      yaml: "tools:\n  timeout_seconds: -1\n",
      line: 2,
      column: 20,
      key: "tools.timeout_seconds",
      reason: "tools.timeout_seconds must be a non-negative number (got -1)",
    },
    {
      name: "non-negative number (infinite)",
      yaml: "tools:\n  availability_ttl_seconds: .inf\n",
      line: 2,
      column: 29,
      key: "tools.availability_ttl_seconds",
      reason: "tools.availability_ttl_seconds must be a non-negative number (got Infinity)",
    },
    {
      name: "positive number",
      yaml: "terminal:\n  timeout_seconds: 0\n",
      line: 2,
      column: 20,
      key: "terminal.timeout_seconds",
      reason: "terminal.timeout_seconds must be a positive number (got 0)",
    },
    {
      name: "string",
      yaml: "terminal:\n  backend: [local]\n",
      line: 2,
      column: 12,
      key: "terminal.backend",
      reason: "terminal.backend must be a non-empty string (got a list)",
    },
    {
      name: "section not a mapping",
      yaml: "terminal: local\n",
      line: 1,
      column: 11,
      key: "terminal",
      reason: 'terminal must be a mapping (got "local")',
    },
    {
      name: "value through an alias",
      yaml: "defaults: &limit big\ntools:\n  max_result_chars: *limit\n",
      line: 3,
      column: 21,
      key: "tools.max_result_chars",
      reason: 'tools.max_result_chars must be a positive integer (got "big")',
    },
  ];

  for (const c of cases) {
    it(c.name, () => {
      const err = errorFor(c.yaml);
      const file = path.join(home, "config.yaml");
      expect(err.kind).toBe("type");
      expect(err.file).toBe(file);
      expect(err.key).toBe(c.key);
      expect(err.reason).toBe(c.reason);
      expect([err.line, err.column]).toEqual([c.line, c.column]);
      expect(err.message).toBe(`${file}:${c.line}:${c.column}: ${c.reason}`);
    });
  }

  it("reports the first error in document order", () => {
    const err = errorFor("terminal:\n  backend: 1\ntools:\n  max_concurrency: -2\n");
    expect(err.key).toBe("terminal.backend");
    expect(err.line).toBe(2);
  });

  it("shows a file under HOME with ~", () => {
    // The default profile home (~/.mibyan), not the one test/support/isolated-home.ts sets.
    vi.stubEnv("MIBYAN_HOME", "");
    vi.stubEnv("HOME", root);
    vi.stubEnv("USERPROFILE", root);
    const profile = path.join(root, ".mibyan");
    mkdirSync(profile);
    writeConfig("plugins:\n  entries:\n    foo:\n      allow_tool_override: yes\n", profile);
    expect(() => loadConfig()).toThrow(
      `~${path.sep}.mibyan${path.sep}config.yaml:4:28: plugins.entries.foo.allow_tool_override must be a boolean (got "yes")`,
    );
  });

  it("validateConfig returns every error without throwing", () => {
    const result = validateConfig(
      { tools: { max_concurrency: "x", timeout_seconds: -1 }, terminal: { cwd: "" } },
      { file: "/x/config.yaml" },
    );
    expect(result.errors.map((e) => e.key)).toEqual([
      "tools.max_concurrency",
      "tools.timeout_seconds",
      "terminal.cwd",
    ]);
    expect(result.errors[0]!.message).toBe('/x/config.yaml: tools.max_concurrency must be a positive integer (got "x")');
  });
});

describe("document-level errors", () => {
  it("reports a YAML syntax error with its line and column", () => {
    const err = errorFor("tools:\n  max_concurrency: 2\nterminal: backend: local\n");
    const file = path.join(home, "config.yaml");
    expect(err.kind).toBe("syntax");
    expect([err.line, err.column]).toEqual([3, 11]);
    expect(err.file).toBe(file);
    expect(err.message).toBe(
      `${file}:3:11: invalid YAML: Nested mappings are not allowed in compact mappings:\n\n` +
        "terminal: backend: local\n          ^",
    );
  });

  it("reports misaligned keys with the offending line", () => {
    const err = errorFor("terminal:\n  backend: local\n cwd: /tmp\n");
    expect(err.kind).toBe("syntax");
    expect([err.line, err.column]).toEqual([3, 1]);
    expect(err.reason).toMatch(/^invalid YAML: All mapping items must start at the same column/);
  });

  it("reports an unclosed quote", () => {
    const err = errorFor('tools:\n  max_concurrency: 2\nterminal:\n  backend: "local\n');
    expect(err.kind).toBe("syntax");
    expect(err.reason).toMatch(/^invalid YAML: Missing closing "quote/);
    expect(err.line).toBeGreaterThanOrEqual(4);
  });

  it("rejects several documents in one file", () => {
    const err = errorFor("tools: {}\n---\nterminal: {}\n");
    expect(err.kind).toBe("syntax");
    expect(err.message).toContain("multiple documents");
  });

  it("rejects a top level that is not a mapping", () => {
    const list = errorFor("- tools\n- terminal\n");
    expect(list.kind).toBe("not_mapping");
    expect([list.line, list.column]).toEqual([1, 1]);
    expect(list.reason).toBe("the top level must be a mapping of keys (got a list)");

    const scalar = errorFor("\n\njust some text\n");
    expect(scalar.kind).toBe("not_mapping");
    expect([scalar.line, scalar.column]).toEqual([3, 1]);
  });

  it("mcp_servers.*.url may hold ${VAR}: judged once expanded, when the server starts", () => {
    writeConfig("mcp_servers:\n  remote:\n    url: https://${MCP_HOST}/mcp\n  bare:\n    url: ${MCP_URL}\n");
    const loaded = loadConfig({ home });
    expect(loaded.config.mcpServers?.remote?.url).toBe("https://${MCP_HOST}/mcp");
    expect(loaded.config.mcpServers?.bare?.url).toBe("${MCP_URL}");
    expect(errorFor("mcp_servers:\n  fs:\n    url: not a url\n").message).toMatch(/mcp_servers\.fs\.url must be an http\(s\) URL \(may contain \$\{VAR\}\)/);
  });

  it("mcp_servers and hooks: wrong values and misspelt keys are located errors", () => {
    const cases: Array<[string, string, [number, number], RegExp]> = [
      ["mcp_servers:\n  fs:\n    command: x\n    enabled: maybe\n", "mcp_servers.fs.enabled", [4, 14], /must be a boolean \(or one of true, yes, on, 1, false, no, off, 0\) \(got "maybe"\)/],
      ["mcp_servers:\n  fs:\n    command: x\n    env:\n      PORT: 8080\n", "mcp_servers.fs.env.PORT", [5, 13], /must be a string \(quote numbers and booleans\) \(got 8080\)/],
      ["mcp_servers:\n  fs:\n    url: ftp://x\n", "mcp_servers.fs.url", [3, 10], /must be an http\(s\) URL/],
      ["mcp_servers:\n  fs:\n    command: x\n    tools:\n      exlude: [rm]\n", "mcp_servers.fs.tools.exlude", [5, 7], /unknown key mcp_servers\.fs\.tools\.exlude; did you mean mcp_servers\.fs\.tools\.exclude\?/],
      ["mcp_servers:\n  fs: npx\n", "mcp_servers.fs", [2, 7], /must be a mapping \(got "npx"\)/],
      ["hooks:\n  pre_tool_cal:\n    - command: x\n", "hooks.pre_tool_cal", [2, 3], /did you mean hooks\.pre_tool_call\?/],
      ["hooks:\n  pre_tool_call:\n    - matcher: \"([\"\n      command: x\n", "hooks.pre_tool_call[0].matcher", [3, 16], /must be a valid regular expression/],
      ["hooks:\n  pre_tool_call:\n    - matcher: x\n", "hooks.pre_tool_call[0].command", [3, 7], /must be a non-empty string \(got nothing\)/],
    ];
    for (const [text, key, [line, column], reason] of cases) {
      const err = errorFor(text);
      expect(err.key, text).toBe(key);
      expect([err.line, err.column], text).toEqual([line, column]);
      expect(err.reason, text).toMatch(reason);
    }
  });

  it("rejects a duplicate key, naming its path and both lines", () => {
    const err = errorFor("terminal:\n  backend: local\n  cwd: /tmp\n  backend: docker\n");
    expect(err.kind).toBe("duplicate_key");
    expect(err.key).toBe("terminal.backend");
    expect([err.line, err.column]).toEqual([4, 3]);
    expect(err.reason).toBe("duplicate key terminal.backend (first set on line 2)");
  });

  it("rejects duplicate keys in sections it does not know", () => {
    const err = errorFor("mcp_servers:\n  fs:\n    command: a\n  fs:\n    command: b\n");
    expect(err.kind).toBe("duplicate_key");
    expect(err.key).toBe("mcp_servers.fs");
    expect(err.line).toBe(4);
  });

  it("rejects duplicate top-level sections", () => {
    const err = errorFor("tools: {}\nterminal: {}\ntools: {}\n");
    expect(err.key).toBe("tools");
    expect([err.line, err.column]).toEqual([3, 1]);
  });
});

describe("unknown keys in terminal and approvals are errors", () => {
  it("terminal.bakend: a located ConfigError with the close match, not a warning and a local backend", () => {
    const file = writeConfig("terminal:\n  bakend: docker\n");
    const err = (() => {
      try {
        loadConfig({ home });
      } catch (thrown) {
        return thrown;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect(err).toMatchObject({ kind: "unknown_key", line: 2, column: 3, key: "terminal.bakend" });
    expect((err as ConfigError).message.startsWith(`${file}:2:3: unknown key terminal.bakend; did you mean terminal.backend?`)).toBe(true);
  });

  it("approvals: a misspelt key, also nested (approvals.smart), is an error", () => {
    writeConfig("approvals:\n  mod: off\n");
    expect(() => loadConfig({ home })).toThrow(/:2:3: unknown key approvals\.mod; did you mean approvals\.mode\?/);
    writeConfig("approvals:\n  smart:\n    modle: gpt\n");
    expect(() => loadConfig({ home })).toThrow(/:3:5: unknown key approvals\.smart\.modle; did you mean approvals\.smart\.model\?/);
  });

  it("validateConfig reports it among errors; other sections and the top level stay warnings", () => {
    const result = validateConfig({ terminal: { backend: "docker", isolate: true }, tools: { max_concurency: 2 }, bakend: "docker" }, { file: "c.yaml" });
    expect(result.errors.map((e) => [e.kind, e.key])).toEqual([["unknown_key", "terminal.isolate"]]);
    expect(result.warnings.map((w) => w.key)).toEqual(["tools.max_concurency", "bakend"]);
  });
});

describe("unknown keys are warnings", () => {
  it("suggests a close sibling", () => {
    const file = writeConfig("tools:\n  max_concurency: 3\n");
    const loaded = loadConfig({ home });
    expect(loaded.warnings).toEqual([`${file}:2:3: unknown key tools.max_concurency; did you mean tools.max_concurrency?`]);
    expect(loaded.config.tools.maxConcurrency).toBeUndefined();
  });

  it("suggests the snake_case spelling of a camelCase key", () => {
    writeConfig("tools:\n  maxResultChars: 100\n");
    expect(loadConfig({ home }).warnings[0]).toMatch(
      /unknown key tools\.maxResultChars; did you mean tools\.max_result_chars\?$/,
    );
  });

  it("suggests inside plugin entries", () => {
    writeConfig("plugins:\n  entries:\n    foo:\n      enabeld: true\n");
    expect(loadConfig({ home }).warnings[0]).toMatch(
      /:4:7: unknown key plugins\.entries\.foo\.enabeld; did you mean plugins\.entries\.foo\.enabled\?$/,
    );
  });

  it("suggests the right section for a misplaced key", () => {
    writeConfig("max_concurrency: 3\ntimeout_seconds: 5\n");
    const { warnings } = loadConfig({ home });
    expect(warnings[0]).toMatch(/:1:1: unknown key max_concurrency; did you mean tools\.max_concurrency\?$/);
    expect(warnings[1]).toMatch(
      /:2:1: unknown key timeout_seconds; did you mean tools\.timeout_seconds or terminal\.timeout_seconds or approvals\.timeout_seconds or approvals\.smart\.timeout_seconds\?$/,
    );
  });

  it("warns without a suggestion when nothing is close, and keeps the section in document", () => {
    writeConfig("browser_pool:\n  size: 2\nbrowser_profiles:\n  fs:\n    command: npx\ntools:\n  max_concurrency: 2\n");
    const loaded = loadConfig({ home });
    expect(loaded.warnings.map((w) => w.replace(/^.*?:\d+:\d+: /, ""))).toEqual([
      "unknown key browser_pool",
      "unknown key browser_profiles",
    ]);
    expect(loaded.config.tools.maxConcurrency).toBe(2);
    expect((loaded.document as Record<string, unknown>).browser_profiles).toEqual({ fs: { command: "npx" } });
  });
});

describe("getConfig", () => {
  it("memoises until the file changes", () => {
    const file = writeConfig("tools:\n  max_concurrency: 2\n");
    const first = getConfig(home);
    expect(first.config.tools.maxConcurrency).toBe(2);
    expect(getConfig(home)).toBe(first);

    // Different size.
    writeConfig("tools:\n  max_concurrency: 16\n");
    const second = getConfig(home);
    expect(second).not.toBe(first);
    expect(second.config.tools.maxConcurrency).toBe(16);

    // Same size, different content: caught by the modification time.
    writeConfig("tools:\n  max_concurrency: 32\n");
    const later = new Date(Date.now() + 5_000);
    utimesSync(file, later, later);
    const third = getConfig(home);
    expect(third.config.tools.maxConcurrency).toBe(32);
    expect(getConfig(home)).toBe(third);
  });

  it("notices a file appearing and disappearing", () => {
    const missing = getConfig(home);
    expect(missing.exists).toBe(false);
    expect(getConfig(home)).toBe(missing);

    const file = writeConfig("terminal:\n  backend: ssh\n");
    const present = getConfig(home);
    expect(present.exists).toBe(true);
    expect(present.config.terminal.backend).toBe("ssh");

    rmSync(file);
    expect(getConfig(home).exists).toBe(false);
  });

  it("clearConfigCache forces a re-read", () => {
    writeConfig("terminal:\n  backend: ssh\n");
    const first = getConfig(home);
    clearConfigCache();
    const second = getConfig(home);
    expect(second).not.toBe(first);
    expect(second).toEqual(first);
  });

  it("returns a frozen result", () => {
    writeConfig("toolsets:\n  enabled: [web]\n");
    const loaded = getConfig(home);
    expect(Object.isFrozen(loaded.config.toolsets.enabled)).toBe(true);
    expect(() => loaded.config.toolsets.enabled!.push("x")).toThrow(TypeError);
  });

  it("defaults to the profile home from the environment", () => {
    vi.stubEnv("MIBYAN_HOME", home);
    const file = writeConfig("terminal:\n  max_output_chars: 10\n");
    const loaded = getConfig();
    expect(loaded.path).toBe(file);
    expect(loaded.config.terminal.maxOutputChars).toBe(10);
  });

  it("does not cache errors", () => {
    writeConfig("tools:\n  max_concurrency: nope\n");
    expect(() => getConfig(home)).toThrow(ConfigError);
    writeConfig("tools:\n  max_concurrency: 5\n");
    expect(getConfig(home).config.tools.maxConcurrency).toBe(5);
  });
});
