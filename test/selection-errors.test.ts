// A selection that matches nothing is an error (issue 11): unknown toolsets in getToolDefinitions /
// selectTools, in `mibyan definitions --enable/--disable` and in config.yaml's toolsets section.
// The CLI cases run the built CLI as real processes with a real config.yaml in a temporary profile home.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

import { ToolRegistry, createMemoryLogger, getToolDefinitions, selectTools, type OpenAIToolDefinition } from "../src/index.js";
import { UnknownToolsetError, findUnknownToolsets } from "../src/toolsets/index.js";
import { configValueError, ConfigError } from "../src/config/index.js";
import { BIN, ROOT, cliEnv, spawnCollect } from "./support/cli-run.js";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

function setup() {
  const logger = createMemoryLogger();
  const registry = new ToolRegistry({ logger });
  const add = (name: string, toolset: string) => registry.register({ name, toolset, schema: { description: name }, handler: () => name });
  add("terminal", "terminal");
  add("process", "terminal");
  add("read_file", "file");
  add("web_search", "web");
  add("mcp_issue", "mcp-github");
  return { registry, logger };
}

const names = (defs: unknown[]) => (defs as OpenAIToolDefinition[]).map((d) => d.function.name);

describe("library: unknown toolsets are a typed error", () => {
  it("an unknown enabled toolset throws UnknownToolsetError with its close matches, before anything is listed", () => {
    const { registry, logger } = setup();
    let thrown: unknown;
    try {
      getToolDefinitions({ registry, enabledToolsets: ["terminal", "webb"] });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(UnknownToolsetError);
    const error = thrown as UnknownToolsetError;
    expect(error.name).toBe("UnknownToolsetError");
    expect(error.unknown).toEqual([{ name: "webb", list: "enabled", index: 1, suggestions: ["web", "web_tools"] }]);
    expect(error.message).toMatch(/^Unknown toolset "webb"; did you mean: web, web_tools\? \(in the enabled toolsets\)/);
    expect(logger.messages).toEqual([]);
  });

  it("an unknown disabled toolset is an error too: a typo must not keep a toolset the caller meant to remove", () => {
    const { registry } = setup();
    expect(() => selectTools({ registry, disabledToolsets: ["termnal"] })).toThrow(UnknownToolsetError);
    try {
      selectTools({ registry, enabledToolsets: ["nosuch"], disabledToolsets: ["terminal", "termnal"] });
    } catch (err) {
      expect((err as UnknownToolsetError).unknown.map((u) => [u.list, u.name, u.index])).toEqual([
        ["enabled", "nosuch", 0],
        ["disabled", "termnal", 1],
      ]);
    }
  });

  it("names that resolve are fine: built-ins without tools, legacy names, dynamic toolsets, all and *", () => {
    const { registry } = setup();
    expect(names(getToolDefinitions({ registry, enabledToolsets: ["terminal_tools", "mcp-github"] }))).toEqual(["mcp_issue", "process", "terminal"]);
    expect(getToolDefinitions({ registry, enabledToolsets: ["moa"] })).toEqual([]);
    expect(names(getToolDefinitions({ registry, enabledToolsets: ["all"], disabledToolsets: ["*"] }))).toEqual([]);
    expect(findUnknownToolsets(registry.toolsets, { enabled: ["debugging", "mibyan-cli", "file_tools"] })).toEqual([]);
  });

  it("unknownToolsets: warn keeps the earlier behaviour (skip with a warning)", () => {
    const { registry, logger } = setup();
    expect(names(getToolDefinitions({ registry, enabledToolsets: ["file", "mcp-gthub"], unknownToolsets: "warn" }))).toEqual(["read_file"]);
    expect(logger.messages.map((m) => m.message)).toEqual(['Unknown toolset "mcp-gthub"; did you mean: mcp-github?']);
  });

  it("a one-shot iterable selection is checked and still selected", () => {
    const { registry } = setup();
    function* once() {
      yield "file";
    }
    expect(names(getToolDefinitions({ registry, enabledToolsets: once() as unknown as string[] }))).toEqual(["read_file"]);
  });

  it("configValueError points at the list item in the file", () => {
    const home = tempDir("mibyan-sel-cfg-");
    const file = path.join(home, "config.yaml");
    writeFileSync(file, "# toolsets\ntoolsets:\n  enabled: [terminal, webb]\n");
    const error = configValueError({ path: file }, ["toolsets", "enabled", 1], 'unknown toolset "webb"');
    expect(error).toBeInstanceOf(ConfigError);
    expect([error.kind, error.line, error.column, error.key]).toEqual(["unknown_name", 3, 23, "toolsets.enabled[1]"]);
    expect(error.message).toBe(`${file}:3:23: toolsets.enabled[1]: unknown toolset "webb"`);
  });
});

const HAS_DIST = existsSync(path.join(ROOT, "dist", "cli", "main.js"));

async function mibyan(args: readonly string[], config?: string) {
  const home = tempDir("mibyan-sel-home-");
  if (config !== undefined) writeFileSync(path.join(home, "config.yaml"), config);
  return spawnCollect(process.execPath, [BIN, ...args], { env: cliEnv(home, tempDir("mibyan-sel-user-")), cwd: home });
}

describe.runIf(HAS_DIST).concurrent("CLI: a selection that matches nothing exits 2", () => {
  it("--enable/--disable with unknown names: exit 2, every unknown name and its close matches on stderr, nothing on stdout", async () => {
    const run = await mibyan(["definitions", "--enable", "terminal,webb", "--disable", "nosuchset"]);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(
      'mibyan: unknown toolset "webb" in --enable; did you mean: web, web_tools?; unknown toolset "nosuchset" in --disable\n(run mibyan --help for usage)\n',
    );
  });

  it("legacy names and all resolve: exit 0", async () => {
    const run = await mibyan(["definitions", "--enable", "terminal_tools,all", "--disable", "web_tools"]);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(names(JSON.parse(run.stdout) as unknown[])).toContain("terminal");
  });

  it("a toolsets.enabled typo in config.yaml is a located configuration error: exit 2", async () => {
    const run = await mibyan(["definitions"], "toolsets:\n  enabled:\n    - terminal\n    - fille\n");
    expect(run.status).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/^mibyan: .*config\.yaml:4:7: toolsets\.enabled\[1\]: unknown toolset "fille"; did you mean: file, file_tools\?\n$/);
  });

  it("a toolsets.disabled typo too, and flags replace the configured section (so they still work)", async () => {
    const config = "toolsets:\n  disabled: [terminl]\n";
    const [fromConfig, flags] = await Promise.all([mibyan(["definitions"], config), mibyan(["definitions", "--enable", "terminal"], config)]);
    expect(fromConfig.status).toBe(2);
    expect(fromConfig.stderr).toMatch(/config\.yaml:2:14: toolsets\.disabled\[0\]: unknown toolset "terminl"; did you mean: terminal/);
    expect(flags.status).toBe(0);
    expect(names(JSON.parse(flags.stdout) as unknown[])).toContain("terminal");
  });
});

describe("unknown tool names suggest close matches", () => {
  it("the model-facing error names the close matches, and only among the tools the session may call", async () => {
    const { registry } = setup();
    expect(await registry.dispatch("termnal", {})).toBe('{"error":"Unknown tool: termnal. Did you mean: terminal?"}');
    expect(await registry.dispatch("read-file", {})).toBe('{"error":"Unknown tool: read-file. Did you mean: read_file?"}');
    expect(await registry.dispatch("zzzzzz", {})).toBe('{"error":"Unknown tool: zzzzzz"}');
    // A session limited to read_file: terminal is not suggested (the model may not call it).
    expect(await registry.dispatch("termnal", {}, { allowedTools: ["read_file", "termnal"] })).toBe('{"error":"Unknown tool: termnal"}');
    const result = await registry.invoke({ name: "web_serch" });
    expect(result.error).toMatchObject({ kind: "unknown_tool", message: "Unknown tool: web_serch. Did you mean: web_search?" });
  });

  it("a huge hostile name gets no suggestions and stays cheap", async () => {
    const { registry } = setup();
    const name = `terminal${"x".repeat(200_000)}`;
    const result = await registry.invoke({ name });
    expect(result.error?.kind).toBe("unknown_tool");
    expect(result.error?.message).not.toMatch(/Did you mean/);
  });
});

describe.runIf(HAS_DIST).concurrent("CLI: mibyan call with an unknown tool", () => {
  it("exit 2 (a usage error), the model-facing result with close matches on stdout, the message on stderr", async () => {
    const run = await mibyan(["call", "termnal", '{"command":"true"}']);
    expect(run.status).toBe(2);
    expect(JSON.parse(run.stdout)).toEqual({ error: "Unknown tool: termnal. Did you mean: terminal?" });
    expect(run.stderr).toBe("mibyan: Unknown tool: termnal. Did you mean: terminal?\n");
  });
});
