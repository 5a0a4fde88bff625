/**
 * Every config.yaml example of README.md and docs/**.md (each ```yaml block, unless marked
 * `<!-- example: skip (why) -->`) is a file the runtime accepts: loaded with the real loader in a
 * temporary MIBYAN_HOME with no warnings, its toolsets selection checked as `mibyan definitions`
 * checks it (findUnknownToolsets over the registry's catalog), each backend's section parsed by
 * that backend's own *OptionsFromConfig, and terminal.local by the sandbox's parser.
 * docs/config.md once showed `enabled: [web, files]`, which the CLI rejects.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/index.js";
import { ToolRegistry, createMemoryLogger } from "../src/index.js";
import { findUnknownToolsets } from "../src/toolsets/unknown-toolset.js";
import {
  daytonaOptionsFromConfig,
  dockerOptionsFromConfig,
  modalOptionsFromConfig,
  singularityOptionsFromConfig,
  sshOptionsFromConfig,
  vercelSandboxOptionsFromConfig,
} from "../src/backends.js";
import { sandboxPolicyFromSection } from "../src/sandbox/policy.js";
import { allConfigExamples, extractConfigExamples } from "./support/doc-config-examples.js";
import { ROOT } from "./support/cli-run.js";

const BACKEND_PARSERS: Record<string, (section: Record<string, unknown>) => unknown> = {
  docker: dockerOptionsFromConfig,
  ssh: sshOptionsFromConfig,
  singularity: singularityOptionsFromConfig,
  modal: modalOptionsFromConfig,
  daytona: daytonaOptionsFromConfig,
  vercel_sandbox: vercelSandboxOptionsFromConfig,
  local: sandboxPolicyFromSection,
};

const homes: string[] = [];
afterAll(() => {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

/** The problems of one config.yaml text, as the CLI would see them (empty when it is accepted). */
function configProblems(text: string): string[] {
  const home = mkdtempSync(path.join(tmpdir(), "mibyan-doc-config-"));
  homes.push(home);
  writeFileSync(path.join(home, "config.yaml"), text);
  let loaded;
  try {
    loaded = loadConfig({ home, env: {} });
  } catch (err) {
    return [(err as Error).message];
  }
  const problems = [...loaded.warnings];
  const registry = new ToolRegistry({ logger: createMemoryLogger() });
  for (const u of findUnknownToolsets(registry.toolsets, loaded.config.toolsets)) problems.push(`toolsets.${u.list}[${u.index}]: unknown toolset ${JSON.stringify(u.name)}`);
  const terminal = (loaded.document as { terminal?: Record<string, unknown> } | undefined)?.terminal ?? {};
  for (const [backend, parse] of Object.entries(BACKEND_PARSERS)) {
    const section = terminal[backend];
    if (section === undefined || section === null) continue;
    try {
      parse(section as Record<string, unknown>);
    } catch (err) {
      problems.push(`terminal.${backend}: ${(err as Error).message}`);
    }
  }
  return problems;
}

const examples = allConfigExamples(ROOT);

describe("config.yaml examples in the docs", () => {
  it("finds the examples (config.md, approvals.md, sandbox.md, every backend page)", () => {
    const files = new Set(examples.map((e) => e.file));
    for (const file of ["docs/config.md", "docs/approvals.md", "docs/sandbox.md", "docs/backends/docker.md", "docs/backends/ssh.md"]) expect(files).toContain(file);
  });

  it.each(examples.map((e) => [`${e.file}:${e.line}`, e] as const))("%s is accepted", (_where, example) => {
    expect(configProblems(example.text)).toEqual([]);
  });

  it("the checker rejects what the CLI rejects: the old docs/config.md toolsets, a misspelt backend option, a terminal typo", () => {
    expect(configProblems("toolsets:\n  enabled: [web, files]\n")).toEqual(['toolsets.enabled[1]: unknown toolset "files"']);
    expect(configProblems("terminal:\n  docker:\n    netwrok: none\n")[0]).toMatch(/terminal\.docker\.netwrok is not a known option/);
    expect(configProblems("terminal:\n  bakend: docker\n")[0]).toMatch(/unknown key terminal\.bakend; did you mean terminal\.backend\?/);
    expect(configProblems("tools:\n  timeout: 3\n")[0]).toMatch(/unknown key tools\.timeout/);
  });

  it("a block marked skip is not an example", () => {
    const text = "<!-- example: skip (a compose file) -->\n```yaml\nservices: {}\n```\n\n```yml\nterminal: {}\n```\n";
    expect(extractConfigExamples("x.md", text).map((e) => e.line)).toEqual([6]);
  });
});
