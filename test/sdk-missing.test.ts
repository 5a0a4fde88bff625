/**
 * When a cloud backend's SDK cannot be imported, opening a sandbox fails with
 * the same install command the availability check gives (with the range).
 * The SDKs are installed here as devDependencies, so their absence is staged:
 * each import below fails as Node's would for a package that is not there.
 */
import { describe, expect, it, vi } from "vitest";

import { DaytonaTransport } from "../src/environments/daytona-transport.js";
import { openModalSandbox } from "../src/environments/modal-transport.js";
import { sdkInstallCommand } from "../src/environments/sdk-install-hints.js";
import { VercelSandboxTransport } from "../src/environments/vercel-sandbox-transport.js";

// vi.mock is hoisted above the imports, so its helper must be too.
const notFound = vi.hoisted(() => (name: string) => () => {
  throw Object.assign(new Error(`Cannot find package '${name}' imported from mibyan-tools`), { code: "ERR_MODULE_NOT_FOUND" });
});
vi.mock("modal", notFound("modal"));
vi.mock("@daytonaio/sdk", notFound("@daytonaio/sdk"));
vi.mock("@vercel/sandbox", notFound("@vercel/sandbox"));

describe("opening a sandbox without its SDK", () => {
  it("modal", async () => {
    const spec = { appName: "a", image: "debian", timeoutSeconds: 60, blockNetwork: true, tokenId: "ak-1", tokenSecret: "as-1" };
    const error = (await openModalSandbox(spec).catch((e: unknown) => e)) as Error;
    expect(error.message).toContain(`the modal terminal backend needs the "modal" package (${sdkInstallCommand("modal")})`);
    expect(error.message).toContain('npm install "modal@^0.11.1"');
  });

  it("daytona", async () => {
    const error = (await DaytonaTransport.open("t1", { apiKey: "k" }).catch((e: unknown) => e)) as Error;
    expect(error.message).toContain(`install @daytonaio/sdk to use the daytona terminal backend (${sdkInstallCommand("@daytonaio/sdk")})`);
  });

  it("vercel_sandbox", async () => {
    const options = { token: "tok-123456", teamId: "team_1", projectId: "prj_1" };
    const error = (await VercelSandboxTransport.open("t1", options).catch((e: unknown) => e)) as Error;
    expect(error.message).toContain(`install @vercel/sandbox to use the vercel_sandbox terminal backend (${sdkInstallCommand("@vercel/sandbox")})`);
  });
});
