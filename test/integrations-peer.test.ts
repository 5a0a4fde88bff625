/**
 * The framework adapters' frameworks are optional peers: the main entry never loads them, and
 * an adapter imported without its framework says what to install. `ai` is installed here as a
 * devDependency, so its absence is staged: its import fails as Node's does for a package that
 * is not there.
 */
import { readFileSync } from "node:fs";

import { describe, expect, it, vi } from "vitest";

import { INTEGRATION_PEER_RANGES, importPeer, peerMissingMessage } from "../src/integrations/peer-import.js";

// vi.mock is hoisted above the imports, so its helper must be too.
const notFound = vi.hoisted(() => (name: string) => () => {
  throw Object.assign(new Error(`Cannot find package '${name}' imported from /x/node_modules/mibyan-tools/dist/integrations/ai-sdk.js`), { code: "ERR_MODULE_NOT_FOUND" });
});
vi.mock("ai", notFound("ai"));
vi.mock("@openai/agents-core", notFound("@openai/agents-core"));
// The LangChain adapter imports subpaths; Node names the package for a missing package's subpath too.
vi.mock("@langchain/core/tools", notFound("@langchain/core"));
vi.mock("@langchain/core/messages", notFound("@langchain/core"));

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  devDependencies: Record<string, string>;
  exports: Record<string, unknown>;
};

describe("framework peers", () => {
  it("are optional peerDependencies with the ranges the messages give, and the tested version is in range", () => {
    for (const [name, range] of Object.entries(INTEGRATION_PEER_RANGES)) {
      expect(pkg.peerDependencies[name], name).toBe(range);
      expect(pkg.peerDependenciesMeta[name]?.optional, name).toBe(true);
      const major = /^\^(\d+)\./.exec(range)![1];
      expect(pkg.devDependencies[name], name).toMatch(new RegExp(`^${major}\\.\\d+\\.\\d+$`));
    }
    expect(pkg.exports["./ai-sdk"]).toEqual({ types: "./dist/ai-sdk.d.ts", import: "./dist/ai-sdk.js" });
    expect(pkg.exports["./openai-agents"]).toEqual({ types: "./dist/openai-agents.d.ts", import: "./dist/openai-agents.js" });
    expect(pkg.exports["./langchain"]).toEqual({ types: "./dist/langchain.d.ts", import: "./dist/langchain.js" });
  });

  it("the main entry loads without `ai`, the Agents SDK or LangChain", async () => {
    const main = await import("../src/index.js");
    expect(typeof main.handleFunctionCall).toBe("function");
  });

  it("mibyan-tools/ai-sdk without `ai` fails with the package and version to install", async () => {
    const error = (await import("../src/ai-sdk.js").catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toBe('install ai@^6 to use mibyan-tools/ai-sdk (npm install "ai@^6.0.0")');
    expect(peerMissingMessage("ai", "mibyan-tools/ai-sdk")).toBe(error.message);
  });

  it("mibyan-tools/openai-agents without the Agents SDK fails with the package and version to install", async () => {
    const error = (await import("../src/openai-agents.js").catch((e: unknown) => e)) as Error;
    expect(error.message).toBe('install @openai/agents-core@^0.20.0 to use mibyan-tools/openai-agents (npm install "@openai/agents-core@^0.20.0")');
  });

  it("mibyan-tools/langchain without @langchain/core fails with the package and version to install", async () => {
    const error = (await import("../src/langchain.js").catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toBe('install @langchain/core@^1 to use mibyan-tools/langchain (npm install "@langchain/core@^1.0.0")');
  });

  it("another failure while loading the framework is not dressed up as a missing package", async () => {
    const broken = new Error("SyntaxError in ai/dist/index.mjs");
    await expect(importPeer("ai", "mibyan-tools/ai-sdk", () => Promise.reject(broken))).rejects.toBe(broken);
    // A package the framework itself needs, missing: Node's own message, which names that package.
    const nested = Object.assign(new Error("Cannot find package '@ai-sdk/provider-utils' imported from /x/node_modules/ai/dist/index.mjs"), { code: "ERR_MODULE_NOT_FOUND" });
    await expect(importPeer("ai", "mibyan-tools/ai-sdk", () => Promise.reject(nested))).rejects.toBe(nested);
  });
});
