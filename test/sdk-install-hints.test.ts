/**
 * The "not installed" messages of the cloud backends install a version the
 * backend supports: the range comes from one constant, and that constant is
 * the package's peerDependencies (`npm install modal` alone would fetch the
 * unrelated package behind modal's `latest` tag).
 */
import { readFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

import { daytonaUnavailableReason } from "../src/environments/daytona.js";
import { modalUnavailableReason } from "../src/environments/modal.js";
import { VENDOR_SDK_RANGES, sdkInstallCommand } from "../src/environments/sdk-install-hints.js";
import { vercelSandboxUnavailableReason } from "../src/environments/vercel-sandbox.js";
import { INTEGRATION_PEER_RANGES } from "../src/integrations/peer-import.js";

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  devDependencies: Record<string, string>;
};
const missing = () => false;

describe("cloud SDK install hints", () => {
  it("the ranges are exactly package.json's peerDependencies, all optional", () => {
    // The framework adapters' peers (src/integrations/peer-import.ts, test/integrations-peer.test.ts) are the rest.
    expect({ ...VENDOR_SDK_RANGES, ...INTEGRATION_PEER_RANGES }).toEqual(pkg.peerDependencies);
    for (const name of Object.keys(VENDOR_SDK_RANGES)) expect(pkg.peerDependenciesMeta[name]?.optional, name).toBe(true);
  });

  it("the version tested here (devDependencies, installed) is the floor of each range", () => {
    for (const [name, range] of Object.entries(VENDOR_SDK_RANGES)) {
      expect(range, name).toMatch(/^\^\d+\.\d+\.\d+$/);
      expect(pkg.devDependencies[name], name).toBe(range.slice(1));
      // Read from node_modules directly: some SDKs do not export their package.json.
      const installed = JSON.parse(readFileSync(new URL(`../node_modules/${name}/package.json`, import.meta.url), "utf8")) as { version: string };
      expect(installed.version, name).toBe(range.slice(1));
    }
  });

  it("each backend's message gives the install command with the range", () => {
    expect(modalUnavailableReason({}, {}, missing)).toBe('the modal terminal backend needs the "modal" package: npm install "modal@^0.11.1"');
    expect(daytonaUnavailableReason({}, missing)).toBe('install @daytonaio/sdk to use the daytona terminal backend (npm install "@daytonaio/sdk@^0.218.0")');
    expect(vercelSandboxUnavailableReason({}, missing)).toBe('install @vercel/sandbox to use the vercel_sandbox terminal backend (npm install "@vercel/sandbox@^3.5.0")');
    for (const name of Object.keys(VENDOR_SDK_RANGES) as (keyof typeof VENDOR_SDK_RANGES)[]) {
      expect(sdkInstallCommand(name)).toBe(`npm install "${name}@${pkg.peerDependencies[name]}"`);
    }
  });

  it("the command is one argument to a real shell: the range reaches npm intact", () => {
    for (const name of Object.keys(VENDOR_SDK_RANGES) as (keyof typeof VENDOR_SDK_RANGES)[]) {
      const command = sdkInstallCommand(name).replace(/^npm install /, "printf '%s\\n' ");
      const out = spawnSync("bash", ["-c", command], { encoding: "utf8" });
      expect(out.stdout).toBe(`${name}@${VENDOR_SDK_RANGES[name]}\n`);
    }
  });

  it("the backend pages give the same command", () => {
    const pages: Record<keyof typeof VENDOR_SDK_RANGES, string> = { modal: "modal.md", "@daytonaio/sdk": "daytona.md", "@vercel/sandbox": "vercel-sandbox.md" };
    for (const [name, page] of Object.entries(pages) as [keyof typeof VENDOR_SDK_RANGES, string][]) {
      const text = readFileSync(new URL(`../docs/backends/${page}`, import.meta.url), "utf8");
      expect(text, page).toContain(`\`${sdkInstallCommand(name)}\``);
    }
  });
});
