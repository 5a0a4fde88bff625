import { describe, expect, it } from "vitest";
import {
  BUILTIN_TOOLSETS,
  LEGACY_TOOLSETS,
  ToolsetCatalog,
  closeMatches,
  type ToolIndex,
  type ToolsetDefinition,
} from "../src/toolsets/index.js";

/** A small in-memory ToolIndex: tool name → toolset name. */
class MemoryIndex implements ToolIndex {
  readonly tools = new Map<string, string>();
  gen = 0;
  calls = { toolNames: 0, toolsInToolset: 0, registeredToolsets: 0 };

  constructor(entries: Record<string, string> = {}) {
    for (const [tool, toolset] of Object.entries(entries)) this.tools.set(tool, toolset);
  }
  add(tool: string, toolset: string): this {
    this.tools.set(tool, toolset);
    this.gen++;
    return this;
  }
  delete(tool: string): this {
    this.tools.delete(tool);
    this.gen++;
    return this;
  }
  toolNames(): Iterable<string> {
    this.calls.toolNames++;
    return this.tools.keys();
  }
  toolsInToolset(toolset: string): Iterable<string> {
    this.calls.toolsInToolset++;
    const out: string[] = [];
    for (const [tool, ts] of this.tools) if (ts === toolset) out.push(tool);
    return out;
  }
  registeredToolsets(): Iterable<string> {
    this.calls.registeredToolsets++;
    return new Set(this.tools.values());
  }
}

/** The same index, plus a generation counter the catalog may cache by. */
class GenerationIndex extends MemoryIndex {
  generation(): number {
    return this.gen;
  }
}

/** Registers every tool the built-in toolsets list, under the first toolset that lists it. */
function builtinIndex<T extends MemoryIndex>(index: T): T {
  for (const def of BUILTIN_TOOLSETS) {
    for (const tool of def.tools) if (!index.tools.has(tool)) index.tools.set(tool, def.name);
  }
  return index;
}

const sorted = (s: Iterable<string>): string[] => [...s].sort();

const def = (name: string, tools: string[], includes: string[] = []): ToolsetDefinition => ({
  name,
  description: `${name} test toolset`,
  tools,
  includes,
});

describe("builtin data", () => {
  it("has the required toolsets with the required tools", () => {
    const byName = new Map(BUILTIN_TOOLSETS.map((d) => [d.name, d]));
    const expected: Record<string, string[]> = {
      terminal: ["terminal", "process"],
      file: ["read_file", "write_file", "patch", "search_files"],
      code_execution: ["execute_code"],
      web: ["web_search", "web_extract"],
      browser: [
        "browser_navigate",
        "browser_snapshot",
        "browser_click",
        "browser_type",
        "browser_scroll",
        "browser_back",
        "browser_press",
        "browser_close",
        "browser_get_images",
        "browser_vision",
      ],
      vision: ["vision_analyze"],
      image_gen: ["image_generate"],
      todo: ["todo"],
      memory: ["memory"],
      session_search: ["session_search"],
      delegation: ["delegate_task"],
      clarify: ["clarify"],
      skills: ["skills_list", "skill_view", "skill_manage"],
      cronjob: ["cronjob"],
      tts: ["text_to_speech"],
    };
    for (const [name, tools] of Object.entries(expected)) {
      expect(sorted(byName.get(name)?.tools ?? []), name).toEqual(sorted(tools));
    }
    for (const preset of ["mibyan-cli", "mibyan-acp", "mibyan-api-server", "mibyan-telegram", "mibyan-discord", "mibyan-slack"]) {
      const d = byName.get(preset);
      expect(d?.kind, preset).toBe("preset");
      expect(d?.includes.length, preset).toBeGreaterThan(0);
    }
  });

  it("has unique names, descriptions, and includes that all resolve without warnings", () => {
    const names = BUILTIN_TOOLSETS.map((d) => d.name);
    expect(new Set(names).size).toBe(names.length);
    for (const d of BUILTIN_TOOLSETS) expect(d.description.length, d.name).toBeGreaterThan(10);
    const catalog = new ToolsetCatalog(new MemoryIndex());
    for (const name of names) {
      const r = catalog.resolve(name);
      expect(r.warnings, name).toEqual([]);
      expect(r.unknown, name).toEqual([]);
    }
  });

  it("has the legacy names, each mapping to the tools of its modern toolset", () => {
    const catalog = new ToolsetCatalog(new MemoryIndex());
    const pairs: Record<string, string> = {
      web_tools: "web",
      terminal_tools: "terminal",
      file_tools: "file",
      browser_tools: "browser",
      vision_tools: "vision",
      image_tools: "image_gen",
      moa_tools: "moa",
      skills_tools: "skills",
      cronjob_tools: "cronjob",
      tts_tools: "tts",
      memory_tools: "memory",
      todo_tools: "todo",
      delegation_tools: "delegation",
      code_execution_tools: "code_execution",
      session_search_tools: "session_search",
      clarify_tools: "clarify",
    };
    expect(sorted(Object.keys(LEGACY_TOOLSETS))).toEqual(sorted(Object.keys(pairs)));
    for (const [legacy, modern] of Object.entries(pairs)) {
      expect(sorted(catalog.resolve(legacy).tools), legacy).toEqual(sorted(catalog.resolve(modern).tools));
    }
  });
});

describe("resolve", () => {
  it("resolves a plain toolset to its tools", () => {
    const catalog = new ToolsetCatalog(new MemoryIndex());
    expect(sorted(catalog.resolve("web").tools)).toEqual(["web_extract", "web_search"]);
  });

  it("expands composites", () => {
    const catalog = new ToolsetCatalog(new MemoryIndex());
    const r = catalog.resolve("debugging");
    expect(sorted(r.tools)).toEqual(
      sorted(["terminal", "process", "read_file", "write_file", "patch", "search_files", "web_search", "web_extract"]),
    );
    expect(r.warnings).toEqual([]);
  });

  it("keeps terminal and code execution out of safe", () => {
    const catalog = new ToolsetCatalog(new MemoryIndex());
    const safe = catalog.resolve("safe").tools;
    for (const tool of ["terminal", "process", "execute_code"]) expect(safe.has(tool), tool).toBe(false);
    expect(safe.has("read_file")).toBe(true);
    expect(safe.has("web_search")).toBe(true);
  });

  it("expands presets through nested includes", () => {
    const catalog = new ToolsetCatalog(new MemoryIndex());
    const cli = catalog.resolve("mibyan-cli").tools;
    for (const tool of ["terminal", "read_file", "execute_code", "browser_navigate", "clarify", "text_to_speech", "todo", "delegate_task", "cronjob"]) {
      expect(cli.has(tool), tool).toBe(true);
    }
    const acp = catalog.resolve("mibyan-acp").tools;
    expect(acp.has("terminal")).toBe(true);
    expect(acp.has("read_file")).toBe(true);
    for (const tool of ["clarify", "text_to_speech", "send_message"]) expect(acp.has(tool), tool).toBe(false);
    const api = catalog.resolve("mibyan-api-server").tools;
    expect(api.has("clarify")).toBe(false);
    expect(api.has("terminal")).toBe(true);
    for (const gateway of ["mibyan-telegram", "mibyan-discord", "mibyan-slack"]) {
      const tools = catalog.resolve(gateway).tools;
      expect(tools.has("send_message"), gateway).toBe(true);
      expect(tools.has("terminal"), gateway).toBe(true);
    }
  });

  it("resolves all and * to every registered tool", () => {
    const index = new MemoryIndex({ terminal: "terminal", web_search: "web", mcp_github_search: "mcp-github" });
    const catalog = new ToolsetCatalog(index);
    for (const name of ["all", "*"]) {
      const r = catalog.resolve(name);
      expect(sorted(r.tools), name).toEqual(["mcp_github_search", "terminal", "web_search"]);
      expect(r.warnings).toEqual([]);
    }
  });

  it("expands all when included by a composite", () => {
    const index = new MemoryIndex({ a_tool: "a", b_tool: "b" });
    const catalog = new ToolsetCatalog(index, [def("everything", ["extra"], ["*"])]);
    expect(sorted(catalog.resolve("everything").tools)).toEqual(["a_tool", "b_tool", "extra"]);
  });

  it("maps legacy names to their tools, and accepts them in includes", () => {
    const catalog = new ToolsetCatalog(new MemoryIndex(), [def("old", [], ["web_tools", "tts_tools"])]);
    expect(sorted(catalog.resolve("web_tools").tools)).toEqual(["web_extract", "web_search"]);
    expect(sorted(catalog.resolve("old").tools)).toEqual(["text_to_speech", "web_extract", "web_search"]);
    expect(catalog.origin("web_tools")).toBe("legacy");
    expect(catalog.has("browser_tools")).toBe(true);
  });

  it("resolves dynamic toolsets from the index", () => {
    const index = new MemoryIndex({ mcp_github_search: "mcp-github", mcp_github_pr: "mcp-github", terminal: "terminal" });
    const catalog = new ToolsetCatalog(index);
    const r = catalog.resolve("mcp-github");
    expect(sorted(r.tools)).toEqual(["mcp_github_pr", "mcp_github_search"]);
    expect(r.unknown).toEqual([]);
    expect(catalog.names()).toContain("mcp-github");
    expect(catalog.origin("mcp-github")).toBe("dynamic");
    expect(catalog.get("mcp-github")?.tools).toEqual(["mcp_github_pr", "mcp_github_search"]);

    // Tools appear and disappear with the index; nothing stale is cached.
    index.add("mcp_github_issue", "mcp-github");
    expect(catalog.resolve("mcp-github").tools.has("mcp_github_issue")).toBe(true);
    for (const tool of ["mcp_github_search", "mcp_github_pr", "mcp_github_issue"]) index.delete(tool);
    expect(catalog.resolve("mcp-github").unknown).toEqual(["mcp-github"]);
    expect(catalog.names()).not.toContain("mcp-github");
  });

  it("unions a static toolset with tools registered under its name", () => {
    const index = new MemoryIndex({ plugin_fetch: "web" });
    const catalog = new ToolsetCatalog(index);
    expect(sorted(catalog.resolve("web").tools)).toEqual(["plugin_fetch", "web_extract", "web_search"]);
    // ... and the plugin tool reaches composites and presets including `web`.
    expect(catalog.resolve("debugging").tools.has("plugin_fetch")).toBe(true);
    expect(catalog.resolve("mibyan-cli").tools.has("plugin_fetch")).toBe(true);
    expect(catalog.toolsetsOfTool("plugin_fetch")).toEqual(["web"]);
  });

  it("resolves dynamic toolsets named in includes", () => {
    const index = new MemoryIndex({ mcp_github_search: "mcp-github" });
    const catalog = new ToolsetCatalog(index, [def("dev", [], ["mcp-github", "mcp-gthub"])]);
    const r = catalog.resolve("dev");
    expect(sorted(r.tools)).toEqual(["mcp_github_search"]);
    expect(r.unknown).toEqual([]);
    expect(r.warnings).toEqual(['Toolset "dev" includes unknown toolset "mcp-gthub"; did you mean: mcp-github?']);
  });
});

describe("cycles", () => {
  it("A includes B includes A: terminates, keeps the tools, warns naming the cycle", () => {
    const catalog = new ToolsetCatalog(new MemoryIndex(), [def("a", ["ta"], ["b"]), def("b", ["tb"], ["a"])]);
    const a = catalog.resolve("a");
    expect(sorted(a.tools)).toEqual(["ta", "tb"]);
    expect(a.warnings).toEqual(["Toolset cycle: a -> b -> a (not followed)"]);
    const b = catalog.resolve("b");
    expect(sorted(b.tools)).toEqual(["ta", "tb"]);
    expect(b.warnings).toEqual(["Toolset cycle: b -> a -> b (not followed)"]);
  });

  it("a self-include terminates and warns", () => {
    const catalog = new ToolsetCatalog(new MemoryIndex(), [def("self", ["t"], ["self"])]);
    const r = catalog.resolve("self");
    expect(sorted(r.tools)).toEqual(["t"]);
    expect(r.warnings).toEqual(["Toolset cycle: self -> self (not followed)"]);
  });

  it("a longer cycle reached through a preset is reported once per back edge; diamonds are not cycles", () => {
    const catalog = new ToolsetCatalog(new MemoryIndex(), [
      def("top", [], ["x", "diamond1", "diamond2"]),
      def("x", ["tx"], ["y"]),
      def("y", ["ty"], ["z"]),
      def("z", ["tz"], ["x"]),
      def("diamond1", [], ["leaf"]),
      def("diamond2", [], ["leaf"]),
      def("leaf", ["tleaf"]),
    ]);
    const r = catalog.resolve("top");
    expect(sorted(r.tools)).toEqual(["tleaf", "tx", "ty", "tz"]);
    expect(r.warnings).toEqual(["Toolset cycle: x -> y -> z -> x (not followed)"]);
  });

  it("a cycle introduced with define() is caught too", () => {
    const catalog = new ToolsetCatalog(new MemoryIndex());
    catalog.define(def("loop", [], ["web", "loop2"]));
    catalog.define(def("loop2", [], ["loop"]));
    const r = catalog.resolve("loop");
    expect(sorted(r.tools)).toEqual(["web_extract", "web_search"]);
    expect(r.warnings).toEqual(["Toolset cycle: loop -> loop2 -> loop (not followed)"]);
  });
});

describe("define / remove / names / get", () => {
  it("defines, replaces and removes toolsets, invalidating cached expansions", () => {
    const catalog = new ToolsetCatalog(new MemoryIndex());
    catalog.define(def("custom", ["x"], ["web"]));
    expect(catalog.resolve("custom").tools.has("x")).toBe(true);
    expect(catalog.resolve("custom").tools.has("web_search")).toBe(true);
    catalog.define({ name: "wrapper", description: "", tools: [], includes: ["custom"] });
    expect(catalog.resolve("wrapper").tools.has("x")).toBe(true);

    catalog.define(def("custom", ["y"]));
    expect(sorted(catalog.resolve("custom").tools)).toEqual(["y"]);
    expect(sorted(catalog.resolve("wrapper").tools)).toEqual(["y"]);
    expect(catalog.origin("custom")).toBe("defined");
    expect(catalog.names()).toContain("custom");

    expect(catalog.remove("custom")).toBe(true);
    expect(catalog.remove("custom")).toBe(false);
    expect(catalog.has("custom")).toBe(false);
    expect(catalog.resolve("custom").unknown).toEqual(["custom"]);
    expect(catalog.resolve("wrapper").warnings[0]).toMatch(/^Toolset "wrapper" includes unknown toolset "custom"/);
  });

  it("a defined toolset shadows a built-in until removed; built-ins cannot be removed", () => {
    const catalog = new ToolsetCatalog(new MemoryIndex());
    catalog.define(def("web", ["only_this"]));
    expect(sorted(catalog.resolve("web").tools)).toEqual(["only_this"]);
    expect(catalog.resolve("debugging").tools.has("only_this")).toBe(true);
    expect(catalog.remove("web")).toBe(true);
    expect(sorted(catalog.resolve("web").tools)).toEqual(["web_extract", "web_search"]);
    expect(catalog.remove("web")).toBe(false);
    expect(catalog.has("web")).toBe(true);
  });

  it("stores a frozen copy and rejects invalid definitions", () => {
    const catalog = new ToolsetCatalog(new MemoryIndex());
    const tools = ["a"];
    const stored = catalog.define({ name: "mine", description: "d", tools, includes: [] });
    tools.push("b");
    expect(catalog.get("mine")?.tools).toEqual(["a"]);
    expect(Object.isFrozen(stored)).toBe(true);
    expect(() => catalog.define(def("", []))).toThrow(TypeError);
    expect(() => catalog.define(def("all", []))).toThrow(/reserved/);
    expect(() => catalog.define(def("*", []))).toThrow(/reserved/);
    expect(() => catalog.define({ name: "bad", description: "", tools: [1 as unknown as string], includes: [] })).toThrow(TypeError);
    expect(() => new ToolsetCatalog(new MemoryIndex(), [def("d", []), def("d", [])])).toThrow(/duplicate/);
  });

  it("names() lists static, defined and dynamic names, sorted; has() also knows aliases", () => {
    const index = new MemoryIndex({ mcp_x: "mcp-x" });
    const catalog = new ToolsetCatalog(index, [def("b", []), def("a", [])]);
    catalog.define(def("c", []));
    expect(catalog.names()).toEqual(["a", "b", "c", "mcp-x"]);
    for (const name of ["a", "c", "mcp-x", "all", "*", "web_tools"]) expect(catalog.has(name), name).toBe(true);
    expect(catalog.has("nope")).toBe(false);
    expect(catalog.get("a")?.description).toBe("a test toolset");
    expect(catalog.get("web_tools")?.tools).toEqual(["web_search", "web_extract"]);
    expect(catalog.get("all")).toBeUndefined();
    expect(catalog.get("nope")).toBeUndefined();
    expect(catalog.definitions().map((d) => d.name)).toEqual(["a", "b", "c"]);
  });

  it("toolsetsOfTool lists direct and, on request, transitive toolsets", () => {
    const index = builtinIndex(new MemoryIndex());
    const catalog = new ToolsetCatalog(index);
    expect(catalog.toolsetsOfTool("web_search")).toEqual(["web"]);
    const transitive = catalog.toolsetsOfTool("web_search", { transitive: true });
    for (const name of ["web", "debugging", "research", "safe", "core", "mibyan-cli", "mibyan-acp"]) {
      expect(transitive, name).toContain(name);
    }
    expect(transitive).not.toContain("terminal");
    expect(catalog.toolsetsOfTool("terminal", { transitive: true })).not.toContain("safe");
    expect(catalog.toolsetsOfTool("no_such_tool")).toEqual([]);
  });
});

describe("unknown names", () => {
  it("reports unknown names with close-match suggestions from all known names", () => {
    const catalog = new ToolsetCatalog(new MemoryIndex());
    const r = catalog.resolve("webb");
    expect(r.tools.size).toBe(0);
    expect(r.unknown).toEqual(["webb"]);
    expect(r.warnings).toEqual(['Unknown toolset "webb"; did you mean: web, web_tools?']);
  });

  it("suggests dynamic and preset names, and omits the suggestion when nothing is close", () => {
    const catalog = new ToolsetCatalog(new MemoryIndex({ mcp_gh: "mcp-github" }));
    expect(catalog.resolve("mcp-gihtub").warnings[0]).toContain("did you mean: mcp-github");
    expect(catalog.resolve("mibyan-telgram").warnings[0]).toContain("did you mean: mibyan-telegram");
    expect(catalog.resolve("Terminal").warnings[0]).toBe('Unknown toolset "Terminal"; did you mean: terminal, terminal_tools?');
    expect(catalog.resolve("qqqqqqqq").warnings).toEqual(['Unknown toolset "qqqqqqqq"']);
  });
});

describe("closeMatches", () => {
  const names = ["web", "web_tools", "terminal", "terminal_tools", "browser", "file", "mibyan-cli", "mibyan-acp", "mcp-github"];

  it("matches by edit distance, prefix, parts and substrings, case-insensitively", () => {
    expect(closeMatches("webb", names)).toEqual(["web", "web_tools"]);
    expect(closeMatches("TERMINAL", names)).toEqual(["terminal", "terminal_tools"]);
    expect(closeMatches("termnal", names)).toEqual(["terminal", "terminal_tools"]);
    expect(closeMatches("brwoser", names)).toEqual(["browser"]);
    expect(closeMatches("term", names)).toEqual(["terminal", "terminal_tools"]);
    expect(closeMatches("mibyan", names)).toEqual(["mibyan-acp", "mibyan-cli"]);
    expect(closeMatches("github", names)).toEqual(["mcp-github"]);
    expect(closeMatches("files", names)).toEqual(["file"]);
  });

  it("respects max, ignores empty queries and finds nothing for unrelated names", () => {
    expect(closeMatches("we", ["wed", "wec", "web", "wea"], 2)).toEqual(["wea", "web"]);
    expect(closeMatches("w", ["wa", "wb"])).toEqual([]);
    expect(closeMatches("web", names, 1)).toEqual(["web"]);
    expect(closeMatches("web", names, 0)).toEqual([]);
    expect(closeMatches("", names)).toEqual([]);
    expect(closeMatches("zzzzzz", names)).toEqual([]);
    expect(closeMatches("ab", ["xy", "cd"])).toEqual([]);
  });
});

describe("select", () => {
  const makeIndex = <T extends MemoryIndex>(index: T): T => {
    builtinIndex(index);
    index.tools.set("mcp_github_search", "mcp-github");
    return index;
  };

  for (const [label, make] of [
    ["without generation", () => makeIndex(new MemoryIndex())],
    ["with generation", () => makeIndex(new GenerationIndex())],
  ] as const) {
    describe(label, () => {
      it("neither enabled nor disabled: every registered tool", () => {
        const index = make();
        const catalog = new ToolsetCatalog(index);
        const r = catalog.select();
        expect(sorted(r.tools)).toEqual(sorted(index.tools.keys()));
        expect(r.unknown).toEqual([]);
        expect(r.warnings).toEqual([]);
        expect(sorted(catalog.select({ enabled: null, disabled: null }).tools)).toEqual(sorted(index.tools.keys()));
      });

      it("enabled only: the union of the enabled toolsets", () => {
        const catalog = new ToolsetCatalog(make());
        const r = catalog.select({ enabled: ["web", "mcp-github", "todo_tools"] });
        expect(sorted(r.tools)).toEqual(["mcp_github_search", "todo", "web_extract", "web_search"]);
        expect(catalog.select({ enabled: [] }).tools.size).toBe(0);
        expect(sorted(catalog.resolveMany(["web", "vision"]).tools)).toEqual(["vision_analyze", "web_extract", "web_search"]);
      });

      it("disabled only: every registered tool minus the disabled toolsets", () => {
        const index = make();
        const catalog = new ToolsetCatalog(index);
        const r = catalog.select({ disabled: ["terminal", "mcp-github"] });
        expect(r.tools.has("terminal")).toBe(false);
        expect(r.tools.has("process")).toBe(false);
        expect(r.tools.has("mcp_github_search")).toBe(false);
        expect(r.tools.size).toBe(index.tools.size - 3);
      });

      it("both: enabled minus disabled (unlike the Python original, which ignores disabled)", () => {
        const catalog = new ToolsetCatalog(make());
        const r = catalog.select({ enabled: ["mibyan-cli"], disabled: ["terminal", "code_execution"] });
        expect(r.tools.has("read_file")).toBe(true);
        for (const tool of ["terminal", "process", "execute_code"]) expect(r.tools.has(tool), tool).toBe(false);
        expect(catalog.select({ enabled: ["web"], disabled: ["all"] }).tools.size).toBe(0);
      });

      it("collects unknown names and deduplicated warnings from enabled and disabled", () => {
        const catalog = new ToolsetCatalog(make());
        const r = catalog.select({ enabled: ["web", "webb", "webb"], disabled: ["termnal"] });
        expect(sorted(r.tools)).toEqual(["web_extract", "web_search"]);
        expect(r.unknown).toEqual(["webb", "termnal"]);
        expect(r.warnings).toEqual([
          'Unknown toolset "webb"; did you mean: web, web_tools?',
          'Unknown toolset "termnal"; did you mean: terminal, terminal_tools?',
        ]);
      });

      it("returned sets are the caller's to mutate", () => {
        const catalog = new ToolsetCatalog(make());
        catalog.select().tools.clear();
        catalog.resolve("web").tools.clear();
        catalog.resolve("all").tools.clear();
        catalog.select({ enabled: ["web"] }).tools.clear();
        expect(catalog.select().tools.size).toBeGreaterThan(30);
        expect(catalog.resolve("web").tools.size).toBe(2);
        expect(catalog.resolve("all").tools.size).toBeGreaterThan(30);
        expect(catalog.select({ enabled: ["web"] }).tools.size).toBe(2);
      });

      it("follows index changes between calls", () => {
        const index = make();
        const catalog = new ToolsetCatalog(index);
        expect(catalog.select({ enabled: ["web"] }).tools.has("plugin_fetch")).toBe(false);
        index.add("plugin_fetch", "web");
        expect(catalog.select({ enabled: ["web"] }).tools.has("plugin_fetch")).toBe(true);
        expect(catalog.select().tools.has("plugin_fetch")).toBe(true);
        index.delete("plugin_fetch");
        expect(catalog.select().tools.has("plugin_fetch")).toBe(false);
        expect(catalog.select({ enabled: ["web"] }).tools.has("plugin_fetch")).toBe(false);
      });
    });
  }
});

describe("performance sanity (no timing assertions)", () => {
  const bigIndex = <T extends MemoryIndex>(index: T): T => {
    builtinIndex(index);
    for (let i = 0; i < 1000; i++) index.tools.set(`mcp_tool_${i}`, `mcp-server-${i % 20}`);
    return index;
  };

  it("select over 1,000+ tools stays correct across many calls", () => {
    const index = bigIndex(new MemoryIndex());
    const catalog = new ToolsetCatalog(index);
    const total = index.tools.size;
    for (let i = 0; i < 500; i++) {
      expect(catalog.select().tools.size).toBe(total);
      expect(catalog.select({ disabled: ["mcp-server-3", "terminal"] }).tools.size).toBe(total - 50 - 2);
      expect(catalog.select({ enabled: ["mibyan-cli", "mcp-server-7"] }).tools.has("mcp_tool_7")).toBe(true);
    }
  });

  it("with a generation, repeated selects do not re-read the index", () => {
    const index = bigIndex(new GenerationIndex());
    const catalog = new ToolsetCatalog(index);
    const options = { enabled: ["mibyan-cli", "mcp-server-1"], disabled: ["terminal"] };
    const first = catalog.select(options);
    catalog.select();
    const before = { ...index.calls };
    for (let i = 0; i < 1000; i++) {
      expect(catalog.select(options).tools.size).toBe(first.tools.size);
      catalog.select();
    }
    expect(index.calls).toEqual(before);

    index.add("mcp_tool_new", "mcp-server-1");
    expect(catalog.select(options).tools.size).toBe(first.tools.size + 1);
    expect(index.calls.toolsInToolset).toBeGreaterThan(before.toolsInToolset);
  });

  it("static expansions are cached until define/remove", () => {
    const index = new MemoryIndex();
    const catalog = new ToolsetCatalog(index);
    const a = catalog.resolve("mibyan-cli");
    const b = catalog.resolve("mibyan-cli");
    expect(b.tools).not.toBe(a.tools);
    expect(sorted(b.tools)).toEqual(sorted(a.tools));
    catalog.define(def("core", ["only_core"]));
    expect(catalog.resolve("mibyan-cli").tools.has("only_core")).toBe(true);
    catalog.remove("core");
    expect(catalog.resolve("mibyan-cli").tools.has("only_core")).toBe(false);
  });
});
